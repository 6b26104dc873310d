#!/usr/bin/env bash
# scripts/lab run scripts/hostprof-lab.sh: where a 64 B TCP round trip's
# wall time goes under TCG, over ri2n0 (eth0, eth1), one link (eth2, TSO
# off) and bonding balance-rr (eth3, eth4, TSO off) in one lab, seen from
# the host. perf samples both QEMU processes; QEMU's -perfmap names each
# translated block by the guest address it starts at, so a sample in
# translated code is charged to the guest function it runs, and the rest
# to QEMU's own code (dispatching between blocks, the soft TLB, devices)
# and to the host kernel. Interrupts off in the guest do not move samples,
# as they do for perf inside a TCG guest; times still swing with the host,
# so the paths take turns, round after round, in one lab.
#
#   HOSTPROF_ROUNDS=3 HOSTPROF_SECS=4 (perf's stretch per path and round)
#   HOSTPROF_PATHS="one ri2n bond" HOSTPROF_TOP=30
#   HOSTPROF_INSNS=FILE (a `make insns` report.txt with INSNS_TOP large:
#   then also nanoseconds per guest instruction of the kernel functions
#   every path runs, which says whether the same code runs slower)
#   HOSTPROF_OUT=DIR (the report there, as report.txt)
set -u -o pipefail
. "$RI2N_ROOT/tests/lab/lib.sh"
. "$RI2N_ROOT/scripts/paths-lab.sh"

command -v perf >/dev/null || fail "no perf on the host (scripts/setup-host.sh --bench installs linux-perf)"
secs=${HOSTPROF_SECS:-4}
out=$LAB_DIR/hostprof
mkdir -p "$out"
: >"$out/pids"
: >"$out/runs"
# The map goes with the lab (lab_down).
LAB_QEMU_PERFMAP=1
paths_up 1 off
for n in n1 n2; do
	on $n cat /proc/kallsyms >"$out/$n.kallsyms"
	echo "$(cat "$LAB_DIR/$n.pid") $n" >>"$out/pids"
done
on n2 sh -c 'ri2n-pingpong server >/dev/null 2>&1 &'
sleep 1
for a in 10.0.0.2 10.3.0.2 10.4.0.2; do on n1 ping -c 2 -q $a >/dev/null; done

declare -A addr=([ri2n]=10.0.0.2 [one]=10.3.0.2 [bond]=10.4.0.2)
declare -A taps=([ri2n]="e0 e1" [one]="e2" [bond]="e3 e4")
# frames NODE PATH: frames NODE has sent on PATH's links (its taps' rx).
frames() {
	local t s=0
	for t in ${taps[$2]}; do
		s=$((s + $(ns cat /sys/class/net/$1$t/statistics/rx_packets)))
	done
	echo $s
}
pids=$(cut -d' ' -f1 "$out/pids" | paste -sd,)
period_us=250
for ((r = 1; r <= ${HOSTPROF_ROUNDS:-3}; r++)); do
	for p in ${HOSTPROF_PATHS:-one ri2n bond}; do
		[ -n "${addr[$p]:-}" ] || fail "HOSTPROF_PATHS: one, ri2n or bond, not $p"
		# Started, and its ssh session gone, before perf starts.
		on n1 sh -c "ri2n-pingpong client ${addr[$p]} --sizes 64:64 --time $((secs + 4)) >/tmp/hostprof.out 2>&1 &"
		sleep 2
		# A sample every 250 µs of a thread's CPU time (cpu-clock: a host
		# without a PMU has nothing else, and the period is then exact).
		a1=$(frames n1 $p) a2=$(frames n2 $p)
		perf record -q -e cpu-clock -c $((period_us * 1000)) -p "$pids" -o "$out/$p-$r.data" \
			-- sleep "$secs" 2>"$out/perf.log" || fail "perf record: $(cat "$out/perf.log")"
		b1=$(frames n1 $p) b2=$(frames n2 $p)
		perf script -i "$out/$p-$r.data" -F pid,tid,ip,sym,symoff,dso 2>"$out/perf.log" | gzip >"$out/$p-$r.txt.gz" ||
			fail "perf script: $(cat "$out/perf.log")"
		[ "$(zcat "$out/$p-$r.txt.gz" | head -c 1 | wc -c)" = 1 ] || fail "$p round $r: no samples"
		rm -f "$out/$p-$r.data"
		# Frames counted from just before perf starts to just after it
		# stops: a little more than the sampled stretch.
		rt=$((b1 - a1 < b2 - a2 ? b1 - a1 : b2 - a2))
		((rt > 100)) || fail "$p round $r: $rt round trips"
		echo "$p $r $rt $secs $period_us" >>"$out/runs"
		echo "round $r $p: $rt round trips in $secs s"
		sleep 3
	done
done
nm -D --defined-only "$(command -v qemu-system-x86_64)" >"$out/qemu.syms" 2>/dev/null
[ -s "$out/qemu.syms" ] || pretty WARN "no symbols exported by qemu-system-x86_64: its own samples go unnamed"
python3 "$RI2N_ROOT/scripts/hostprof-report.py" "$out" "${HOSTPROF_TOP:-30}" ${HOSTPROF_INSNS:+"$HOSTPROF_INSNS"} >"$out/report.txt" ||
	fail "hostprof-report.py"
cat "$out/report.txt"
if [ -n "${HOSTPROF_OUT:-}" ]; then
	mkdir -p "$HOSTPROF_OUT"
	cp "$out/report.txt" "$HOSTPROF_OUT/report.txt"
fi
finish
