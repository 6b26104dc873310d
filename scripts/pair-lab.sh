#!/usr/bin/env bash
# scripts/lab run scripts/pair-lab.sh: ping-pong round trips over ri2n0 (two
# links), over one plain link and over bonding balance-rr (two links, TSO
# off) in the same lab, by turns, so that the host's noise (which swings a
# TCG round trip by tens of percent from one lab to the next, and within
# one over minutes) falls on all alike. The benchmark's targets compare
# runs in different labs; this pairs them round by round.
#
#   n1 eth0, eth1 -- ri2n0 10.0.0.x -- eth0, eth1 n2
#   n1 eth2 ------- one link 10.3.0.x ------- eth2 n2
#   n1 eth3, eth4 -- bond0 10.4.0.x -- eth3, eth4 n2   (PAIR_BOND=0: none)
#
#   PAIR_RATE=100mbit|none PAIR_SIZES="64 4096 16384" PAIR_ROUNDS=5
#   PAIR_SECS=2 PAIR_TSO=on|off (the plain link's; off: MTU frames)
#   PAIR_BULK=10 (also one bulk TCP stream n1 -> n2 of that many seconds
#   per round and path: goodput, and busy CPU-seconds per GB at n1 and n2;
#   PAIR_SIZES="" for bulk alone)
#   PAIR_OUT=FILE: a copy of the rounds and the summary
# Prints each round's mean round trips (µs), then per size the median of
# the rounds' ratios ri2n0 / one link and bond0 / ri2n0 (above 1: ri2n0
# moves the messages faster), and the median of each.
set -u
. "$RI2N_ROOT/tests/lab/lib.sh"
. "$RI2N_ROOT/scripts/paths-lab.sh"
rate=${PAIR_RATE:-100mbit} sizes=${PAIR_SIZES-64 4096 16384} rounds=${PAIR_ROUNDS:-5} secs=${PAIR_SECS:-2}
bond=${PAIR_BOND:-1}
paths_up "$bond" "${PAIR_TSO:-on}"
[ "$rate" = none ] || for n in n1 n2; do for ((l = 0; l < LAB_LINKS; l++)); do link_shape $n $l "$rate"; done; done
for _ in 1 2 3; do
	on n2 pidof ri2n-pingpong >/dev/null 2>&1 && break
	on n2 sh -c 'ri2n-pingpong server >/dev/null 2>&1 &'
	sleep 1
done
on n2 pidof ri2n-pingpong >/dev/null || fail "no ri2n-pingpong server on n2"
on n1 ping -c 3 -q 10.0.0.2 >/dev/null || fail "no ping over ri2n0"
on n1 ping -c 3 -q 10.3.0.2 >/dev/null || fail "no ping over eth2"
[ "$bond" = 0 ] || on n1 ping -c 3 -q 10.4.0.2 >/dev/null || fail "no ping over bond0"
out=$LAB_DIR/pair.txt
rtt() { on n1 ri2n-pingpong client "$1" --sizes "$2:$2" --time "$secs" | awk '!/^#/ && NF {print $3; exit}'; }
busy_ms() { on "$1" awk '/^cpu / {print int(($2 + $3 + $4 + $7 + $8) * 1000 / 100)}' /proc/stat; }
# bulk DST: "Mbit/s tx_s_per_gb rx_s_per_gb" of one stream n1 -> DST.
bulk() {
	local r0 r1 s0 s1 c0 c1 g
	r0=$(on n2 nstat -az IpExtInOctets | awk '$1 == "IpExtInOctets" {print $2}')
	s0=$(busy_ms n1) c0=$(busy_ms n2)
	g=$(goodput n1 "$1" "$PAIR_BULK")
	g=${g:-0}
	s1=$(busy_ms n1) c1=$(busy_ms n2)
	r1=$(on n2 nstat -az IpExtInOctets | awk '$1 == "IpExtInOctets" {print $2}')
	awk -v g="$g" -v s=$((s1 - s0)) -v c=$((c1 - c0)) -v r=$((r1 - r0)) 'BEGIN {b = r / 1e9; printf "%s %.1f %.1f", g, (b > 0 ? s / 1000 / b : 0), (b > 0 ? c / 1000 / b : 0)}'
}
[ -z "${PAIR_BULK:-}" ] || on n2 iperf3 -s -D
# Each round measures the paths in another order (one, ri2n, bond; then
# ri2n, bond, one; ...), so that no path always runs first or last in a
# round; the summary gives each path's median round trip by its place.
paths=(one ri2n)
[ "$bond" = 0 ] || paths+=(bond)
# Read by name below (`a=addr_$p`, "${!a}").
# shellcheck disable=SC2034
addr_one=10.3.0.2 addr_ri2n=10.0.0.2 addr_bond=10.4.0.2
order() {
	local i k=$((($1 - 1) % ${#paths[@]}))
	for ((i = 0; i < ${#paths[@]}; i++)); do echo "${paths[(i + k) % ${#paths[@]}]}"; done
}
for ((r = 1; r <= rounds; r++)); do
	mapfile -t turn < <(order "$r")
	for s in $sizes; do
		one=0 ri2n=0 b=0
		for p in "${turn[@]}"; do
			a=addr_$p v=$(rtt "${!a}" "$s")
			case $p in one) one=$v ;; ri2n) ri2n=$v ;; bond) b=$v ;; esac
		done
		echo "round $r size $s one $one ri2n $ri2n ratio $(awk -v a="$ri2n" -v b="$one" 'BEGIN {printf "%.3f", a / b}') bond $b bond_over_ri2n $(awk -v a="$b" -v b="$ri2n" 'BEGIN {printf "%.3f", a / b}') order ${turn[*]}" | tee -a "$out"
	done
	if [ -n "${PAIR_BULK:-}" ]; then
		bg=0 bt=0 brx=0
		for p in "${turn[@]}"; do
			a=addr_$p
			case $p in
			one) read -r og ot orx < <(bulk "${!a}") ;;
			ri2n) read -r rg rt rrx < <(bulk "${!a}") ;;
			bond) read -r bg bt brx < <(bulk "${!a}") ;;
			esac
		done
		echo "round $r bulk one $og ri2n $rg ratio $(awk -v a="$rg" -v b="$og" 'BEGIN {printf "%.3f", (b > 0 ? a / b : 0)}') cpu_per_gb one $ot $orx ri2n $rt $rrx bond $bg $bt $brx ri2n_over_bond $(awk -v a="$rg" -v b="$bg" 'BEGIN {printf "%.3f", (b > 0 ? a / b : 0)}') order ${turn[*]}" | tee -a "$out"
	fi
