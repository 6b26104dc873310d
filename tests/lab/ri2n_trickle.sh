#!/usr/bin/env bash
# A healthy link is never failed because the scheduler starved it. Links
# are chosen by bytes (core/sched.rs): after a long frame on one link, the
# next short ones all go to the other until the bytes are level, some
# twenty 100-byte frames after one of 1.4 KB. When those come slowly (the
# tail of a flow, a ping), the receiving detector sees one link deliver
# more than FT_HTHRESH frames while the other stayed silent for SLOW_TOUT,
# and fails it (seen at the end of `make demo`: "nothing received for
# 103 ms", recovered at once by the next heartbeat).
set -u
. "$(dirname "$0")/lib.sh"
lab_up 2 2
ri2n_up n1 n2 || fail "ri2n_up"
# A debug kernel runs everything some 5 times slower: the detector's
# times and the frames' spacing are scaled alike.
s=$LAB_TIME_SCALE
if [ "$s" != 1 ]; then
	for n in n1 n2; do
		on $n sh -c "echo $((100 * s)) > /sys/class/net/ri2n0/ri2n/slow_tout; echo $((20 * s)) > /sys/class/net/ri2n0/ri2n/fast_tout"
	done
fi

# Both peers known, their first heartbeats and probes over, before the
# rounds: a failure seen at a peer's first frames (a new peer, round 1, on
# a slow host: "failed, nothing received for 28 ms", then 108 ms) is not
# this test's subject, and the failures counted are the rounds' own.
on n1 ping -c 3 -i 0.2 -W 2 -q 10.0.0.2 >/dev/null
on n2 ping -c 3 -i 0.2 -W 2 -q 10.0.0.1 >/dev/null
sleep 1
f1=$(peer_counter n1 n2 fails) f2=$(peer_counter n2 n1 fails)
pretty INFO "endpoint failures before the rounds (new peers): n1 $f1, n2 $f2"

# Each round: one long frame each way, then 24 short ones, 10 to 12 ms
# apart in some rounds, 80 or 90 ms in others: the judgement (a counter
# past FT_HTHRESH) then comes some 100 ms after the last frame on the
# starved link, about when a probe would have refreshed it.
for round in 1 2 3 4 5 6 7 8; do
	on n1 ping -c 1 -s 1400 -W 2 -q 10.0.0.2 >/dev/null
	on n1 ping -c 24 -i "$(awk "BEGIN {print $s * 0.0$((8 + round % 5))}")" -s 16 -W 2 -q 10.0.0.2 >/dev/null
done
rx_link() { on $1 ri2n get ri2n0 endpoint "$(ri2n_mac $2)" "$3" rx; }
for n in n1 n2; do
	p=n2
	[ $n = n2 ] && p=n1
	fails=$(($(peer_counter $n $p fails) - $([ $n = n1 ] && echo "$f1" || echo "$f2")))
	check "$n: no endpoint toward $p failed by a trickle after a long frame ($fails failures; frames received eth0 $(rx_link $n $p eth0), eth1 $(rx_link $n $p eth1))" \
		test "$fails" = 0 || on $n sh -c 'dmesg | grep ri2n0 | tail -8' >&2
done
finish
