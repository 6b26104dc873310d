#!/usr/bin/env bash
# bench-report.sh [RAW_DIR]: bench/results/README.md and its plots from the
# raw results scripts/bench-lab.sh wrote (default bench/results/raw). Every
# target of the benchmark is printed next to the figure measured for it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
RAW=${1:-$RI2N_ROOT/bench/results/raw}
OUT=$(dirname "$RAW")
MD=$OUT/README.md
[ -f "$RAW/meta.txt" ] || die "no raw results in $RAW: run make bench first."
meta() { awk -v k="$1" '$1 == k {sub(/^[^ ]+ /, ""); print}' "$RAW/meta.txt"; }
RATE=$(meta rate)

# --- numbers ---------------------------------------------------------------

# bulk_col CFG LINKS RATE STREAMS COL: one column of bulk.tsv.
bulk_col() { awk -F'\t' -v c="$1" -v l="$2" -v r="$3" -v s="$4" -v k="$5" '$1 == c && $2 == l && $3 == r && $4 == s {print $k}' "$RAW/bulk.tsv" 2>/dev/null; }
mbit() { bulk_col "$@" 5 | awk '{printf "%.1f", $1 / 1e6}'; }
# dsacks CONFIG LINKS RATE STREAMS: "DSACKS PROBES EXCESS": DSACKs received,
# tail loss probes sent, and the DSACKs that no probe explains (a probe
# resends the last segment; when it was not lost, one DSACK comes back,
# over one link as well). Raw files before the probes were counted give "-".
dsacks() {
	bulk_col "$@" 9 | head -1 | awk -v p="$(bulk_col "$@" 14 | head -1)" '{if (p == "") print $1, "-", $1; else print $1, p, ($1 > p ? $1 - p : 0)}'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a == "" || b == "" || b + 0 == 0) print "n/a"; else printf "%.2f", a / b}'; }
