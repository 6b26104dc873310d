#!/usr/bin/env bash
# scripts/lab run scripts/rx-lock-lab.sh: what receive costs the device's
# state lock ("no global lock on the data path": receive still
# takes it once per frame, `State::rx_frame`). n1 has 2 vCPUs; n2 and n3
# each send it UDP over ri2n0 (20 Mbit/s, 1400 B, 3 s) at once. Printed
# for n1: frames received, rounds of the state lock and how many found it
# held by the other CPU (`lock_rounds`, `lock_contended`: receive, the
# timers and transmit's rare rounds together), and NET_RX softirqs per
# CPU; twice: with the NICs' interrupts where the kernel put them, then
# with eth0's on CPU 0 and eth1's on CPU 1.
#
# The slaves' RSS cannot spread ri2n frames: ethertype 0x1004 is no IP, so
# a multiqueue NIC hashes every one of them to one queue, and RPS finds no
# flow in them either. Receive runs on the CPU of each NIC's interrupt,
# and a peer striped over two NICs reaches two CPUs whatever lock guards
# its window.
set -u
. "$RI2N_ROOT/tests/lab/lib.sh"
LAB_SMP=2 lab_up 3 2
ri2n_up n1 n2 n3 || fail "ri2n_up"
for n in n2 n3; do on $n ping -c 2 -i 0.2 -W 2 -q 10.0.0.1 >/dev/null; done
on n1 sh -c 'iperf3 -s -D -p 5201; iperf3 -s -D -p 5202'
sleep 0.5
counter() { proc_counter n1 "$1"; }
netrx() { on n1 awk '/NET_RX/ {print $2, $3}' /proc/softirqs; }
irqs() { on n1 awk -v d="$1" '$0 ~ d"-input" {sub(":", "", $1); print $1}' /proc/interrupts; }
round() {
	local what=$1 p0 r0 c0 s0 p r c s other
	p0=$(counter rx_packets) r0=$(counter lock_rounds) c0=$(counter lock_contended) s0=$(netrx)
	on n2 iperf3 -u -c 10.0.0.1 -p 5201 -b 20M -l 1400 -t 3 >/dev/null &
	other=$!
	on n3 iperf3 -u -c 10.0.0.1 -p 5202 -b 20M -l 1400 -t 3 >/dev/null
	wait "$other"
	p=$(($(counter rx_packets) - p0)) r=$(($(counter lock_rounds) - r0)) c=$(($(counter lock_contended) - c0)) s=$(netrx)
	set -- $s0 $s
	pretty INFO "$what: n1 received $p frames; state lock: $r rounds ($(awk -v a=$r -v b=$p 'BEGIN {printf "%.2f", b ? a / b : 0}') per frame), $c contended ($(awk -v a=$c -v b=$p 'BEGIN {printf "%.2f", b ? 100 * a / b : 0}') % of the frames); NET_RX softirqs CPU0 $(($3 - $1)), CPU1 $(($4 - $2))"
}
round "interrupts as the kernel put them"
for i in $(irqs virtio0); do on n1 sh -c "echo 1 > /proc/irq/$i/smp_affinity"; done
for i in $(irqs virtio1); do on n1 sh -c "echo 2 > /proc/irq/$i/smp_affinity"; done
round "eth0 on CPU 0, eth1 on CPU 1"
round "eth0 on CPU 0, eth1 on CPU 1 (again)"
finish
