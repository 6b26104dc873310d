#!/usr/bin/env bash
# A link that delivers but loses frames goes out of use toward the peer,
# is probed, and comes back once its loss ends (beyond the paper, which
# names the failure and leaves it open). Links shaped to 100 Mbit/s.
# What TCP carries meanwhile, against its targets, is a benchmark's:
# scripts/lossy-goodput-lab.sh.
set -u
# Times the driver's events from host actions: the guests' clocks.
export LAB_CLOCKS=1
. "$(dirname "$0")/lib.sh"
# On by default, at 0.5 %.
ri2n_pair 100mbit
on n2 iperf3 -s -D

lossy0=$(peer_counter n1 n2 lossy)
two=$(goodput n1 10.0.0.2 3)
pretty INFO "ri2n over two clean links: $two Mbit/s"
check "clean links under bulk TCP are never taken for lossy" test "$(peer_counter n1 n2 lossy)" = "$lossy0"

# 20 % loss on n1's eth1, both ways, under bulk TCP (up to 15 s for each
# end: the losses are measured on what TCP sends, three samples in a row,
# and TCP over a link that loses a fifth sends little; 3-11 s in the runs
# seen). The transfer outlasts both awaits; it stops once both saw it.
link_netem n1 1 loss 20%
on n1 iperf3 -c 10.0.0.2 -t $((40 * LAB_TIME_SCALE)) >/dev/null &
bulk=$!
eth1_lossy() { [ "$(ep_state "$1" "$2" eth1)" = lossy ]; }
check "n1 took eth1 out of use toward n2 (lossy)" await 15 "eth1 lossy at n1" eth1_lossy n1 n2
# The line shares the stack's log rate limit (net_ratelimit, 10 lines in
# 5 s): failures and recoveries may have spent it first, which the kernel
# says only at its next line, or not yet.
spent() { # the ten lines of a burst within 5 s, the last of them ri2n0's
	on n1 dmesg | awk -F'[][]' '/ri2n0: / {t[n++] = $2} END {exit !(n >= 10 && t[n - 1] - t[n - 10] < 5)}'
}
logged() {
	out_has n1 "link eth1: loses [0-9.]+% of our frames, not sending on it|net_ratelimit: [0-9]+ callbacks suppressed" dmesg || spent
}
[ "$LAB_TIME_SCALE" = 1 ] && { check "  ... and logged it (or the rate limit was spent)" logged ||
	on n1 dmesg | grep ri2n0 >&2; }
check "  ... n2 too, its frames to n1 are lost as well" await 15 "eth1 lossy at n2" eth1_lossy n2 n1
on n1 sh -c 'kill $(pidof iperf3) 2>/dev/null'
wait "$bulk"

# Idle, eth1 still lossy: each side probes it every 5 ms and the other
# answers each, while eth0 brings a heartbeat every HBSPAN. Weighed like
# heartbeats, probes and answers judged the links every 20 ms or so, and
# eth0 failed whenever its last heartbeat was more than SLOW_TOUT old.
f1=$(peer_counter n1 n2 fails) f2=$(peer_counter n2 n1 fails)
sleep $((5 * LAB_TIME_SCALE))
f1=$(($(peer_counter n1 n2 fails) - f1)) f2=$(($(peer_counter n2 n1 fails) - f2))
s1=$(ep_state n1 n2 eth1) s2=$(ep_state n2 n1 eth1)
check "idle with eth1 lossy (probed every 5 ms): no link failed (n1 $f1, n2 $f2; eth1 still $s1, $s2)" \
	test "$f1$f2:$s1:$s2" = 00:lossy:lossy

# eth0, the last usable link, dies beside the lossy eth1 (blackholed, the
# guests keep carrier) while n1 pings n2 every 10 ms. eth1 still delivers
# (loss probes and answers): it witnesses a probe round that asks eth0
# too. Before, only the counters found eth0 dead, in 6-11 s; the ping
# went quiet that long.
ping_start n1 10.0.0.2 20
sleep 1
measure n1 n2 eth0 failed 20 link_blackhole n1 0 on
check "eth0 dead beside the lossy eth1: n1 failed it within 1 s ($WATCHED ms)" lt "$WATCHED" 1000
sleep 1
check "  ... n2 too" test "$(ep_state n2 n1 eth0)" = failed
gap=$(ping_gap n1)
check "  ... the ping carried on over eth1: longest gap between replies $gap ms < 2 s" lt "$gap" 2000
measure n1 n2 eth0 up 20 link_blackhole n1 0 off
check "  ... eth0 back within 1 s of its healing ($WATCHED ms)" lt "$WATCHED" 1000

# The loss ends: back in use (a clean run of probes, about 2 s).
link_netem n1 1 off
eth1_up() { [ "$(ep_state n1 n2 eth1)" = up ]; }
check "loss ended: eth1 back in use" await 10 "eth1 in use again" eth1_up

# 20 % loss on what n1 sends on eth1 alone (n2's cable losing only what it
# receives): n1 takes eth1 out of use toward n2 and says so in its
# heartbeats there (HB_LOSSY). n2, whose frames get through, keeps sending
# on it, counts n1 among the peers that probe it (what its probe_shift
# counts: at 1,024 such peers, unasked, they probed it every 5 ms,
# 205,000 probes a second to answer; ri2n-sim), and takes n1's probes for
# all that comes there.
on n1 sh -c "modprobe -q sch_netem && tc qdisc replace dev eth1 root netem loss 20%"
goodput n1 10.0.0.2 3 >/dev/null
n1mac=$(ri2n_mac n1)
check "loss from n1 alone: n1 took eth1 out of use toward n2" test "$(ep_state n1 n2 eth1)" = lossy
check "  ... n2 did not: it still sends on eth1" test "$(ep_state n2 n1 eth1)" = up
check "  ... n2 knows n1 probes it there (peer_lossy)" test "$(on n2 ri2n get ri2n0 endpoint "$n1mac" eth1 peer_lossy)" = 1
check "  ... and counts n1 among the peers that probe it" test "$(on n2 ri2n get ri2n0 peers probing_peers)" = 1
f2=$(peer_counter n2 n1 fails)
sleep $((3 * LAB_TIME_SCALE))
check "  ... idle for 3 s: n2 failed no link ($(($(peer_counter n2 n1 fails) - f2)))" test "$(peer_counter n2 n1 fails)" = "$f2"
on n1 tc qdisc del dev eth1 root
for _ in $(seq 40); do
	[ "$(on n2 ri2n get ri2n0 endpoint "$n1mac" eth1 peer_lossy)" = 0 ] && break
	sleep 0.5
done
check "loss ended: n1 took eth1 back, and n2 heard it (peer_lossy 0)" test "$(on n2 ri2n get ri2n0 endpoint "$n1mac" eth1 peer_lossy)" = 0
on n1 sh -c 'grep -E "endpoint eth1" /proc/net/ri2n/ri2n0' >&2
finish