# verdict OK: "met" or "missed"
verdict() { [ "$1" = 1 ] && echo met || echo "**missed**"; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN {exit !(a != "n/a" && b != "n/a" && a + 0 >= b + 0)}' && echo 1 || echo 0; }

pp() { echo "$RAW/pingpong-$1-$2.txt"; }
# wv FILE KEY: a value from a failover .watch file ("?" if none).
wv() { awk -v k="$2" '$1 == k {v = $2} END {print (v == "" ? "?" : v)}' "$1" 2>/dev/null || echo "?"; }
# spread FILE COL: column COL of a failover samples file as SPREAD,
# "median (min–max, N cuts)", and MEDIAN ("never" sorts last; 1e9 if none).
spread() {
	read -r MEDIAN SPREAD < <(awk -v c="$2" '!/^#/ && $c != "" && $c != "-" {v[++n] = ($c == "never" ? 1e12 : $c)}
		function f(x) {return x >= 1e12 ? "never" : sprintf("%.0f", x)}
		END {
			if (!n) {print "1e9 ?"; exit}
			for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) {t = v[j]; v[j] = v[j - 1]; v[j - 1] = t}
			m = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
			printf "%s %s (%s–%s, %d cuts)\n", (m >= 1e12 ? 1e9 : m), f(m), f(v[1]), f(v[n]), n
		}' "$1" 2>/dev/null || echo "1e9 ?")
}
# pp_at CFG RATE BYTES COL: a column of the ping-pong table at a size.
pp_at() { awk -v b="$3" -v k="$4" '!/^#/ && $1 == b {print $k}' "$(pp "$1" "$2")" 2>/dev/null; }
# pp_half CFG RATE: the smallest size reaching half the peak throughput.
pp_half() { awk '!/^#/ {s[NR] = $1; t[NR] = $6; if ($6 > p) p = $6} END {for (i = 1; i <= NR; i++) if (t[i] != "" && t[i] >= p / 2) {print s[i]; exit}}' "$(pp "$1" "$2")" 2>/dev/null; }
# pp_worst_vs RATE [CFG]: the lowest ri2n/CFG (bond) throughput ratio from 4 KiB up, and where.
pp_worst_vs() {
	awk '!/^#/ && FNR == NR {b[$1] = $6; next} !/^#/ && $1 >= 4096 && ($1 in b) && b[$1] > 0 {r = $6 / b[$1]; if (w == "" || r < w) {w = r; at = $1}} END {if (w != "") printf "%.2f %s\n", w, at}' \
		"$(pp "${2:-bond}" "$1")" "$(pp "${3:-ri2n}" "$1")" 2>/dev/null
}

# Bonding comes right before ri2n: the tables' last column is ri2n / bonding.
PP_CFGS="single single-1500 bond-1500 ri2n-one ri2n-seg bond ri2n"
# The failover timelines, CONFIG-FAULT.
FAILOVER_RUNS="ri2n-carrier ri2n-blackhole bond-carrier bond-blackhole bond-arp-carrier bond-arp-blackhole"
cfg_name() {
	case $1 in
	single) echo "one link" ;;
	single-1500) echo "one link, TSO off" ;;
	bond) echo "bonding" ;;
	bond-1500) echo "bonding, TSO off" ;;
	bond-arp) echo "bonding, ARP monitor" ;;
	mpi-2nic) echo "OpenMPI over both NICs" ;;
	ri2n-one) echo "ri2n, one link" ;;
	ri2n-seg) echo "ri2n tx_gso=0" ;;
	*) echo "$1" ;;
	esac
}
# pp_table RATE: latency and throughput of every configuration measured.
# target_rows CONFIG LABEL: the per-packet targets for one ri2n configuration
# against MTU-frame references (LABEL prefixes each row).
# paired_rows RATE: the same targets again from scripts/pair-lab.sh's
# rounds (raw/paired-RATE.txt): ri2n0, one link and bonding, both with TSO
# off, by turns in one lab, so that the host's drift over minutes falls on
# all alike; each figure is the median of the rounds' ratios.
paired_rows() {
	local f=$RAW/paired-$1.txt
	[ -f "$f" ] || return 0
	awk -v rate="$1" '
		function med(a, n,   i, j, t) {
			for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) {t = a[i]; a[i] = a[j]; a[j] = t}
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		}
		function v(ok) { return ok ? "met" : "**missed**" }
		$1 == "round" && $3 == "size" {s = $4; if (!(s in ns)) order[++nsz] = s; k = ++ns[s]; q[s, k] = $10; qb[s, k] = $14; one[s, k] = $6; r2[s, k] = $8}
		$1 == "round" && $3 == "bulk" {n++; bq[n] = $9; bb[n] = $22; ct[n] = ($12 > 0 ? $15 / $12 : 0); cr[n] = ($13 > 0 ? $16 / $13 : 0); mo += $5; mr += $7; mb += $18}
		END {
			tag = "paired, " (rate == "none" ? "unshaped" : rate) ", " (n ? n : ns[order[1]]) " rounds"
			if (n && rate == "none") {
				x = med(bq, n); printf "| %s: bulk ≥ 1.0 × one link with TSO off | %.3f (means %.1f vs %.1f Mbit/s) | %s |\n", tag, x, mr / n, mo / n, v(x >= 1.0)
				x = med(bb, n); printf "| %s: bulk ≥ 1.3 × bonding with TSO off | %.3f (bonding %.1f Mbit/s) | %s |\n", tag, x, mb / n, v(x >= 1.3)
				x = med(ct, n); printf "| %s: CPU per GB at the sender ≤ one link with TSO off | %.2f (busy s/GB) | %s |\n", tag, x, v(x <= 1.0)
				x = med(cr, n); printf "| %s: CPU per GB at the receiver ≤ one link with TSO off | %.2f (busy s/GB) | %s |\n", tag, x, v(x <= 1.0)
			} else if (n) {
				x = med(bq, n) / 2; printf "| %s: bulk, 2 links ≥ 0.98 × 2 × one link | %.3f (means %.1f vs 2 × %.1f Mbit/s) | %s |\n", tag, x, mr / n, mo / n, v(x >= 0.98)
			}
			if (64 in ns) {
				for (k = 1; k <= ns[64]; k++) {a[k] = q[64, k]; o[k] = one[64, k]; b[k] = r2[64, k]}
				x = med(a, ns[64]); printf "| %s: 64 B round trip ≤ one link + 5 %% | %.3f (medians %.1f vs %.1f µs) | %s |\n", tag, x, med(b, ns[64]), med(o, ns[64]), v(x <= 1.05)
			}
			w = ""; list = ""
			for (i = 1; i <= nsz; i++) {
				s = order[i]; if (s < 4096) continue
				for (k = 1; k <= ns[s]; k++) a[k] = qb[s, k]
				x = med(a, ns[s]); list = list (list == "" ? "" : ", ") sprintf("%s B %.3f", s, x)
				if (w == "" || x < w) w = x
			}
			if (w != "" && w > 0) printf "| %s: ping-pong ≥ bonding with TSO off at every size ≥ 4 KiB (bonding / ri2n0 round trip) | %s | %s |\n", tag, list, v(w >= 1.0)
		}' "$f"
}

# acks_per_mib CONFIG RATE: ACKs received per MiB sent, one stream over 2
# links (bulk.tsv: column 6 bytes, 7 ACKs).
acks_per_mib() {
	awk -F'\t' -v c="$1" -v r="$2" '$1 == c && $2 == 2 && $3 == r && $4 == 1 && $6 > 0 {printf "%.0f", $7 / ($6 / 1048576)}' "$RAW/bulk.tsv"
}

