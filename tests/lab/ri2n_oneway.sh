#!/usr/bin/env bash
# A failure in one direction only: n2's frames on link 1 are lost, n1's
# arrive. n1's detector sees it; its heartbeats tell n2, which stops sending
# on link 1 as well. A transfer n2 -> n1 completes.
set -u
# Times the driver's events from host actions: the guests' clocks.
export LAB_CLOCKS=1
. "$(dirname "$0")/lib.sh"
ri2n_pair 100mbit

transfer_start n2 n1 60
sleep 1
on n2 modprobe sch_netem
measure n2 n1 eth1 peer-failed 20 on n2 tc qdisc replace dev eth1 root netem loss 100%
pretty INFO "one-way loss n2 -> n1 on eth1: n2 stopped sending on it after $WATCHED ms"
# A bound on propagation, not a latency figure (the INFO line has that):
# the time counts from before the ssh and tc that start the loss, and the
# same driver has taken from 0.3 s to 1.2 s by it on a busy host.
check "n2 stopped sending on eth1 within 2 s ($WATCHED ms)" lt "$WATCHED" 2000
check "n1 failed (n2, eth1) by its own detector" test "$(ep_state n1 n2 eth1)" = failed
check "transfer n2 -> n1 completed, checksums equal" transfer_wait 120
# (That n1's retries on eth1, idle, fail none of n2's links is engine.rs's
# a_one_way_fault_left_idle_fails_no_other_link.)
measure n2 n1 eth1 up 20 on n2 tc qdisc del dev eth1 root
check "after the loss ends, n2 uses eth1 again within HBSPAN / 8 + 750 ms ($WATCHED ms)" lt "$WATCHED" 1000

# The peer's news outruns the data still on the link. n1 streams to n2, and
# its frames on eth1 take 5 ms longer (a longer path). When n2's frames on
# eth1 are lost again, n1 fails (n2, eth1), stops sending on it and tells
# n2 on both links: on eth0 the news arrives while 5 ms of n1's data are
# still on eth1. n2 must wait for them, not give them up to the loss rule
# (which then sees them arrive: late_loss, as ri2n_smp counts where a busy
# CPU makes the failure).
on n2 iperf3 -s -D -1
sleep 0.3
on n1 modprobe sch_netem
on n1 tc qdisc replace dev eth1 root netem delay 5ms limit 10000
ll=$(peer_counter n2 n1 late_loss) f2=$(peer_counter n2 n1 fails) l2=$(peer_counter n2 n1 late)
on n1 iperf3 -u -c 10.0.0.2 -b $((20 / LAB_TIME_SCALE))M -l 1400 -t $((6 * LAB_TIME_SCALE)) >/dev/null &
stream=$!
sleep 1
measure n2 n1 eth1 peer-failed 20 on n2 tc qdisc replace dev eth1 root netem loss 100%
pretty INFO "streaming n1 -> n2, one-way loss n2 -> n1 on eth1 again: n2 heard of it after $WATCHED ms"
wait $stream
ll=$(($(peer_counter n2 n1 late_loss) - ll)) f2=$(($(peer_counter n2 n1 fails) - f2)) l2=$(($(peer_counter n2 n1 late) - l2))
check "n2 gave up none of n1's packets still on eth1 when it heard n1 stopped using it (given up then late: $ll; late after FAST_TOUT: $l2; n2's own failures $f2)" \
	test "$ll" = 0 -a "$f2" = 0 || { on n2 sh -c 'cat /proc/net/ri2n/ri2n0; dmesg | grep ri2n0 | tail -12'; echo n1:; on n1 sh -c 'dmesg | grep ri2n0 | tail -12'; } >&2
on n2 tc qdisc del dev eth1 root
on n1 tc qdisc del dev eth1 root
finish
