#!/usr/bin/env bash
# profile-report.sh [DIR]: DIR/README.md (default bench/results/profile)
# from the profile-WORK-CFG-NODE.txt files `make profile` wrote. For each
# workload and node, every configuration's busy CPU per unit of work
# (µs per round trip, or CPU-seconds per GB) split into where it went,
# so that a gap between ri2n and one link or bonding reads as "this much
# more per round trip in NIC notifications, this much in ri2n's own code".
#
# The guests have one vCPU; perf samples it at 1 kHz over the file's
# window (`# window S s`, 9 s in files that predate it). Busy time is
# every sample but the idle loop's. Shares of busy time come from the
# symbol list (the top PROF_TOP symbols) and, for ri2n's module, from
# perf's by-module line, which covers every symbol.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
DIR=${1:-$RI2N_ROOT/bench/results/profile}
ls "$DIR"/profile-*.txt >/dev/null 2>&1 || die "no profiles in $DIR: run make profile first."
OUT=$DIR/README.md

# costs FILE: one line, "work cfg node figure unit total ri2n notify copy
# gro irq other unlisted nic loc netrx timer": the unit's busy cost, its
# split (same unit), then interrupts per round trip or per MB: the NICs',
# the local timer's, NET_RX and TIMER softirqs.
costs() {
	awk -v f="$(basename "$1")" '
	function add(k, v) { part[k] += v }
	NR == 1 {
		# "# WORK over CFG, NODE (role): FIGURE"
		work = $2; cfg = $4; sub(",", "", cfg); node = $5
		if ($0 ~ /round trips/) { n = $(NF - 5); rtt = $(NF - 1); kind = "rr" }
		else { mbit = $(NF - 1); kind = "bulk" }
	}
	/^# window / { window = $3 }
	/^# irq [0-9]+\(/ { nic += $4 }
	/^# irq LOC / { loc = $4 }
	/^# irq NET_RX / { netrx = $4 }
	/^# irq TIMER / { tsirq = $4 }
	/^# busy / { busy = $3; sub("%", "", busy) }
	/^# dso / && /\[ri2n\]/ { p = $3; sub("%", "", p); ri2n_all = p }
	/^ *[0-9.]+%  / {
		p = $1; sub("%", "", p); s = $2; listed += p
		if (s ~ /ri2n/) return_ri2n += p
		else if (s ~ /^(iowrite|ioread|vp_notify|virtqueue_notify)/) add("notify", p)
		else if (s ~ /copy|memcpy|memmove|csum_partial/) add("copy", p)
		else if (s ~ /gro/) add("gro", p)
		else if (s ~ /^(handle_softirqs|finish_task_switch|_raw_spin_unlock_irq|__do_softirq|irq_exit|__sysvec|asm_|net_rx_action|schedule|__schedule)/) add("irq", p)
		else add("other", p)
	}
	END {
		if (window == "") window = 9
		busy_s = busy / 100 * window
		if (kind == "rr") { unit = "us/rtt"; per = n > 0 ? busy_s * 1e6 / n : 0; fig = rtt " us" }
		else { unit = "s/GB"; gb = mbit * (window - 1) / 8000; per = gb > 0 ? busy_s / gb : 0; fig = mbit " Mbit/s" }
		# Symbol shares are of the busy time; the module line is of all samples.
		r = busy > 0 ? 100 * ri2n_all / busy : 0
		printf "%s %s %s %s %s %.1f", work, cfg, node, fig, unit, per
		printf " %.1f", per * r / 100
		k = split("notify copy gro irq other", ks, " ")
		for (i = 1; i <= k; i++) printf " %.1f", per * part[ks[i]] / 100
		un = 100 - listed - (r - return_ri2n); if (un < 0) un = 0
		printf " %.1f", per * un / 100
		# Interrupts per round trip, or per MB.
		u = kind == "rr" ? n : gb * 1000
		if (u > 0) printf " %.2f %.2f %.2f %.2f\n", nic / u, loc / u, netrx / u, tsirq / u
		else print " - - - -"
	}' "$1"
}

{
	echo "# Where the guests' CPU time goes"
	echo
	echo "Made by \`make profile\` (\`scripts/bench-lab.sh\` with BENCH_ONLY=profile, then"
	echo "\`scripts/profile-report.sh\`). Two TCG guests, one vCPU each, unshaped links;"
	echo "\`perf record -a -F 1000\` in both guests while n1 runs the workload:"
	echo "ping-pong of one message size (rrSIZE) or one bulk TCP stream to n2."
	echo
	sed 's/^/    /' "$DIR/meta.txt" 2>/dev/null || true
	echo
	echo "Each row: the run's own figure, then the node's busy CPU time per unit of"
	echo "work (µs per round trip, or CPU-seconds per GB received) and how it splits:"
	echo "ri2n's module (every symbol of it); NIC notifications (\`iowrite16\`: under"
	echo "TCG each virtqueue kick is an exit to the emulator); copies and checksums;"
	echo "GRO; interrupt, softirq and scheduler entry and exit (\`handle_softirqs\`,"
	echo "\`finish_task_switch\`, \`_raw_spin_unlock_irq*\`: where interrupts are"
	echo "re-enabled, the emulator's interrupt delivery is charged); the rest of the"
	echo "listed symbols; and what falls below the list. Then interrupts per round"
	echo "trip (or per MB): the NICs' queues, the local timer, and the NET_RX and"
	echo "TIMER softirqs (\`/proc/interrupts\`, \`/proc/softirqs\` before and after)."
	echo "\"Δ\" rows are ri2n's"
	echo "configurations minus one link with MTU frames (single-1500), per unit."
	echo "The per-symbol lists are in the profile-*.txt files beside this one."
	for work in $(ls "$DIR"/profile-*.txt | sed 's/.*profile-\([^-]*\)-.*/\1/' | sort -u); do
		for node in n1 n2; do
			echo
			echo "## $work, $node ($([ $node = n1 ] && echo sender || echo receiver))"
			echo
			echo "| config | figure | busy per unit | ri2n | notify | copy | GRO | irq/sched | other | unlisted | NIC irqs | timer irqs | NET_RX | TIMER softirqs |"
			echo "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
			base=""
			for f in "$DIR"/profile-"$work"-*-"$node".txt; do
				read -r _ cfg _ fig1 fig2 unit tot ri nt cp gr ir ot un ni lo nr ts < <(costs "$f")
				echo "| $cfg | $fig1 $fig2 | $tot $unit | $ri | $nt | $cp | $gr | $ir | $ot | $un | $ni | $lo | $nr | $ts |"
				[ "$cfg" = single-1500 ] && base="$tot $ri $nt $cp $gr $ir $ot $un"
			done
			[ -n "$base" ] || continue
			for f in "$DIR"/profile-"$work"-ri2n*-"$node".txt; do
				read -r _ cfg _ _ _ unit tot ri nt cp gr ir ot un _ < <(costs "$f")
				awk -v cfg="$cfg" -v unit="$unit" -v a="$tot $ri $nt $cp $gr $ir $ot $un" -v b="$base" 'BEGIN {
					split(a, x, " "); split(b, y, " ")
					printf "| Δ %s − single-1500 | | %+.1f %s |", cfg, x[1] - y[1], unit
					for (i = 2; i <= 8; i++) printf " %+.1f |", x[i] - y[i]
					print ""
				}'
			done
		done
	done
} >"$OUT"
log "wrote $OUT"