target_rows() {
	if [ -n "$(mbit $1 2 none 1)" ]; then
		g=$(mbit $1 2 none 1) s15=$(mbit single-1500 2 none 1) b15=$(mbit bond-1500 2 none 1)
		x=$(ratio "$g" "$s15") w=$(ratio "$g" "$b15")
		echo "| $2unshaped bulk ≥ 1.0 × one link with TSO off | $g vs $s15 Mbit/s = **$x** | $(verdict "$(ge "$x" 1.0)") |"
		echo "| $2unshaped bulk ≥ 1.3 × bonding with TSO off | $g vs $b15 Mbit/s = **$w** | $(verdict "$(ge "$w" 1.3)") |"
		g=$(mbit $1 2 "$RATE" 1) s=$(mbit single 2 "$RATE" 1)
		x=$(ratio "$g" "$(awk -v s="$s" 'BEGIN {print s * 2}')")
		[ -z "$g" ] || echo "| $2shaped bulk, 2 links ≥ 0.98 × 2 × one link | $g vs 2 × $s Mbit/s = **$x** | $(verdict "$(ge "$x" 0.98)") |"
		for rate in "$RATE" none; do
			a_s=$(acks_per_mib single-1500 "$rate") a_g=$(acks_per_mib "$1" "$rate")
			[ -n "$a_g" ] || continue
			x=$(ratio "$a_g" "$a_s")
			read -r d_g p_g e_g < <(dsacks $1 2 "$rate" 1)
			echo "| $2TCP health ($rate): ACKs/MiB ≤ 1.3 × one link's (TSO off); DSACKs ≈ 0 (beyond tail loss probes) | $a_g vs $a_s = **$x**; DSACKs $d_g, loss probes $p_g | $(verdict "$(ge 1.3 "$x")"), $(verdict "$([ "${e_g:-1}" -le 2 ] && echo 1 || echo 0)") |"
		done
		# Kernel CPU per GB at each end, unshaped (system + irq + softirq ticks).
		for end in 12 13; do
			c_s=$(awk -F'\t' -v k=$end '$1 == "single-1500" && $2 == 2 && $3 == "none" && $4 == 1 && $6 > 0 {printf "%.0f", $k / ($6 / 1e9)}' "$RAW/bulk.tsv")
			c_g=$(awk -F'\t' -v k=$end -v c="$1" '$1 == c && $2 == 2 && $3 == "none" && $4 == 1 && $6 > 0 {printf "%.0f", $k / ($6 / 1e9)}' "$RAW/bulk.tsv")
			x=$(ratio "$c_g" "$c_s")
			echo "| $2unshaped: kernel CPU per GB at the $([ $end = 12 ] && echo sender || echo receiver) ≤ one link's (TSO off) | $c_g vs $c_s ticks/GB = **$x** | $(verdict "$(ge 1 "$x")") |"
		done
	fi
	if [ -f "$(pp $1 none)" ]; then
		for rate in "$RATE" none; do
			[ -f "$(pp $1 "$rate")" ] && [ -f "$(pp bond-1500 "$rate")" ] || continue
			read -r w at < <(pp_worst_vs "$rate" bond-1500 $1 || true) || true
			echo "| $2ping-pong ($rate): ≥ bonding with TSO off at every size ≥ 4 KiB | worst ${w:-n/a} (at ${at:-?} B) | $(verdict "$(ge "${w:-n/a}" 1)") |"
			hr=$(pp_half $1 "$rate") hb=$(pp_half bond-1500 "$rate")
			echo "| $2ping-pong ($rate): size reaching half of peak ≤ ½ of bonding's (TSO off) | ${hr:-?} B vs ${hb:-?} B | $(verdict "$(ge "$(awk -v b="${hb:-0}" 'BEGIN {print b / 2}')" "${hr:-1e99}")") |"
			# (The default's 64 B row is among the rows above.)
			[ -n "$2" ] || continue
			ls_=$(pp_at single "$rate" 64 3) lr=$(pp_at $1 "$rate" 64 3)
			x=$(ratio "$lr" "$ls_")
			echo "| $2ping-pong ($rate): 64 B round trip ≤ one link + 5 % | $lr vs $ls_ µs = **$x** | $(verdict "$(ge 1.05 "$x")") |"
		done
	fi
}

pp_table() {
	local c files=() head="| bytes" rule="|--:"
	for c in $PP_CFGS; do
		[ -f "$(pp $c "$1")" ] || continue
		files+=("$(pp $c "$1")")
		head+=" | $(cfg_name $c) µs"
		rule+="|--:"
	done
	for c in $PP_CFGS; do
		[ -f "$(pp $c "$1")" ] || continue
		head+=" | $(cfg_name $c) MB/s"
		rule+="|--:"
	done
	echo "$head | ri2n / bonding |"
	echo "$rule|--:|"
	awk 'FNR == 1 {f++} !/^#/ {size[FNR] = $1; lat[f, FNR] = $5; mbs[f, FNR] = $6; n = FNR}
		END {
			for (i = 1; i <= n; i++) {
				if (size[i] == "") continue
				line = "| " size[i]
				for (j = 1; j <= f; j++) line = line sprintf(" | %.1f", lat[j, i])
				for (j = 1; j <= f; j++) line = line sprintf(" | %.2f", mbs[j, i])
				print line sprintf(" | %.2f |", mbs[f - 1, i] > 0 ? mbs[f, i] / mbs[f - 1, i] : 0)
			}
		}' "${files[@]}"
}

