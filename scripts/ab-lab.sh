#!/usr/bin/env bash
# scripts/lab run scripts/ab-lab.sh: ping-pong round trips of two ri2n
# modules in one lab, loaded in turn, so that the host's noise (which swings
# a TCG round trip by tens of percent from one lab to the next) falls on
# both alike. AB_OLD: the other module (a ri2n.ko built from an older
# commit, e.g. in a `git worktree`); the lab's own build is "new".
#   AB_OLD=/tmp/old/ri2n.ko AB_RATE=100mbit AB_SIZES="64 4096 16384"
#   AB_ROUNDS=3 AB_SECS=3 AB_PARAMS="tx_gso=1" AB_LINKS=2 (links per node)
#   AB_BULK=8 (also one bulk TCP stream n1 -> n2 of that many seconds per
#   round: goodput in Mbit/s, n2's segments sent per MiB received (its
#   ACKs), and busy CPU-seconds per GB at n1 and n2; AB_SIZES="" for bulk
#   alone)
# Prints one line per round and module, round trips in µs and each size's
# busy CPU per round trip summed over both nodes (/proc/stat, µs; under
# TCG it swings with the host as the round trip does), then the means.
set -u
. "$RI2N_ROOT/tests/lab/lib.sh"
[ -f "${AB_OLD:-}" ] || fail "AB_OLD: path of the other ri2n.ko"
rate=${AB_RATE:-100mbit} sizes=${AB_SIZES-64 4096 16384} rounds=${AB_ROUNDS:-3} secs=${AB_SECS:-3}
links=${AB_LINKS:-2}
slaves=$(seq -s, -f 'eth%g' 0 $((links - 1)))
lab_up 2 "$links"
[ "$rate" = none ] || for n in n1 n2; do for ((l = 0; l < links; l++)); do link_shape $n $l "$rate"; done; done
for n in n1 n2; do on $n sh -c 'cat > /tmp/old.ko' <"$AB_OLD"; done
up() { # old|new
	local n
	for n in n1 n2; do
		# shellcheck disable=SC2086
		if [ "$1" = old ]; then
			on $n insmod /tmp/old.ko slaves=$slaves ${AB_PARAMS:-}
		else
			on $n modprobe ri2n slaves=$slaves ${AB_PARAMS:-}
		fi
		on $n ip link set ri2n0 up
		on $n ip addr add 10.0.0.${n#n}/24 dev ri2n0
	done
	on n2 sh -c 'ri2n-pingpong server >/dev/null 2>&1 &'
	[ -z "${AB_BULK:-}" ] || on n2 iperf3 -s -D
	sleep 1
	on n1 ping -c 3 -q 10.0.0.2 >/dev/null || fail "$1: no ping"
}
down() {
	local n
	on n2 sh -c 'kill $(pidof ri2n-pingpong) $(pidof iperf3) 2>/dev/null'
	for n in n1 n2; do on $n ip link del ri2n0; on $n rmmod ri2n; done
}
# busy_ms NODE: the node's busy CPU time so far (user, system, irq,
# softirq), ms; /proc/stat counts USER_HZ ticks, 100 a second.
busy_ms() {
	on "$1" awk '/^cpu / {print int(($2 + $3 + $4 + $7 + $8) * 1000 / 100)}' /proc/stat
}
# local_bulk: appends the bulk figures of this round to $line: goodput,
# the receiver's ACKs per MiB, and each node's busy CPU-seconds per GB
# received (the window includes iperf3's start and end).
local_bulk() {
	local o0 r0 o1 r1 g s0 s1 c0 c1
	read -r o0 r0 < <(on n2 nstat -az TcpOutSegs IpExtInOctets | awk '{v[$1] = $2} END {print v["TcpOutSegs"], v["IpExtInOctets"]}')
	s0=$(busy_ms n1) c0=$(busy_ms n2)
	g=$(goodput n1 10.0.0.2 "$AB_BULK")
	g=${g:-0}
	s1=$(busy_ms n1) c1=$(busy_ms n2)
	read -r o1 r1 < <(on n2 nstat -az TcpOutSegs IpExtInOctets | awk '{v[$1] = $2} END {print v["TcpOutSegs"], v["IpExtInOctets"]}')
	line+=" bulk_mbit $g acks_per_mib $(awk -v o=$((o1 - o0)) -v r=$((r1 - r0)) 'BEGIN {printf "%.1f", (r > 0 ? o / (r / 1048576) : 0)}')"
	line+=" $(awk -v s=$((s1 - s0)) -v c=$((c1 - c0)) -v r=$((r1 - r0)) 'BEGIN {g = r / 1e9; printf "tx_s_per_gb %.1f rx_s_per_gb %.1f", (g > 0 ? s / 1000 / g : 0), (g > 0 ? c / 1000 / g : 0)}')"
}
out=$LAB_DIR/ab.txt
for ((r = 1; r <= rounds; r++)); do
	# Old first in odd rounds, new first in even ones: the second module
	# of a round may fare worse for being second (a lab's order effect).
	order="old new"
	((r % 2)) || order="new old"
	for v in $order; do
		up $v
		line="round $r $v"
		for s in $sizes; do
			b0=$(( $(busy_ms n1) + $(busy_ms n2) ))
			read -r trips rtt < <(on n1 ri2n-pingpong client 10.0.0.2 --sizes "$s:$s" --time "$secs" | awk '!/^#/ && NF {print $2, $3; exit}')
			b1=$(( $(busy_ms n1) + $(busy_ms n2) ))
			line+=" ${s}B $rtt cpu${s} $(awk -v b=$((b1 - b0)) -v t="$trips" 'BEGIN {printf "%.1f", (t > 0 ? b * 1000 / t : 0)}')"
		done
		if [ -n "${AB_BULK:-}" ]; then
			local_bulk
		fi
		echo "$line" | tee -a "$out"
		down
	done
done
# The median over the rounds of each figure's ratio new / old.
awk '{k = $2; for (i = 4; i <= NF; i += 2) {f[i] = $i; x[k, $3, i] = $(i + 1)}; r[k] = 1}
	END {printf "median new/old:"; for (i = 4; i in f; i += 2) {n = 0; for (k in r) if (x[k, "old", i] > 0) q[++n] = x[k, "new", i] / x[k, "old", i];
		asort(q); m = n % 2 ? q[(n + 1) / 2] : (q[n / 2] + q[n / 2 + 1]) / 2; printf " %s %.3f", f[i], m; delete q}; print ""}' "$out"
for v in old new; do
	awk -v v=$v '$3 == v {for (i = 4; i <= NF; i += 2) {k[i] = $i; s[i] += $(i + 1); n[i]++}}
		END {printf "mean %s rtt_us:", v; for (i = 4; i in k; i += 2) printf " %s %.0f", k[i], s[i] / n[i]; print ""}' "$out"
done
finish
