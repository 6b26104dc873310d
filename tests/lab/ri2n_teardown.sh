#!/usr/bin/env bash
# Teardown and locking under load (run under `make check-debug` too, where
# KASAN, lockdep and atomic-sleep checks watch):
# - ri2n0 goes down while its reorder window holds packets;
# - a tc mirred from a slave's egress back into ri2n0 (a transmit loop) is
#   dropped and counted, and the node keeps working;
# - sysfs parameters are written while the module unloads.
set -u
. "$(dirname "$0")/lib.sh"
lab_up 2 2
ri2n_up n1 n2 || fail "ri2n_up"
on n1 ping -c 2 -q 10.0.0.2 >/dev/null
on n2 iperf3 -s -D

# Reordering: eth1 from n1 is 100 ms late and n2 waits up to 500 ms for a
# gap, so n2 holds what eth0 brings early, whatever the kernel's speed.
# Down while held, three times, under a UDP stream.
on n1 sh -c "modprobe -q sch_netem; tc qdisc replace dev eth1 root netem delay 100ms"
# (On n1 too: its probe rounds wait FAST_TOUT for the lagging link.)
for n in n1 n2; do on $n sh -c "echo 500 > /sys/class/net/ri2n0/ri2n/fast_tout"; done
held_max=0
mac1=$(ri2n_mac n1)
for round in 1 2 3; do
	# (A debug kernel takes seconds to start the stream: times scaled.)
	on n1 timeout $((8 * LAB_TIME_SCALE)) iperf3 -u -c 10.0.0.2 -b 50M -l 1400 -t $((3 * LAB_TIME_SCALE)) >/dev/null 2>&1 &
	ip=$!
	sleep "$LAB_TIME_SCALE"
	h=$(on n2 ri2n get ri2n0 peer "$mac1" held)
	((${h:-0} > held_max)) && held_max=$h
	on n2 ip link set ri2n0 down
	sleep 0.3
	on n2 ip link set ri2n0 up
	wait $ip
done
check "packets were held when ri2n0 went down (up to $held_max)" test "$held_max" -gt 0

# n1 goes down while it sends: nothing stays in its links' queues.
on n1 timeout $((6 * LAB_TIME_SCALE)) iperf3 -u -c 10.0.0.2 -b 400M -l 1400 -t $((3 * LAB_TIME_SCALE)) >/dev/null 2>&1 &
ip=$!
sleep "$LAB_TIME_SCALE"
on n1 ip link set ri2n0 down
queued=$(on n1 ethtool -S ri2n0 | awk '/\.queued:/ {s += $2} END {print s + 0}')
check "down under load: no frame left in the links' queues ($queued)" test "$queued" = 0
wait $ip
on n1 ip link set ri2n0 up
on n1 tc qdisc del dev eth1 root
check "ri2n0 down/up with packets held, 3 times: still works" on n1 ping -c 3 -i 0.2 -W 2 -q 10.0.0.2

# A transmit loop: eth0's egress mirrored back into ri2n0.
on n1 sh -c "modprobe -q sch_ingress; modprobe -q cls_matchall; modprobe -q act_mirred
	tc qdisc add dev eth0 clsact
	tc filter add dev eth0 egress matchall action mirred egress mirror dev ri2n0"
on n1 timeout 5 ping -c 10 -i 0.2 -W 1 -q 10.0.0.2 >/dev/null 2>&1
check "with the loop in place, the node answers" on n1 true
loops=$(on n1 ethtool -S ri2n0 | awk '$1 == "tx_loop:" {print $2}')
check "the looped transmits were dropped and counted (tx_loop $loops)" test "${loops:-0}" -gt 0
on n1 tc qdisc del dev eth0 clsact
check "loop removed: n1 -> n2 works" on n1 ping -c 3 -i 0.2 -W 2 -q 10.0.0.2

# Parameters written while the module unloads, three times.
for round in 1 2 3; do
	on n1 sh -c 'i=0; while [ $i -lt 2000 ]; do echo 20 > /sys/class/net/ri2n0/ri2n/fast_tout 2>/dev/null; i=$((i + 1)); done' &
	w=$!
	sleep 0.3
	check "round $round: rmmod while sysfs is written" on n1 rmmod ri2n
	wait $w
	on n1 modprobe ri2n slaves=eth0,eth1
	on n1 ip link set ri2n0 up
done
finish