done
echo "rate $rate, plain link TSO ${PAIR_TSO:-on}, bonding $([ "$bond" = 1 ] && echo "balance-rr over 2 links, TSO off" || echo none), $rounds rounds of $secs s per size and path" | tee -a "$out.sum"
for s in $sizes; do
	awk -v s="$s" '$4 == s {one[++n] = $6; ri2n[n] = $8; q[n] = $10; b[n] = $12; qb[n] = $14}
		function med(a, n,   i, j, t) {
			for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) {t = a[i]; a[i] = a[j]; a[j] = t}
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		}
		END {
			printf "size %s: median ratio ri2n0 / one link %.3f (one link %.1f us, ri2n0 %.1f us, medians)", s, med(q, n), med(one, n), med(ri2n, n)
			if (med(b, n) > 0) printf "; median ratio bond0 / ri2n0 %.3f (bond0 %.1f us)", med(qb, n), med(b, n)
			printf "\n"
		}' "$out"
done | tee -a "$out.sum"
for s in $sizes; do
	awk -v s="$s" '$4 == s && $15 == "order" {
			for (i = 16; i <= NF; i++) {k = $i SUBSEP (i - 15); v[k, ++c[k]] = ($i == "one" ? $6 : $i == "ri2n" ? $8 : $12)}
		}
		function med(k,   i, j, t, a, n) {
			n = c[k]; for (i = 1; i <= n; i++) a[i] = v[k, i]
			for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) {t = a[i]; a[i] = a[j]; a[j] = t}
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		}
		END {
			printf "size %s by place in the round (median us, rounds):", s
			split("one ri2n bond", p, " ")
			for (i = 1; i <= 3; i++) for (j = 1; j <= 3; j++) if (c[p[i] SUBSEP j]) printf " %s #%d %.1f (%d)", p[i], j, med(p[i] SUBSEP j), c[p[i] SUBSEP j]
			printf "\n"
		}' "$out"
done | tee -a "$out.sum"
[ -z "${PAIR_BULK:-}" ] || awk '$3 == "bulk" {n++; one += $5; ri2n += $7; ot += $12; orx += $13; rt += $15; rrx += $16; b += $18; bt += $19; brx += $20; q[n] = $9; qb[n] = $22}
	function med(a, n,   i, j, t) {
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) {t = a[i]; a[i] = a[j]; a[j] = t}
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	END {
		if (!n) exit
		printf "bulk, means of %d rounds: one link %.1f Mbit/s, ri2n0 %.1f (median of the rounds'"'"' ratios %.3f); busy CPU s/GB sender one %.1f ri2n0 %.1f (%.2f), receiver one %.1f ri2n0 %.1f (%.2f)\n",
			n, one / n, ri2n / n, med(q, n), ot / n, rt / n, (ot ? rt / ot : 0), orx / n, rrx / n, (orx ? rrx / orx : 0)
		if (b > 0) printf "bulk, bonding: bond0 %.1f Mbit/s (ri2n0 / bond0, median of the rounds'"'"' ratios %.3f); busy CPU s/GB sender %.1f, receiver %.1f\n", b / n, med(qb, n), bt / n, brx / n
	}' "$out" | tee -a "$out.sum"
[ -z "${PAIR_OUT:-}" ] || cat "$out" "$out.sum" >"$PAIR_OUT"
finish
