#!/usr/bin/env bash
# scripts/lab run scripts/ab-lab.sh: ping-pong round trips of two ri2n
# modules in one lab, loaded in turn, so that the host's noise (which swings
# a TCG round trip by tens of percent from one lab to the next) falls on
# both alike. AB_OLD: the other module (a ri2n.ko built from an older
# commit, e.g. in a `git worktree`); the lab's own build is "new".
#   AB_OLD=/tmp/old/ri2n.ko AB_RATE=100mbit AB_SIZES="64 4096 16384"
#   AB_ROUNDS=3 AB_SECS=3 AB_PARAMS="tx_gso=1"
# Prints one line per round and module, round trips in µs, then the means.
set -u
. "$RI2N_ROOT/tests/lab/lib.sh"
[ -f "${AB_OLD:-}" ] || fail "AB_OLD: path of the other ri2n.ko"
rate=${AB_RATE:-100mbit} sizes=${AB_SIZES:-64 4096 16384} rounds=${AB_ROUNDS:-3} secs=${AB_SECS:-3}
lab_up 2 2
[ "$rate" = none ] || for n in n1 n2; do for l in 0 1; do link_shape $n $l "$rate"; done; done
for n in n1 n2; do on $n sh -c 'cat > /tmp/old.ko' <"$AB_OLD"; done
up() { # old|new
	local n
	for n in n1 n2; do
		# shellcheck disable=SC2086
		if [ "$1" = old ]; then
			on $n insmod /tmp/old.ko slaves=eth0,eth1 ${AB_PARAMS:-}
		else
			on $n modprobe ri2n slaves=eth0,eth1 ${AB_PARAMS:-}
		fi
		on $n ip link set ri2n0 up
		on $n ip addr add 10.0.0.${n#n}/24 dev ri2n0
	done
	on n2 sh -c 'ri2n-pingpong server >/dev/null 2>&1 &'
	sleep 1
	on n1 ping -c 3 -q 10.0.0.2 >/dev/null || fail "$1: no ping"
}
down() {
	local n
	on n2 sh -c 'kill $(pidof ri2n-pingpong)'
	for n in n1 n2; do on $n ip link del ri2n0; on $n rmmod ri2n; done
}
out=$LAB_DIR/ab.txt
for ((r = 1; r <= rounds; r++)); do
	for v in old new; do
		up $v
		line="round $r $v"
		for s in $sizes; do
			line+=" ${s}B $(on n1 ri2n-pingpong client 10.0.0.2 --sizes "$s:$s" --time "$secs" | awk '!/^#/ && NF {print $3; exit}')"
		done
		echo "$line" | tee -a "$out"
		down
	done
done
for v in old new; do
	awk -v v=$v '$3 == v {for (i = 4; i <= NF; i += 2) {k[i] = $i; s[i] += $(i + 1); n[i]++}}
		END {printf "mean %s rtt_us:", v; for (i = 4; i in k; i += 2) printf " %s %.0f", k[i], s[i] / n[i]; print ""}' "$out"
done
finish
