#!/usr/bin/env bash
# scripts/lab run scripts/insns-lab.sh: the guest instructions a 64 B TCP
# round trip (and a MiB of bulk TCP) costs each node, by kernel function,
# over ri2n0 (eth0, eth1), one link (eth2, TSO off) and bonding balance-rr
# (eth3, eth4, TSO off) in one lab. Every guest runs the QEMU plugin
# tools/insns/insns.c, which counts the instructions of each translated
# block; two snapshots bracket a stretch of traffic that no ssh session
# touches, and the host's tap counters say how much traffic it was. Counts
# of instructions do not swing with the host as times under TCG do, and
# are not charged to whoever re-enables interrupts, as perf's are here.
#
#   INSNS_SECS=4 (the measured stretch of each workload)
#   INSNS_WORK="rr64 bulk"  INSNS_PATHS="ri2n one bond" (rrSIZE: a ping-pong
#   of SIZE-byte messages; rr64's round trips are the frames n1 sent, a
#   larger size's are the calls of tcp_sendmsg at n1, one per message)
#   INSNS_TOP=25 (functions listed per path and node)
#   INSNS_OUT=DIR (the report there, as report.txt; the snapshots, some
#   50 MB, stay in the lab's directory unless INSNS_KEEP=DIR)
set -u
. "$RI2N_ROOT/tests/lab/lib.sh"
. "$RI2N_ROOT/scripts/paths-lab.sh"

secs=${INSNS_SECS:-4}
out=${INSNS_KEEP:-$LAB_DIR/insns}
mkdir -p "$out"
gcc -O2 -Wall -shared -fPIC -fvisibility=hidden -o "$LAB_DIR/insns.so" \
	"$RI2N_ROOT/tools/insns/insns.c" -lpthread || fail "building the plugin"
LAB_QEMU_PLUGIN=$LAB_DIR/insns.so
paths_up 1 off
for n in n1 n2; do
	on $n cat /proc/kallsyms >"$out/$n.kallsyms"
done
on n2 sh -c 'ri2n-pingpong server >/dev/null 2>&1 &'
on n2 sh -c 'iperf3 -s -D >/dev/null 2>&1'
sleep 1
for a in 10.0.0.2 10.3.0.2 10.4.0.2; do on n1 ping -c 2 -q $a >/dev/null; done

# snap NAME: a snapshot of both guests' counts, and the taps' counters.
snap() {
	local n
	for n in n1 n2; do
		echo "$out/$1.$n" >"$LAB_DIR/$n.plugin-ctl"
	done
	for n in n1 n2; do
		local t=0
		while [ -e "$LAB_DIR/$n.plugin-ctl" ]; do
			sleep 0.05
			t=$((t + 1))
			((t < 600)) || fail "$n: the plugin did not answer"
		done
	done
	ns sh -c 'for d in /sys/class/net/n[12]e*; do echo ${d##*/} $(cat $d/statistics/rx_packets) $(cat $d/statistics/rx_bytes); done' >"$out/$1.taps"
}

declare -A addr=([ri2n]=10.0.0.2 [one]=10.3.0.2 [bond]=10.4.0.2)
declare -A taps=([ri2n]="e0 e1" [one]="e2" [bond]="e3 e4")
for w in ${INSNS_WORK:-rr64 bulk}; do
	for p in ${INSNS_PATHS:-ri2n one bond}; do
		a=${addr[$p]}
		# Started, and its ssh session gone, before the first snapshot.
		case $w in
		rr[0-9]*) on n1 sh -c "ri2n-pingpong client $a --sizes ${w#rr}:${w#rr} --time $((secs + 4)) >/tmp/insns.out 2>&1 &" ;;
		bulk) on n1 sh -c "iperf3 -c $a -t $((secs + 4)) >/tmp/insns.out 2>&1 &" ;;
		*) fail "INSNS_WORK: rrSIZE (rr64, rr4096, ...) or bulk, not $w" ;;
		esac
		sleep 2
		snap "$w-$p-a"
		sleep "$secs"
		snap "$w-$p-b"
		sleep 3
		echo "$w $p ${taps[$p]}" >>"$out/runs"
	done
done

python3 "$RI2N_ROOT/scripts/insns-report.py" "$out" "${INSNS_TOP:-25}" | tee "$out/report.txt"
if [ -n "${INSNS_OUT:-}" ]; then
	mkdir -p "$INSNS_OUT"
	cp "$out/report.txt" "$INSNS_OUT/report.txt"
fi
finish
