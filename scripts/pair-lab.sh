#!/usr/bin/env bash
# scripts/lab run scripts/pair-lab.sh: ping-pong round trips over ri2n0 (two
# links) and over one plain link in the same lab, by turns, so that the
# host's noise (which swings a TCG round trip by tens of percent from one
# lab to the next, and within one over minutes) falls on both alike. The
# benchmark's "64 B round trip <= one link + 5 %" compares runs in
# different labs; this pairs them round by round.
#
#   n1 eth0, eth1 -- ri2n0 10.0.0.x -- eth0, eth1 n2
#   n1 eth2 ------- one link 10.3.0.x ------- eth2 n2
#
#   PAIR_RATE=100mbit|none PAIR_SIZES="64 4096 16384" PAIR_ROUNDS=5
#   PAIR_SECS=2 PAIR_TSO=on|off (the plain link's; off: MTU frames)
# Prints each round's mean round trips (µs), then per size the median of
# the rounds' ratios ri2n0 / one link, and the median of each.
set -u
. "$RI2N_ROOT/tests/lab/lib.sh"
rate=${PAIR_RATE:-100mbit} sizes=${PAIR_SIZES:-64 4096 16384} rounds=${PAIR_ROUNDS:-5} secs=${PAIR_SECS:-2}
lab_up 2 3
for n in n1 n2; do
	on $n modprobe ri2n slaves=eth0,eth1 ${RI2N_PARAMS:-}
	on $n ip link set ri2n0 up
	on $n ip addr add 10.0.0.${n#n}/24 dev ri2n0
	on $n ip addr add 10.3.0.${n#n}/24 dev eth2
	on $n ethtool -K eth2 tso "${PAIR_TSO:-on}" >/dev/null 2>&1 || true
done
[ "$rate" = none ] || for n in n1 n2; do for l in 0 1 2; do link_shape $n $l "$rate"; done; done
for try in 1 2 3; do
	on n2 pidof ri2n-pingpong >/dev/null 2>&1 && break
	on n2 sh -c 'ri2n-pingpong server >/dev/null 2>&1 &'
	sleep 1
done
on n2 pidof ri2n-pingpong >/dev/null || fail "no ri2n-pingpong server on n2"
on n1 ping -c 3 -q 10.0.0.2 >/dev/null || fail "no ping over ri2n0"
on n1 ping -c 3 -q 10.3.0.2 >/dev/null || fail "no ping over eth2"
out=$LAB_DIR/pair.txt
rtt() { on n1 ri2n-pingpong client "$1" --sizes "$2:$2" --time "$secs" | awk '!/^#/ && NF {print $3; exit}'; }
for ((r = 1; r <= rounds; r++)); do
	for s in $sizes; do
		one=$(rtt 10.3.0.2 "$s") ri2n=$(rtt 10.0.0.2 "$s")
		echo "round $r size $s one $one ri2n $ri2n ratio $(awk -v a="$ri2n" -v b="$one" 'BEGIN {printf "%.3f", a / b}')" | tee -a "$out"
	done
done
echo "rate $rate, plain link TSO ${PAIR_TSO:-on}, $rounds rounds of $secs s per size and path"
for s in $sizes; do
	awk -v s="$s" '$4 == s {one[++n] = $6; ri2n[n] = $8; q[n] = $10}
		function med(a, n,   i, j, t) {
			for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) {t = a[i]; a[i] = a[j]; a[j] = t}
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		}
		END {printf "size %s: median ratio ri2n0 / one link %.3f (one link %.1f us, ri2n0 %.1f us, medians)\n", s, med(q, n), med(one, n), med(ri2n, n)}' "$out"
done
finish