# Failover metrics from a 0.1 s timeline, median-filtered over 3 samples
# (iperf3 in a TCG guest reports an isolated empty interval about once a
# second, link failure or not): the pre-cut rate (mean of 2 s .. cut), the
# gap (cut to the end of the last interval before the heal below 40 % of it;
# 0 if none; "never" if it never came back) and the recovery (heal to the
# end of the first interval at 80 % of it or more).
failover_metrics() {
	awk 'NR == 1 {cut = $3 / 1000; heal = $5 / 1000; next}
		{t[++n] = $1; raw[n] = $2}
		END {
			for (i = 1; i <= n; i++) {
				x = raw[i > 1 ? i - 1 : i]; y = raw[i]; z = raw[i < n ? i + 1 : i]
				r[i] = (x > y) ? ((y > z) ? y : ((x > z) ? z : x)) : ((x > z) ? x : ((y > z) ? z : y))
			}
			for (i = 1; i <= n; i++) if (t[i] > 2 && t[i] <= cut) {s += r[i]; c++}
			pre = c ? s / c : 0
			# The outage: the samples below 40 % from the cut on, up to
			# the first one above. A later dip is no part of it: iperf3
			# gives some empty 0.1 s samples, two in a row now and then
			# (the median filter keeps those), which made a 9840 ms
			# "gap" of a 5 ms failover.
			gap = 0
			for (i = 1; i <= n; i++) if (t[i] > cut && t[i] <= heal) {if (r[i] >= 0.4 * pre) break; gap = t[i] - cut}
			never = 0
			for (i = 1; i <= n; i++) if (t[i] > heal - 0.1 && t[i] <= heal) never = (r[i] < 0.4 * pre)
			rec = "never"
			for (i = 1; i <= n; i++) if (t[i] > heal && r[i] >= 0.8 * pre) {rec = sprintf("%.0f", (t[i] - heal) * 1000); break}
			for (i = 1; i <= n; i++) if (t[i] > cut + 2 && t[i] <= heal) {s2 += r[i]; c2++}
			printf "%.1f %s %s %.1f\n", pre, never ? "never" : sprintf("%.0f", gap * 1000), rec, c2 ? s2 / c2 : 0
		}' "$1"
}

# --- plots -----------------------------------------------------------------

# pp_plot RATE COLUMN: gnuplot's plot list for the ping-pong files of RATE.
pp_plot() {
	local c sep=
	for c in $PP_CFGS; do
		[ -f "$(pp $c "$1")" ] || continue
		printf '%s"%s" using 1:%s with linespoints title "%s"' "$sep" "$(pp $c "$1")" "$2" "$(cfg_name $c)"
		sep=", "
	done
}

