#!/usr/bin/env bash
# Each link carries a peer's frames in sequence order whatever the slave's
# qdisc or queue count, so the loss rule ("all NICs passed") never gives
# up a number still on its way: late_loss stays 0 with
#   1. fq_codel under a rate limit (many distributions' default qdisc),
#      which lets one inner flow overtake another;
#   2. pfifo_fast with a TOS-marked flow beside the bulk one (its bands);
#   3. a multiqueue virtio slave (4 queues, 2 vCPUs: XPS and flow hash).
# Each time TCP and UDP bulk n1 -> n2 run with a TOS-marked ping beside.
set -u
. "$(dirname "$0")/lib.sh"

# run_case NAME: a 10 MiB TCP transfer n1 -> n2, then 2 s of UDP at
# 90 Mbit/s (more than the two links carry: no TCP small-queue limit, so
# the slaves' qdiscs hold a standing queue), each with a TOS-marked ping
# flood beside it; then n2's late_loss for n1.
run_case() {
	local name=$1 ll
	on n2 sh -c "kill \$(pidof iperf3) 2>/dev/null; iperf3 -s -D"
	on n1 ping -c 2 -q 10.0.0.2 >/dev/null
	transfer_start n1 n2 10
	on n1 sh -c "ping -c 300 -i 0.01 -Q 0x10 -q 10.0.0.2 >/dev/null 2>&1" &
	local pinger=$!
	check "$name: 10 MiB transfer intact" transfer_wait 120
	wait $pinger
	on n1 sh -c "ping -c 200 -i 0.01 -Q 0x10 -s 1000 -q 10.0.0.2 >/dev/null 2>&1" &
	pinger=$!
	on n1 iperf3 -u -c 10.0.0.2 -b 90M -l 1400 -t 2 >/dev/null 2>&1
	wait $pinger
	ll=$(peer_counter n2 n1 late_loss)
	pretty INFO "$name: late_loss $ll, late $(peer_counter n2 n1 late), loss releases $(peer_counter n2 n1 loss)"
	check "$name: late_loss 0 ($ll)" test "$ll" = 0
	on n1 tc -s qdisc show dev eth0 | grep -E "^qdisc|Sent" | head -4 >&2
}

# Slave qdisc on both nodes' slaves, under a 30 Mbit/s rate limit (well
# below what TCP offers, so that the qdisc holds a standing queue).
slave_qdisc() { # KIND
	local n l
	for n in n1 n2; do for l in 0 1; do
		on $n sh -c "modprobe -q sch_tbf; tc qdisc del dev eth$l root 2>/dev/null
			tc qdisc add dev eth$l root handle 1: tbf rate 30mbit burst 64kb latency 100ms
			tc qdisc add dev eth$l parent 1:1 handle 10: $1"
	done; done
}

# Cases 1 and 2 here, case 3 with QDISC_MQ=1 (ri2n_qdisc_mq.sh): each on
# the lab other tests share.
if [ "${QDISC_MQ:-0}" = 0 ]; then
	lab_up 2 2
	ri2n_up n1 n2 || fail "ri2n_up"
	slave_qdisc fq_codel
	run_case "fq_codel under tbf"
	slave_qdisc pfifo_fast
	run_case "pfifo_fast bands, TOS-marked ping"
else
	LAB_QUEUES=4 LAB_SMP=2 lab_up 2 2
	for n in n1 n2; do for l in 0 1; do on $n ethtool -L eth$l combined 4; done; done
	ri2n_up n1 n2 || fail "ri2n_up"
	check "the slaves have 4 transmit queues" test "$(on n1 ls /sys/class/net/eth0/queues | grep -c tx-)" = 4
	run_case "multiqueue virtio, 2 vCPUs"
fi
finish
