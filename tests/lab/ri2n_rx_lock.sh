#!/usr/bin/env bash
# Receive without the device's state lock ("no global lock on
# the data path"): n1 has 2 vCPUs, eth0's interrupts on CPU 0 and eth1's
# on CPU 1, so that each peer's frames reach both CPUs. n2 and n3 each
# send n1 UDP over ri2n0 at once (20 Mbit/s, 1400 B, 3 s). Checked: an
# in-order data frame from a known peer takes only that peer's lock, so
# n1 takes the state lock a small fraction of a round per frame received
# (`lock_rounds`: receive's, the timers' and transmit's rounds together;
# one or more per frame when receive took it for every frame), and both
# streams arrive whole; then the same with a key, sealed frames. Reported:
# how often the state lock was found held.
#
# The slaves' RSS cannot spread ri2n frames (ethertype 0x1004 is no IP), so
# the interrupts are placed by hand: receive runs on the CPU of each NIC's.
# A debug kernel (lockdep) receives some 5 times slower: the streams run
# at a fifth of the rate for five times as long, and the rounds, then the
# timers' mostly, are reported, not checked.
set -u
. "$(dirname "$0")/lib.sh"
LAB_SMP=2 lab_up 3 2
ri2n_up n1 n2 n3 || fail "ri2n_up"
check "n1 has 2 CPUs" test "$(on n1 nproc)" = 2
for n in n2 n3; do
	check "$n -> n1 over ri2n0" on $n ping -c 2 -i 0.2 -W 2 -q 10.0.0.1
done
irqs() { on n1 awk -v d="$1" '$0 ~ d"-input" {sub(":", "", $1); print $1}' /proc/interrupts; }
for i in $(irqs virtio0); do on n1 sh -c "echo 1 > /proc/irq/$i/smp_affinity"; done
for i in $(irqs virtio1); do on n1 sh -c "echo 2 > /proc/irq/$i/smp_affinity"; done
netrx() { on n1 awk '/NET_RX/ {print $2, $3}' /proc/softirqs; }
counter() { proc_counter n1 "$1"; }
on n1 sh -c 'iperf3 -s -D -p 5202; iperf3 -s -D -p 5203'
sleep 0.5
secs=$((3 * LAB_TIME_SCALE)) rate=$((20 / LAB_TIME_SCALE))M
# Datagrams n1's sockets had no room for (its vCPUs starved on a busy
# host or a debug kernel) are not ri2n's.
rcvbuf() { udp_rcvbuf_errors n1; }
# streams LABEL: both streams once, checked.
streams() {
	local what=$1 b0 p0 r0 c0 s0 other got rounds contended full all=0 lost=0 n j pk l
	b0=$(rcvbuf)
	p0=$(counter rx_packets) r0=$(counter lock_rounds) c0=$(counter lock_contended) s0=$(netrx)
	on n2 iperf3 -u -c 10.0.0.1 -p 5202 -b $rate -l 1400 -t $secs -J >"$LAB_DIR/from2.json" &
	other=$!
	on n3 iperf3 -u -c 10.0.0.1 -p 5203 -b $rate -l 1400 -t $secs -J >"$LAB_DIR/from3.json"
	wait "$other"
	got=$(($(counter rx_packets) - p0)) rounds=$(($(counter lock_rounds) - r0)) contended=$(($(counter lock_contended) - c0))
	# Two counts each, CPU0's and CPU1's, into $1..$4.
	# shellcheck disable=SC2046,SC2086
	set -- $s0 $(netrx)
	pretty INFO "$what: n1 received $got frames over NET_RX softirqs CPU0 $(($3 - $1)), CPU1 $(($4 - $2)); state lock: $rounds rounds, $contended found held"
	full=$(($(rcvbuf) - b0))
	for n in n2 n3; do
		j=$(cat "$LAB_DIR/from${n#n}.json")
		pk=$(echo "$j" | awk -F'[:,]' '/"packets"/ {v = $2} END {print v + 0}')
		l=$(echo "$j" | awk -F'[:,]' '/"lost_packets"/ {v = $2} END {print v + 0}')
		check "$what: $n -> n1: $pk datagrams ($l lost)" test "$pk" -gt $((1000 / LAB_TIME_SCALE))
		all=$((all + pk)) lost=$((lost + l))
	done
	lost=$((lost > full ? lost - full : 0))
	check "$what: both streams: $lost of $all datagrams lost (<= 1 %; $full more n1's sockets had no room for)" \
		test $((lost * 100)) -le "$all" || on n1 cat /proc/net/ri2n/ri2n0 >&2
	check "$what: both NICs' softirqs ran on their own CPU ($(($3 - $1)) and $(($4 - $2)))" test $(($3 - $1)) -gt 0 -a $(($4 - $2)) -gt 0
	if [ "$LAB_TIME_SCALE" = 1 ]; then
		check "$what: n1: at most 0.25 rounds of the state lock per frame received ($rounds for $got)" \
			test "$got" -gt 0 -a $((rounds * 4)) -le "$got"
	else
		pretty INFO "$what: n1: $rounds rounds of the state lock for $got frames (debug kernel: not checked)"
	fi
}
streams "no key"

# Sealed frames the same way: their tags are checked with the keys the
# offload reads under RCU, and a frame that is not the peer's epoch, or
# that the window would not take, goes the locked way (the replay rules).
for n in n1 n2 n3; do
	on $n sh -c "echo 000102030405060708090a0b0c0d0e0f > /sys/class/net/ri2n0/ri2n/key" || fail "key on $n"
done
sleep 0.5
for n in n2 n3; do
	check "with a key: $n -> n1 over ri2n0" on $n ping -c 2 -i 0.2 -W 2 -q 10.0.0.1
done
fails=$(counter rx_auth_fail) replays=$(counter rx_replays)
streams "with a key"
check "with a key: no frame refused (tag failures $(($(counter rx_auth_fail) - fails)), replays $(($(counter rx_replays) - replays)))" \
	test "$(counter rx_auth_fail)" = "$fails" -a "$(counter rx_replays)" = "$replays"
finish