plots() {
	command -v gnuplot >/dev/null || { log "gnuplot missing: no plots (scripts/setup-host.sh --bench installs it)"; return; }
	local rate
	for rate in "$RATE" none; do
		[ -f "$(pp ri2n "$rate")" ] || continue
		gnuplot <<EOF
set terminal pngcairo size 900,600 font ",11"
set output "$OUT/pingpong-throughput-$rate.png"
set title "TCP ping-pong throughput, links $( [ "$rate" = none ] && echo unshaped || echo "shaped to $rate" )"
set logscale x 2
set format x "%.0s%cB"
set xlabel "message size"
set ylabel "MB/s (size / one-way time)"
set key top left
set grid
plot $(pp_plot "$rate" 6)
set output "$OUT/pingpong-latency-$rate.png"
set title "TCP ping-pong one-way latency, links $( [ "$rate" = none ] && echo unshaped || echo "shaped to $rate" )"
set logscale y 10
set ylabel "microseconds (half the mean round trip)"
plot $(pp_plot "$rate" 5)
EOF
	done
	local f cmds=()
	for f in $FAILOVER_RUNS; do
		[ -f "$RAW/failover-$f.tsv" ] && cmds+=("\"$RAW/failover-$f.tsv\" using 1:2 with lines lw 2 title \"$(cfg_name "${f%-*}"), ${f##*-}\"")
	done
	if [ ${#cmds[@]} -gt 0 ]; then
		local IFS=,
		gnuplot <<EOF
set terminal pngcairo size 1000,500 font ",11"
set output "$OUT/failover.png"
set title "Bulk TCP while link 1 fails at 10 s and heals at 20 s (0.1 s samples, links $RATE)"
set xlabel "seconds"
set ylabel "Mbit/s"
set grid
set key bottom right
set yrange [0:*]
set arrow from 10, graph 0 to 10, graph 1 nohead dt 2
set arrow from 20, graph 0 to 20, graph 1 nohead dt 2
plot ${cmds[*]}
EOF
	fi
}

# --- the page --------------------------------------------------------------

{
	echo "# ri2n against one link and bonding balance-rr"
	echo
	echo "Made by \`make bench\` (\`scripts/bench-lab.sh\`, then \`scripts/bench-report.sh\`"
	echo "from \`raw/\`). Two TCG QEMU guests, 1 vCPU each, on this project's lab."
	echo
	echo "- date: $(meta date); commit: $(meta commit)"
	awk '$1 == "rerun" {sub(/^rerun /, ""); print "- rows run again or added since: " $0}' "$RAW/meta.txt"
	echo "- kernel: $(meta kernel); $(meta qemu)"
	echo "- host: $(meta host)"
	echo "- shaping: tbf $RATE (burst 128 KiB) on every tap's egress on the host, the link"
	echo "  into each guest, as a switch port's line rate; \`none\` = unshaped, where the"
	echo "  guests' emulated CPUs are the limit. Bonding: balance-rr, miimon 100,"
	echo "  default tcp_reordering; \"ARP monitor\": arp_interval 100, the peer as"
	echo "  arp_ip_target, arp_validate filter, no miimon. ri2n: the paper's parameters"
	echo "  (Table 2)."
	echo

	if [ -f "$RAW/bulk.tsv" ]; then
		echo "## Targets"
		echo
		echo "| target | measured | |"
		echo "|---|---|---|"
		for n in 2 4; do
			s=$(mbit single $n "$RATE" 1) b=$(mbit bond $n "$RATE" 1) r=$(mbit ri2n $n "$RATE" 1)
			x=$(ratio "$r" "$(awk -v s="$s" -v n=$n 'BEGIN {print s * n}')")
			echo "| shaped bulk 1 stream, $n links: ri2n ≥ 0.98 × $n × one link | $r vs $n × $s Mbit/s = **$x** | $(verdict "$(ge "$x" 0.98)") |"
			echo "| shaped bulk 1 stream, $n links: ri2n ≥ bonding | $r vs $b Mbit/s ($(ratio "$r" "$b")) | $(verdict "$(ge "$r" "$b")") |"
			k=$(mbit ri2n-keyed $n "$RATE" 1)
			if [ -n "$k" ]; then
				x=$(awk -v r="$k" -v s="$s" -v n="$n" 'BEGIN {printf "%.3f", r / (n * s)}')
				echo "| shaped bulk 1 stream, $n links, with a key: ri2n ≥ 0.98 × $n × one link | $k vs $n × $s Mbit/s = **$x** | $(verdict "$(ge "$x" 0.98)") |"
			fi
		done
		s=$(mbit single 2 none 1) s15=$(mbit single-1500 2 none 1) b=$(mbit bond 2 none 1) r=$(mbit ri2n 2 none 1)
		b15=$(mbit bond-1500 2 none 1)
		x=$(ratio "$r" "$b") y=$(ratio "$r" "$s") z=$(ratio "$r" "$s15") w=$(ratio "$r" "$b15")
		echo "| unshaped bulk: ri2n ≥ 1.3 × bonding (TSO: 64 KiB frames on the virtual wire) | $r vs $b Mbit/s = **$x** | $(verdict "$(ge "$x" 1.3)") |"
		echo "| unshaped bulk: ri2n ≥ 1.3 × bonding with TSO off (MTU frames, as on real Ethernet) | $r vs $b15 Mbit/s = **$w** | $(verdict "$(ge "$w" 1.3)") |"
		echo "| unshaped bulk: ri2n ≥ 0.9 × one link (TSO: 64 KiB frames on the virtual wire) | $r vs $s Mbit/s = **$y** | $(verdict "$(ge "$y" 0.9)") |"
		echo "| unshaped bulk: ri2n ≥ 0.9 × one link with TSO off (MTU frames, as on real Ethernet) | $r vs $s15 Mbit/s = **$z** | $(verdict "$(ge "$z" 0.9)") |"
		k=$(mbit ri2n-keyed 2 none 1)
		if [ -n "$k" ]; then
			x=$(ratio "$k" "$r")
			echo "| unshaped bulk with a key ≥ 0.9 × without, same run | $k vs $r Mbit/s = **$x** | $(verdict "$(ge "$x" 0.9)") |"
		fi
		for rate in "$RATE" none; do
			o=$(mbit ri2n-1sw 2 "$rate" 1) t=$(mbit ri2n 2 "$rate" 1)
			[ -n "$o" ] || continue
			x=$(ratio "$o" "$t")
			echo "| one-switch mode, one switch, bulk ($rate) within 2 % of two-switch mode | $o vs $t Mbit/s = **$x** | $(verdict "$(ge "$x" 0.98)") |"
		done
		for rate in "$RATE" none; do
			# One link with MTU frames on the wire (TSO off), as ri2n sends them.
			a_s=$(acks_per_mib single-1500 "$rate") a_r=$(acks_per_mib ri2n "$rate")
			read -r d_r p_r e_r < <(dsacks ri2n 2 "$rate" 1)
			read -r d_s p_s _ < <(dsacks single 2 "$rate" 1)
			x=$(ratio "$a_r" "$a_s")
			echo "| TCP health ($rate): ri2n ACKs/MiB ≤ 1.3 × one link's (TSO off) | $a_r vs $a_s = **$x** | $(verdict "$(ge 1.3 "$x")") |"
			echo "| TCP health ($rate): ri2n spurious retransmits (DSACKs) ≈ 0, beyond TCP's tail loss probes | DSACKs ${d_r:-?}, loss probes ${p_r:-?} (one link: ${d_s:-?}, ${p_s:-?}) | $(verdict "$([ "${e_r:-1}" -le 2 ] && echo 1 || echo 0)") |"
		done
	fi
	if [ -f "$(pp ri2n "$RATE")" ]; then
		for rate in "$RATE" none; do
			read -r w at < <(pp_worst_vs "$rate" || true) || true
			echo "| ping-pong ($rate): ri2n ≥ bonding at every size ≥ 4 KiB | worst ri2n/bond ${w:-n/a} (at ${at:-?} B) | $(verdict "$(ge "${w:-n/a}" 1)") |"
			if [ -f "$(pp bond-1500 "$rate")" ]; then
				read -r w at < <(pp_worst_vs "$rate" bond-1500 || true) || true
				echo "| ping-pong ($rate): ri2n ≥ bonding with TSO off at every size ≥ 4 KiB | worst ri2n/bond ${w:-n/a} (at ${at:-?} B) | $(verdict "$(ge "${w:-n/a}" 1)") |"
			fi
			if [ -f "$(pp ri2n-1sw "$rate")" ]; then
				read -r w at < <(awk '!/^#/ && FNR == NR {b[$1] = $6; next} !/^#/ && ($1 in b) && b[$1] > 0 {r = $6 / b[$1]; if (w == "" || r < w) {w = r; at = $1}} END {if (w != "") printf "%.3f %s\n", w, at}' "$(pp ri2n "$rate")" "$(pp ri2n-1sw "$rate")")
				echo "| ping-pong ($rate): one-switch mode within 2 % of two-switch at every size | worst ri2n-1sw/ri2n ${w:-n/a} (at ${at:-?} B) | $(verdict "$(ge "${w:-n/a}" 0.98)") |"
			fi
			hr=$(pp_half ri2n "$rate") hb=$(pp_half bond "$rate")
			echo "| ping-pong ($rate): size reaching half of peak ≤ ½ of bonding's | ri2n ${hr:-?} B, bonding ${hb:-?} B | $(verdict "$(ge "$(awk -v b="${hb:-0}" 'BEGIN {print b / 2}')" "${hr:-1e99}")") |"
			ls_=$(pp_at single "$rate" 64 3) lr=$(pp_at ri2n "$rate" 64 3)
			x=$(ratio "$lr" "$ls_")
			echo "| ping-pong ($rate): 64 B round trip ≤ one link + 5 % | $lr vs $ls_ µs = **$x** | $(verdict "$(ge 1.05 "$x")") |"
		done
	fi
	# Issue 13: the default (tx_gso=1: whole GSO packets per link, merged
	# again by the receiver's slaves) and tx_gso=0 (ri2n segments and
	# stripes), against MTU-frame references.
	target_rows ri2n ""
	target_rows ri2n-seg "tx_gso=0, "
	paired_rows "$RATE"
	paired_rows none
	if [ -f "$RAW/failover-ri2n-carrier.tsv" ]; then
		# The timeline (one failover each) and, when there, the repeated cuts.
		w=$RAW/failover-ri2n-carrier.watch
		read -r _ gap rec _ < <(failover_metrics "$RAW/failover-ri2n-carrier.tsv")
		read -r _ gap2 rec2 _ < <(failover_metrics "$RAW/failover-ri2n-blackhole.tsv")
		sc=$RAW/failover-ri2n-carrier-samples.tsv sb=$RAW/failover-ri2n-blackhole-samples.tsv
		e1=$(awk '/^# n2_minus_n1_us/ {print $6}' "$sc" 2>/dev/null || true)
		e2=$(awk '/^# n2_minus_n1_us/ {print $8}' "$sc" 2>/dev/null || true)
		e21=$(awk '/^# n2_minus_n1_us/ {printf "%.1f", $4 / 1000 + 1}' "$sc" 2>/dev/null || true)
		eb=$(awk '/^# n2_minus_n1_us/ {print $6}' "$sb" 2>/dev/null || true)
		spread "$sc" 5
		echo "| carrier-loss failover ≤ 50 ms, from the carrier loss (n2's ri2n sees it) to the sender (n1) out of the link | $SPREAD ± ${e21:-?} ms (timeline run: $(wv "$w" carrier_down_to_n1_ms) ms) | $(verdict "$(ge 50 "$MEDIAN")") |"
		spread "$sc" 4
		seen=$SPREAD
		spread "$sc" 2
		echo "| carrier-loss failover ≤ 50 ms, end to end from the host's \`set_link\` | $SPREAD ± ${e1:-?} ms, of which $seen ± ${e2:-?} ms until n2's ri2n saw the carrier go (QEMU monitor, virtio interrupt, guest work queue); timeline run: $(wv "$w" detect_ms) ms, throughput gap ${gap} ms (0.1 s samples) | $(verdict "$(ge 50 "$MEDIAN")") |"
		spread "$sb" 2
		echo "| silent-blackhole failover under load ≤ 250 ms | $SPREAD ± ${eb:-?} ms (timeline run: $(wv "$RAW/failover-ri2n-blackhole.watch" detect_ms) ms, throughput gap ${gap2} ms) | $(verdict "$(ge 250 "$MEDIAN")") |"
		spread "$sc" 3
		rc=$SPREAD mc=$MEDIAN
		spread "$sb" 3
		echo "| recovery ≤ 500 ms | link in use again after $rc ms (carrier), $SPREAD ms (blackhole); timeline run: $(wv "$w" recover_ms) / $(wv "$RAW/failover-ri2n-blackhole.watch" recover_ms) ms, throughput back to 80 % after $rec / $rec2 ms | $(verdict "$(ge 500 "$(awk -v a="$mc" -v b="$MEDIAN" 'BEGIN {print (a > b ? a : b)}')")") |"
	fi
	echo

	cat <<'EOF'
## Reading these numbers

- The guests are TCG-emulated: every packet costs CPU that a real NIC and
  CPU would not, so per-packet overheads weigh far more here than on the
  paper's GbE cluster, and the small-message round trips are hundreds of µs.
- The lab's virtual wire carries a TSO frame whole (up to 64 KiB from tap to
  tap). Unshaped, "one link" therefore moves 64 KiB per frame, which no
  Ethernet does; "one link, TSO off" is the baseline with MTU-sized frames.
  ri2n cannot use that shortcut: every frame on the wire carries its own
  number, so a GSO packet is cut into MTU-sized frames, by the slave
  (tx_gso=1, the default) or by ri2n (tx_gso=0).
  Bonding balance-rr passes TSO frames through, 64 KiB per slave in turn;
  "bonding, TSO off" turns TSO off on its slaves, so that it too puts only
  MTU-sized frames on the wire. Unshaped, compare ri2n with the TSO-off rows.
- A message of a few segments costs ri2n more than bonding from 2 KiB on.
  "ri2n, one link" (link 1's carrier down on both nodes) splits the cost:
  for messages of 2-3 segments, ri2n over one link is close to bonding with
  TSO off, and the second link adds the rest. Under TCG each NIC a message
  touches costs a virtqueue kick, a tap, an emulator event and a guest
  interrupt, worth more than a segment's time on the wire here. Bonding
  balance-rr round-robins per GSO packet, so a message of a few segments
  leaves on one slave; so does ri2n by default (tx_gso=1: whole GSO packets
  per link, chosen by bytes). "ri2n tx_gso=0" is the paper's way (§5.3):
  ri2n segments and stripes the segments (packets of up to 8 segments kept
  on one link), which pays each NIC's cost for every message.
- The token bucket (128 KiB burst, needed to pass TSO frames) lets a
  message of up to 128 KiB cross an idle shaped link at emulation speed: the
  shaped ping-pong curves between 16 and 256 KiB exceed the line rate and
  measure CPU, not links. The link rate shows from 1 MiB up.

EOF
	if [ -f "$RAW/bulk.tsv" ]; then
		echo "## Bulk TCP (iperf3, $(meta secs) s, n1 → n2)"
		echo
		echo "Receiver goodput; TCP health from the sender's counters (\`nstat\`): ACK segments"
		echo "received per MiB sent, retransmitted segments, DSACKs received (each a"
		echo "retransmission that was not needed), tail loss probes (TCP resends a"
		echo "run's last segment when its ACK is slow: one DSACK back when it was not"
		echo "lost, over one link too), reorder events (SACK + TS + Reno);"
		echo "CPU: kernel time (system + irq + softirq) of each guest per GB moved."
		echo
		echo "| config | links | rate | streams | Mbit/s | × one link | ACKs/MiB | retrans | DSACKs | loss probes | reorder | CPU s/GB sender | CPU s/GB receiver |"
		echo "|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
		awk -F'\t' '!/^#/ {
			key = $2 "/" $3 "/" $4
			if ($1 == "single") one[$3 "/" $4] = $5
			gb = $6 / 1e9
			x = (one[$3 "/" $4] > 0) ? sprintf("%.2f", $5 / one[$3 "/" $4]) : "-"
			printf "| %s | %s | %s | %s | %.1f | %s | %.0f | %s | %s | %s | %s | %.2f | %.2f |\n", $1, $2, $3, $4, $5 / 1e6, x,
				($6 > 0 ? $7 / ($6 / 1048576) : 0), $8, $9, ($14 == "" ? "-" : $14), $10, (gb > 0 ? $12 / 100 / gb : 0), (gb > 0 ? $13 / 100 / gb : 0)
		}' "$RAW/bulk.tsv"
		echo
		echo "\"× one link\" compares with one link at the same rate and stream count (one"
		echo "link's figure comes from its own 2-link lab, where only eth0 is used)."
		echo
	fi

	if [ -f "$(pp ri2n "$RATE")" ]; then
		echo "## Ping-pong against message size (tools/pingpong, Figs. 10-13)"
		echo
		for rate in "$RATE" none; do
			[ -f "$(pp ri2n "$rate")" ] || continue
			echo "Links $rate: one-way latency (µs) and throughput (MB/s = size / one-way time)."
			echo
			echo "![throughput](pingpong-throughput-$rate.png) ![latency](pingpong-latency-$rate.png)"
			echo
			pp_table "$rate"
			echo
		done
	fi

	if [ -f "$RAW/failover-ri2n-carrier.tsv" ]; then
		echo "## Failover (Fig. 15)"
		echo
		echo "![failover](failover.png)"
		echo
		echo "Bulk TCP n1 → n2 over 2 links at $RATE, iperf3 samples every 0.1 s; n2's link 1"
		echo "fails at 10 s and heals at 20 s. Gap: from the failure to the end of the last"
		echo "sample below 40 % of the rate before it (0: no sample fell that low), after a"
		echo "median filter over 3 samples (iperf3 reports a lone empty sample about once a"
		echo "second in these guests, failure or not; the plot shows the raw samples). Recovery:"
		echo "from the heal to the first sample at 80 % of that rate. For ri2n, \`ri2n events\`"
		echo "also timed the sender's endpoint (n2, eth1) leaving and re-entering service"
		echo "(host clock to guest clock; the offset is measured while the guests are idle,"
		echo "within the error the targets above state). For carrier loss it also timed n2's"
		echo "ri2n seeing the carrier go and come back (its 5 ms poll; the notifier for carrier"
		echo "back); \`ri2n-pingpong clock\` put n2's clock on n1's over ri2n0 before the run,"
		echo "which splits the failover into the lab's part (host command to guest kernel) and"
		echo "the driver's (n2's heartbeat on the link left, n1 taking the link out of use)."
		echo "The targets above quote the repeated cuts (\`raw/failover-ri2n-*-samples.tsv\`:"
		echo "n2's link 1 cut and healed every 2 s under the same bulk TCP, on a fresh pair of"
		echo "guests): median (min–max); a single timeline gives one sample only."
		echo
		echo "| config | fault | before, Mbit/s | during (from +2 s), Mbit/s | gap, ms | recovery, ms | endpoint out, ms | endpoint back, ms |"
		echo "|---|---|--:|--:|--:|--:|--:|--:|"
		for f in $FAILOVER_RUNS; do
			[ -f "$RAW/failover-$f.tsv" ] || continue
			read -r pre gap rec during < <(failover_metrics "$RAW/failover-$f.tsv")
			d=$(awk '$1 == "detect_ms" {print $2}' "$RAW/failover-$f.watch" 2>/dev/null || true)
			r=$(awk '$1 == "recover_ms" {print $2}' "$RAW/failover-$f.watch" 2>/dev/null || true)
			echo "| $(cfg_name "${f%-*}") | ${f##*-} | $pre | $during | $gap | $rec | ${d:--} | ${r:--} |"
		done
		echo
	fi

	if [ -f "$RAW/mpi-ri2n.txt" ]; then
		echo "## OpenMPI ping-pong (Fig. 14)"
		echo
		echo "Debian's OpenMPI, unchanged (TCP BTL), \`tools/mpi-pingpong.c\` between n1 and n2;"
		echo "links $RATE."
		echo
		echo "| bytes | one link µs | ri2n µs | one link MB/s | ri2n MB/s | ri2n / one link |"
		echo "|--:|--:|--:|--:|--:|--:|"
		paste <(grep -v '^#' "$RAW/mpi-single.txt") <(grep -v '^#' "$RAW/mpi-ri2n.txt") |
			awk '{printf "| %s | %.1f | %.1f | %.2f | %.2f | %.2f |\n", $1, $4, $9, $5, $10, ($5 > 0 ? $10 / $5 : 0)}'
		echo
		if [ -f "$RAW/mpi-mpi-2nic.txt" ]; then
			echo "The baseline an HPC site has without any driver: OpenMPI's TCP BTL over"
			echo "eth0 and eth1 itself (\`btl_tcp_if_include eth0,eth1\`), against ri2n0."
			if grep -q '^rerun .*BENCH_MPI_CFGS' "$RAW/meta.txt"; then
				echo "Its column comes from a later lab than ri2n's (\"rows run again\" above):"
				echo "a host's speed differs between labs by up to 30 %, so the ratio is only"
				echo "indicative; \`make bench-apps\` compares the two by turns in one lab (LAMMPS,"
				echo "collectives)."
			fi
			echo
			echo "| bytes | OpenMPI over both NICs µs | ri2n µs | both NICs MB/s | ri2n MB/s | ri2n / both NICs |"
			echo "|--:|--:|--:|--:|--:|--:|"
			paste <(grep -v '^#' "$RAW/mpi-mpi-2nic.txt") <(grep -v '^#' "$RAW/mpi-ri2n.txt") |
				awk '{printf "| %s | %.1f | %.1f | %.2f | %.2f | %.2f |\n", $1, $4, $9, $5, $10, ($5 > 0 ? $10 / $5 : 0)}'
			echo
		fi
	fi
} >"$MD"
plots
cat "$MD"
