#!/usr/bin/env bash
# Frames our own slave's qdisc drops never reach the wire: the loss
# measurement (heartbeat echoes, core/detector/loss.rs) must not count them as
# lost on the link, or a congested local qdisc would look like a bad cable
# and the link would be taken out of use (lossy). The drainer gives them
# back to their peer's count (`tx_unsent`); in one-switch mode their
# destination is the peer's slave MAC, not its ri2n MAC
# (ri2n_1sw_unsent.sh).
#
# n1's eth1 gets a tbf of 20 Mbit/s with room for three frames; UDP at
# 60 Mbit/s to n2 offers it 30: about a third of its frames are dropped
# in n1's qdisc, none on the wire.
set -u
. "$(dirname "$0")/lib.sh"
lab_up 2 2
ri2n_up n1 n2 || fail "ri2n_up"
# (A debug kernel sends a few Mbit/s, 2.7 on eth1 in 20 s of this (4827
# frames): its tbf is 800 kbit/s (2669 dropped); at 4000, 15 were.)
on n1 sh -c "modprobe -q sch_tbf; tc qdisc add dev eth1 root tbf rate $((20000 / LAB_TIME_SCALE ** 2))kbit burst 16kb limit 4500"
on n2 iperf3 -s -D
check "n1 -> n2 over ri2n0" on n1 ping -c 2 -i 0.2 -W 2 -q 10.0.0.2
sent0=$(on n1 cat /sys/class/net/eth1/statistics/tx_packets)
drops=$(on n1 tc -s qdisc show dev eth1 | awk '/dropped/ {sub(",", "", $7); print $7; exit}')
on n1 iperf3 -u -c 10.0.0.2 -b 60M -l 1400 -t $((4 * LAB_TIME_SCALE)) >/dev/null
drops=$(($(on n1 tc -s qdisc show dev eth1 | awk '/dropped/ {sub(",", "", $7); print $7; exit}') - drops))
sent=$(($(on n1 cat /sys/class/net/eth1/statistics/tx_packets) - sent0))
mac2=$(ri2n_mac n2)
ep() { on n1 ri2n get ri2n0 endpoint "$mac2" eth1 "$1"; }
loss=$(ep loss_bp) lossy=$(ep lossy) state=$(ep state)
pretty INFO "n1's eth1: $sent frames sent, $drops dropped by its qdisc; n1 measures loss ${loss} bp toward n2 there (state $state, lossy $lossy times)"
check "n1's qdisc on eth1 dropped frames ($drops)" test "$drops" -gt 200
check "those drops are not taken for loss on the wire: n1 measures ${loss} bp (< 200) toward n2 on eth1, never lossy ($lossy)" \
	test "$loss" -lt 200 -a "$lossy" = 0
finish
