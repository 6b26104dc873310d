#!/usr/bin/env bash
# make bench: ri2n against one link and Linux bonding balance-rr, the way
# the paper compared them (§6), in the lab. Every configuration runs on a
# fresh pair of guests. Raw results go to bench/results/raw/, and
# scripts/bench-report.sh turns them into bench/results/README.md and plots.
#
#   1. ping-pong latency and throughput against message size, 64 B .. 16 MiB
#      (tools/pingpong; the paper's Figs. 10-13), shaped and unshaped;
#   2. bulk TCP (iperf3), 1 and 4 streams, 2 and 4 links shaped, and
#      unshaped (CPU-bound), with TCP health (nstat) and guest CPU time;
#   3. failover timelines (Fig. 15): bulk TCP, one link cut at 10 s and
#      restored at 20 s, sampled every 0.1 s, as carrier loss and as a silent
#      blackhole, ri2n and bonding (miimon, and the ARP monitor);
#   4. OpenMPI ping-pong over ri2n0, over one link (Fig. 14), and over
#      both NICs striped by OpenMPI itself;
#   5. paired rounds (scripts/pair-lab.sh): ri2n0, one link and bonding,
#      both with TSO off, in one lab by turns, shaped and unshaped, so that
#      the targets' ratios do not depend on which minute each configuration
#      drew (this host's speed drifts by tens of percent over minutes).
#
# Shaping: tbf at BENCH_RATE on every tap's egress on the host side (the
# link into each guest), as a switch port's line rate limits a NIC: the
# links, not the guests' emulated CPUs, are then the bottleneck, and the
# guests pay nothing for the shaping. "none" is unshaped, CPU-bound.
#
# BENCH_ONLY=pingpong,bulk,failover,mpi,paired selects parts (all by default;
# "profile", the guests' perf profiles of 64-byte and 16 KiB ping-pong and
# unshaped bulk, PROF_CFGS and PROF_WORK, only when asked: make profile,
# summarised by scripts/profile-report.sh);
# BENCH_BULK_CFGS="single ri2n ri2n-keyed" the bulk configurations,
# BENCH_FAILOVER_CFGS="ri2n bond bond-arp" and BENCH_MPI_CFGS="single ri2n
# mpi-2nic" those of failover and MPI,
# BENCH_BULK_LINKS="2" the shaped link counts, BENCH_PP_CFGS the ping-pong
# ones, BENCH_STREAMS="1" the iperf3 stream counts. ri2n-keyed: with a key
#; ri2n-1sw: one-switch mode with
# every link through one switch. BENCH_RI2N_PARAMS: more module
# parameters for every ri2n configuration (stripe_segs=8, say).
set -u
# Failover timelines time the guests' events from host actions: their clocks.
export LAB_CLOCKS=1
. "$RI2N_ROOT/tests/lab/lib.sh"
RATE=${BENCH_RATE:-100mbit}
SECS=${BENCH_SECS:-10}
ONLY=${BENCH_ONLY:-pingpong,bulk,failover,mpi,paired}
RAW=${BENCH_RAW:-$RI2N_ROOT/bench/results/raw}
mkdir -p "$RAW"

want() { [[ ",$ONLY," == *",$1,"* ]]; }
addr() { echo "10.$1.0.${2#n}"; }

# lab CONFIG LINKS RATE: a fresh lab with the data path under test; sets SRC
# and DST, n1's and n2's addresses on it, and DEV, the device it goes through.
lab() {
	local cfg=$1 links=$2 rate=$3 n l slaves
	[ "$LAB_NODES" = 0 ] || lab_down
	LAB_DIR=$(mktemp -d /tmp/ri2n-lab.XXXXXX)
	# ri2n-1sw: every link through one switch, one-switch mode.
	LAB_TOPO=$([ "$cfg" = ri2n-1sw ] && echo one-switch || echo two-switch)
	export LAB_TOPO
	lab_up 2 "$links"
	if [ "$rate" != none ]; then
		for n in n1 n2; do for ((l = 0; l < links; l++)); do link_shape $n $l "$rate"; done; done
	fi
	slaves=$(seq -s, -f 'eth%g' 0 $((links - 1)))
	for n in n1 n2; do
		case $cfg in
		single | single-1500)
			# The lab's virtual wire carries a TSO frame whole (up to 64 KiB
			# from tap to tap); single-1500 turns TSO off so that, as on a real
			# Ethernet, only MTU-sized frames cross the link.
			[ "$cfg" = single ] || on $n ethtool -K eth0 tso off
			on $n ip addr add "$(addr 1 $n)/24" dev eth0
			DEV=eth0 SRC=$(addr 1 n1) DST=$(addr 1 n2)
			;;
		bond | bond-1500 | bond-arp)
			# bond-1500: TSO off on the slaves, so that bonding too puts only
			# MTU-sized frames on the wire (the kernel segments in software).
			# bond-arp: the ARP monitor instead of miimon, what a site sets
			# against a blackhole (scripts/apps-lab.sh says why "filter").
			on $n modprobe bonding max_bonds=0
			if [ "$cfg" = bond-arp ]; then
				on $n ip link add bond0 type bond mode balance-rr arp_interval 100 \
					arp_ip_target "$(addr 3 "$([ $n = n1 ] && echo n2 || echo n1)")" arp_validate filter
			else
				on $n ip link add bond0 type bond mode balance-rr miimon 100
			fi
			for ((l = 0; l < links; l++)); do
				on $n ip link set eth$l down
				[ "$cfg" != bond-1500 ] || on $n ethtool -K eth$l tso off
				on $n ip link set eth$l master bond0
			done
			on $n ip link set bond0 up
			on $n ip addr add "$(addr 3 $n)/24" dev bond0
			DEV=bond0 SRC=$(addr 3 n1) DST=$(addr 3 n2)
			;;
		mpi-2nic)
			# No driver: OpenMPI's TCP BTL stripes over both NICs itself.
			on $n ip addr add "$(addr 1 $n)/24" dev eth0
			on $n ip addr add "$(addr 2 $n)/24" dev eth1
			DEV=eth0,eth1 SRC=$(addr 1 n1) DST=$(addr 1 n2)
			;;
		ri2n | ri2n-one | ri2n-keyed | ri2n-1sw | ri2n-seg | ri2n-nogro)
			# ri2n-seg: tx_gso=0, ri2n segments GSO packets and stripes the
			# segments (the paper's way); -nogro: rx_gro=0, the
			# slaves' GRO leaves RI2N frames alone. The rest: tx_gso=1.
			on $n modprobe ri2n slaves="$slaves" one_switch="$([ "$cfg" = ri2n-1sw ] && echo 1 || echo 0)" \
				tx_gso="$([ "$cfg" = ri2n-seg ] && echo 0 || echo 1)" rx_gro="$([[ $cfg = *-nogro ]] && echo 0 || echo 1)" \
				${BENCH_RI2N_PARAMS:-}
			# ri2n-keyed: every frame sealed, 12 bytes of MTU less.
			[ "$cfg" != ri2n-keyed ] || on $n sh -c 'echo 00112233445566778899aabbccddeeff > /sys/class/net/ri2n0/ri2n/key'
			on $n ip link set ri2n0 up
			on $n ip addr add "$(addr 0 $n)/24" dev ri2n0
			DEV=ri2n0 SRC=$(addr 0 n1) DST=$(addr 0 n2)
			;;
		esac
	done
	# ri2n-one: ri2n with only link 0 left (link 1's carrier down on both
	# nodes), to tell what the second link costs from what ri2n costs.
	if [ "$cfg" = ri2n-one ]; then
		link_carrier n1 1 down
		link_carrier n2 1 down
		sleep 0.5
	fi
	# bond-arp: the slaves come up once the probes have been answered.
	[ "$cfg" != bond-arp ] || await 30 "bond0's slaves to be up" \
		on n1 sh -c '[ "$(grep -c "MII Status: up" /proc/net/bonding/bond0)" = 3 ]' ||
		fail "bond-arp: the ARP monitor did not bring both slaves up"
	on n1 ping -c 3 -q -W 2 "$DST" >/dev/null || fail "$cfg: no ping to $DST"
}

done_lab() { # NAME: fail the bench on a kernel splat
	lab_check_kernel || fail "kernel splat during $1"
}

# --- 1. ping-pong ------------------------------------------------------------

pingpong() { # CONFIG RATE
	lab "$1" 2 "$2"
	on n2 sh -c 'ri2n-pingpong server >/dev/null 2>&1 &'
	sleep 0.3
	pretty BENCH "ping-pong $1, rate $2"
	on n1 ri2n-pingpong client "$DST" --sizes 64:16M --time "${BENCH_PP_TIME:-0.5}" >"$RAW/pingpong-$1-$2.txt"
	done_lab "ping-pong $1 $2"
}

# --- 2. bulk -------------------------------------------------------------------

NSTAT_KEYS="TcpInSegs TcpOutSegs TcpRetransSegs TcpExtTCPDSACKRecv TcpExtTCPDSACKOfoRecv TcpExtTCPSACKReorder TcpExtTCPTSReorder TcpExtTCPRenoReorder TcpExtTCPSpuriousRTOs TcpExtTCPLossProbes"
nstat_snap() { on "$1" nstat -az $NSTAT_KEYS | awk 'NR > 1 {print $1, $2}'; }
delta() { awk -v k="$3" '$1 == k {v[FILENAME] = $2} END {print v[ARGV[2]] - v[ARGV[1]]}' "$1" "$2"; }
# Kernel-side CPU time (system + irq + softirq) of a guest, in USER_HZ ticks.
sys_ticks() { on "$1" awk '$1 == "cpu" {print $4 + $7 + $8}' /proc/stat; }

bulk() { # CONFIG LINKS RATE STREAMS
	local cfg=$1 links=$2 rate=$3 streams=$4 j s0 s1 c1 c2
	lab "$cfg" "$links" "$rate"
	on n2 iperf3 -s -D
	sleep 0.3
	pretty BENCH "bulk $cfg, $links links, rate $rate, $streams streams"
	nstat_snap n1 >"$LAB_DIR/s0"
	c1=$(sys_ticks n1) c2=$(sys_ticks n2)
	on n1 iperf3 -c "$DST" -t "$SECS" -P "$streams" -J >"$LAB_DIR/iperf.json"
	c1=$(($(sys_ticks n1) - c1)) c2=$(($(sys_ticks n2) - c2))
	nstat_snap n1 >"$LAB_DIR/s1"
	j=$LAB_DIR/iperf.json s0=$LAB_DIR/s0 s1=$LAB_DIR/s1
	local bits bytes
	bits=$(awk -F'[:,]' '/"sum_received"/ {r = 1} r && /"bits_per_second"/ {printf "%.0f\n", $2; exit}' "$j")
	bytes=$(awk -F'[:,]' '/"sum_received"/ {r = 1} r && /"bytes"/ {printf "%.0f\n", $2; exit}' "$j")
	[ -n "$bits" ] || fail "bulk $cfg: iperf3 gave no result"
	# Column 14, tail loss probes: each may bring back a DSACK without
	# anything reordered, over one link as well (the end of a run).
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$cfg" "$links" "$rate" "$streams" \
		"$bits" "$bytes" "$(delta "$s0" "$s1" TcpInSegs)" "$(delta "$s0" "$s1" TcpRetransSegs)" \
		"$(($(delta "$s0" "$s1" TcpExtTCPDSACKRecv) + $(delta "$s0" "$s1" TcpExtTCPDSACKOfoRecv)))" \
		"$(($(delta "$s0" "$s1" TcpExtTCPSACKReorder) + $(delta "$s0" "$s1" TcpExtTCPTSReorder) + $(delta "$s0" "$s1" TcpExtTCPRenoReorder)))" \
		"$(delta "$s0" "$s1" TcpExtTCPSpuriousRTOs)" "$c1" "$c2" "$(delta "$s0" "$s1" TcpExtTCPLossProbes)" >>"$RAW/bulk.tsv"
	done_lab "bulk $cfg"
}

# --- profile (make profile) ----------------------------------------------------

# perf_top NODE: the node's profile by symbol (self time), as shares of the
# time it was busy (idle left out), then by module ([ri2n], the kernel...).
perf_top() {
	local rep="perf report -i /tmp/perf.data --stdio --no-children -g none --percent-limit 0"
	on "$1" sh -c "$rep --sort sym 2>/dev/null" | awk -v top="${PROF_TOP:-60}" '
		/^#/ || NF < 3 {next}
		{p = $1; sub("%", "", p); sym = $0; sub(/^ *[0-9.]+% +\[[a-z.]\] /, "", sym)}
		sym ~ /safe_halt|default_idle|cpu_idle|do_idle|acpi_idle|poll_idle/ {idle += p; next}
		{n++; pct[n] = p; name[n] = sym; busy += p}
		END {
			printf "# busy %.1f%% of the samples; by symbol, share of the busy time:\n", busy
			for (i = 1; i <= n && i <= top; i++) printf "%6.2f%%  %s\n", 100 * pct[i] / busy, name[i]
		}'
	on "$1" sh -c "$rep --sort dso 2>/dev/null" | awk '/^#/ || NF < 2 {next} {print "# dso", $0}' | head -8
}

# irq_delta NODE: interrupts (by line of /proc/interrupts: a NIC's queue,
# the local timer...) and softirqs raised during the workload, as
# "# irq NAME COUNT" lines, counted over every CPU.
irq_delta() {
	on "$1" sh -c 'cat /tmp/irq0; echo --; cat /tmp/irq1' | awk '
		function sum(   i, s) {s = 0; for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+$/) s += $i; else break; return s}
		/^--$/ {after = 1; next}
		$1 ~ /:$/ {k = $1; sub(":", "", k); if ($1 ~ /^[0-9]+:$/) k = k "(" $NF ")"; if (after) b[k] = sum(); else a[k] = sum(); if (!(k in o)) o[k] = ++n}
		END {for (k in b) if (b[k] - a[k] > 0) print "# irq", k, b[k] - a[k]}' | sort -k4 -rn
}

# profile CONFIG rrSIZE|bulk: both guests sampled (cpu-clock, every CPU,
# 1 kHz) for PROF_SECS while n1 runs ping-pong of SIZE bytes or one unshaped bulk
# TCP stream to n2; each node's profile by kernel symbol goes to
# profile-WORKLOAD-CONFIG-NODE.txt, with the run's own figure at its head.
profile() {
	local cfg=$1 work=$2 secs=${PROF_SECS:-8} n figure
	lab "$cfg" 2 none
	on n2 sh -c 'ri2n-pingpong server >/dev/null 2>&1 &'
	on n2 iperf3 -s -D
	sleep 0.3
	pretty BENCH "profile $work over $cfg"
	for n in n1 n2; do
		on $n sh -c 'cat /proc/interrupts /proc/softirqs >/tmp/irq0'
		on $n sh -c "perf record -a -g -F 1000 -e cpu-clock -o /tmp/perf.data -- sleep $((secs + 1)) >/tmp/perf.log 2>&1 &"
	done
	sleep 0.5
	case $work in
	rr*) figure=$(on n1 ri2n-pingpong client "$DST" --sizes "${work#rr}:${work#rr}" --time "$secs" |
		awk '!/^#/ {print $2, "round trips, rtt", $3, "us"; exit}') ;;
	bulk) figure=$(on n1 iperf3 -c "$DST" -t "$secs" -f m | awk '/receiver/ {print $7, $8}') ;;
	esac
	for n in n1 n2; do on $n sh -c 'cat /proc/interrupts /proc/softirqs >/tmp/irq1'; done
	sleep 1.5
	for n in n1 n2; do
		on $n sh -c 'while pidof perf >/dev/null; do sleep 0.2; done'
		{
			echo "# $work over $cfg, $n ($([ $n = n1 ] && echo sender || echo receiver)): $figure"
			echo "# window $((secs + 1)) s"
			irq_delta $n
			perf_top $n
		} >"$RAW/profile-$work-$cfg-$n.txt"
	done
	done_lab "profile $work $cfg"
}

# --- 3. failover ---------------------------------------------------------------

# fault carrier|blackhole on|off: n2's link 1 fails or heals.
fault() {
	case $1/$2 in
	carrier/on) link_carrier n2 1 down ;;
	carrier/off) link_carrier n2 1 up ;;
	blackhole/*) link_blackhole n2 1 "$2" ;;
	esac
}

# n2_carrier_watch up|down: starts timing n2's ri2n seeing link 1's carrier
# go up or down.
n2_carrier_watch() {
	on n2 ri2n events ri2n0 --slave eth1 --state "$1" --initial --count 1 --timeout 9 | awk '{print $1}' >"$LAB_DIR/n2-carrier" &
	N2_WATCH_PID=$!
	sleep 0.2
}
# n2_carrier_result T_HOST: after watch_ms, the n2 watch's result:
# CARRIER_SEEN, ms from the host event at T_HOST to n2's ri2n seeing it, and
# CARRIER_TO_N1, ms from there to the change n1's watch saw (n1's clock;
# "never" if either never happened).
n2_carrier_result() {
	local t2
	CARRIER_SEEN=never CARRIER_TO_N1=never
	wait "$N2_WATCH_PID" && [ -s "$LAB_DIR/n2-carrier" ] || return 0
	t2=$(cat "$LAB_DIR/n2-carrier")
	CARRIER_SEEN=$((t2 - $(guest_offset n2) - $1))
	[ "$WATCHED" = never ] || CARRIER_TO_N1=$(awk -v n1="$(cat "$LAB_DIR/watch")" -v n2="$t2" -v off="$OFF21" 'BEGIN {printf "%.1f", n1 - (n2 - off / 1000)}')
}
# n2_n1_clock: sets OFF21 and ERR21, n2's clock minus n1's and its error
# (µs), measured over ri2n0 (ri2n-pingpong clock).
n2_n1_clock() {
	on n2 sh -c 'ri2n-pingpong server >/dev/null 2>&1 &'
	sleep 0.3
	read -r OFF21 ERR21 < <(on n1 ri2n-pingpong clock "$DST")
}


# failover CONFIG carrier|blackhole: 30 s of bulk TCP n1 -> n2 sampled every
# 0.1 s; n2's link 1 fails at 10 s and heals at 20 s (the receiver's side,
# so the sender learns of it only through the network, as in the paper's
# cable pull). For ri2n, `ri2n events` also times the sender's endpoint (n2,
# eth1) leaving and re-entering service and, for carrier loss, when n2's
# ri2n saw its carrier go and come back: on the host's clock (the cut's
# time; error: the guests' offsets, ~15 ms) and, between the two guests, on
# n1's clock (n2's offset to it measured over ri2n0 to a fraction of a ms).
failover() {
	local cfg=$1 fault=$2 off t0 start cut heal ip watch=$RAW/failover-$1-$2.watch
	lab "$cfg" 2 "$RATE"
	on n2 iperf3 -s -D
	rm -f "$watch"
	if [ "$cfg" = ri2n ]; then
		n2_n1_clock
		{
			echo "clock_err_ms $(guest_offset_err n1)"
			echo "n2_clock_err_ms $(guest_offset_err n2)"
			echo "n2_minus_n1_us $OFF21 $ERR21"
		} >"$watch"
	fi
	sleep 0.3
	pretty BENCH "failover $cfg, $fault"
	off=$(guest_offset n1)
	start=$(host_ms)
	on n1 sh -c "date +%s%3N >/tmp/t0; exec iperf3 -c $DST -t 30 -i 0.1 -J" >"$LAB_DIR/iperf.json" &
	ip=$!
	[ "$cfg" = ri2n ] && { sleep_until $((start + 9500)); watch_start n1 n2 eth1 'failed|peer-failed' 9; }
	[ "$cfg/$fault" = ri2n/carrier ] && n2_carrier_watch down
	sleep_until $((start + 10000))
	cut=$(host_ms)
	fault "$fault" on
	[ "$cfg" = ri2n ] && { watch_ms "$cut"; echo "detect_ms $WATCHED" >>"$watch"; }
	if [ "$cfg/$fault" = ri2n/carrier ]; then
		n2_carrier_result "$cut"
		echo "carrier_down_seen_ms $CARRIER_SEEN" >>"$watch"
		echo "carrier_down_to_n1_ms $CARRIER_TO_N1" >>"$watch"
	fi
	[ "$cfg" = ri2n ] && { sleep_until $((start + 19500)); watch_start n1 n2 eth1 up 9; }
	[ "$cfg/$fault" = ri2n/carrier ] && n2_carrier_watch up
	sleep_until $((start + 20000))
	heal=$(host_ms)
	fault "$fault" off
	[ "$cfg" = ri2n ] && { watch_ms "$heal"; echo "recover_ms $WATCHED" >>"$watch"; }
	if [ "$cfg/$fault" = ri2n/carrier ]; then
		n2_carrier_result "$heal"
		echo "carrier_up_seen_ms $CARRIER_SEEN" >>"$watch"
		echo "carrier_up_to_n1_ms $CARRIER_TO_N1" >>"$watch"
	fi
	wait $ip
	t0=$(on n1 cat /tmp/t0)
	# The cut and the heal on iperf3's clock (ms after the client started).
	{
		echo "# cut_ms $((cut + off - t0)) heal_ms $((heal + off - t0))"
		awk -F'[:,]' '
			/"intervals"/ {inside = 1}
			inside && /"sum"/ {s = 1}
			s && /"end":/ {end = $2}
			s && /"bits_per_second"/ {printf "%.2f\t%.2f\n", end, $2 / 1e6; s = 0}
			/"sum_sent"/ {inside = 0}' "$LAB_DIR/iperf.json"
	} >"$RAW/failover-$cfg-$fault.tsv"
	done_lab "failover $cfg $fault"
}

# failover_samples carrier|blackhole N: N cuts and heals of n2's link 1,
# 2 s apart, under bulk TCP n1 -> n2, for ri2n: one timeline shows one
# failover, these give its spread. One line per cut in
# failover-ri2n-FAULT-samples.tsv: ms from the cut to n1 no longer sending
# on the link (out), from the heal to n1 sending on it again (back) and,
# for carrier loss, from the cut to n2's ri2n seeing it (seen) and from
# there to n1 stopping (to_n1, the two guests' clocks compared over ri2n0).
failover_samples() {
	local fault=$1 n=$2 i cut heal out back ip out_file=$RAW/failover-ri2n-$1-samples.tsv
	lab ri2n 2 "$RATE"
	on n2 iperf3 -s -D
	n2_n1_clock
	pretty BENCH "failover samples ri2n, $fault, $n cuts"
	on n1 iperf3 -c "$DST" -t $((n * 5 + 5)) >/dev/null &
	ip=$!
	sleep 2
	{
		echo "# n2_minus_n1_us $OFF21 $ERR21 n1_err_ms $(guest_offset_err n1) n2_err_ms $(guest_offset_err n2)"
		printf '#cut\tout_ms\tback_ms\tseen_ms\tto_n1_ms\n'
	} >"$out_file"
	for ((i = 1; i <= n; i++)); do
		watch_start n1 n2 eth1 'failed|peer-failed' 9
		[ "$fault" = carrier ] && n2_carrier_watch down
		cut=$(host_ms)
		fault "$fault" on
		watch_ms "$cut"
		out=$WATCHED
		CARRIER_SEEN=- CARRIER_TO_N1=-
		[ "$fault" = carrier ] && n2_carrier_result "$cut"
		sleep_until $((cut + 2000))
		watch_start n1 n2 eth1 up 9
		heal=$(host_ms)
		fault "$fault" off
		watch_ms "$heal"
		back=$WATCHED
		printf '%s\t%s\t%s\t%s\t%s\n' "$i" "$out" "$back" "$CARRIER_SEEN" "$CARRIER_TO_N1" >>"$out_file"
		sleep_until $((heal + 2000))
	done
	wait $ip
	done_lab "failover samples $fault"
}

# --- 4. MPI --------------------------------------------------------------------

# mpi CONFIG: the OpenMPI ping-pong (tools/mpi-pingpong.c, Debian's
# OpenMPI, nothing changed) between n1 and n2, TCP BTL over ri2n0, eth0,
# or eth0 and eth1 (mpi-2nic).
mpi() {
	local cfg=$1
	lab "$cfg" 2 "$RATE"
	pretty BENCH "MPI ping-pong over $DEV"
	on n1 mpirun --allow-run-as-root --oversubscribe -np 2 -H "$SRC,$DST" \
		--mca plm_rsh_agent ri2n-rsh --mca btl tcp,self --mca btl_tcp_if_include "$DEV" \
		--mca oob_tcp_if_include "${DEV%%,*}" --bind-to none \
		mpi-pingpong >"$RAW/mpi-$cfg.txt" || fail "mpirun over $DEV failed"
	done_lab "MPI $cfg"
}

# --- 5. paired rounds ---------------------------------------------------------

# paired RATE: scripts/pair-lab.sh in a lab of its own (its own process, so
# its own netns), BENCH_PAIR_ROUNDS rounds; rounds and summary in
# raw/paired-RATE.txt.
paired() {
	[ "$LAB_NODES" = 0 ] || lab_down
	pretty BENCH "paired rounds, rate $1"
	LAB_DIR=$(mktemp -d /tmp/ri2n-lab.XXXXXX) PAIR_RATE=$1 PAIR_TSO=off PAIR_BOND=1 \
		PAIR_SIZES="${BENCH_PAIR_SIZES:-64 4096 16384 65536}" PAIR_ROUNDS=${BENCH_PAIR_ROUNDS:-5} \
		PAIR_SECS=${BENCH_PAIR_SECS:-2} PAIR_BULK=${BENCH_PAIR_BULK:-$SECS} PAIR_OUT="$RAW/paired-$1.txt" \
		bash "$RI2N_ROOT/scripts/pair-lab.sh" >&2 || fail "paired rounds at $1"
}

commit="$(git -C "$RI2N_ROOT" rev-parse --short HEAD)$(git -C "$RI2N_ROOT" diff --quiet HEAD -- . ':!bench' || echo '+dirty')"
# A run of some configurations only (BENCH_*_CFGS) adds rows to an existing
# report: the report says which, from when.
partial="${BENCH_PP_CFGS:+ BENCH_PP_CFGS=\"$BENCH_PP_CFGS\"}${BENCH_BULK_CFGS:+ BENCH_BULK_CFGS=\"$BENCH_BULK_CFGS\"}${BENCH_FAILOVER_CFGS:+ BENCH_FAILOVER_CFGS=\"$BENCH_FAILOVER_CFGS\"}${BENCH_MPI_CFGS:+ BENCH_MPI_CFGS=\"$BENCH_MPI_CFGS\"}"
if [ -n "$partial" ] && [ -f "$RAW/meta.txt" ]; then
	echo "rerun $(date -u +%Y-%m-%dT%H:%MZ), commit $commit, BENCH_ONLY=$ONLY$partial" >>"$RAW/meta.txt"
else {
	echo "date $(date -u +%Y-%m-%dT%H:%MZ)"
	echo "commit $commit"
	echo "kernel $(cat "${LAB_KERNEL%/arch/x86/boot/bzImage}/include/config/kernel.release") ($LAB_VARIANT, $(basename "${LAB_KERNEL%/arch/x86/boot/bzImage}"))"
	echo "qemu $(qemu-system-x86_64 --version | head -1)"
	echo "host $(nproc) x $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)"
	echo "rate $RATE"
	echo "secs $SECS"
} >"$RAW/meta.txt"; fi

if want pingpong; then
	for cfg in ${BENCH_PP_CFGS:-single bond bond-1500 ri2n ri2n-1sw ri2n-seg}; do pingpong $cfg "$RATE"; done
	for cfg in ${BENCH_PP_CFGS:-single single-1500 bond bond-1500 ri2n ri2n-one ri2n-1sw ri2n-seg}; do pingpong $cfg none; done
fi
if want bulk; then
	printf '#cfg\tlinks\trate\tstreams\tbits_per_s\tbytes\tacks_in\tretrans\tdsacks\treorder\tspurious_rto\tsys_ticks_tx\tsys_ticks_rx\n' >"$RAW/bulk.tsv"
	for links in ${BENCH_BULK_LINKS:-2 4}; do
		# single-1500 once: with MTU frames on the wire as well, one link's
		# TCP health (ACKs per MiB) is ri2n's like-for-like reference.
		for cfg in ${BENCH_BULK_CFGS:-single $([ $links = 2 ] && echo single-1500) bond $([ $links = 2 ] && echo bond-arp) ri2n ri2n-keyed $([ $links = 2 ] && echo ri2n-1sw ri2n-seg)}; do
			for streams in ${BENCH_STREAMS:-1 4}; do bulk $cfg $links "$RATE" $streams; done
		done
	done
	for cfg in ${BENCH_BULK_CFGS:-single single-1500 bond bond-1500 ri2n ri2n-keyed ri2n-1sw ri2n-seg ri2n-nogro}; do
		for streams in ${BENCH_STREAMS:-1 4}; do bulk $cfg 2 none $streams; done
	done
fi
if want failover; then
	for cfg in ${BENCH_FAILOVER_CFGS:-ri2n bond bond-arp}; do
		for fault in carrier blackhole; do failover $cfg $fault; done
	done
	if [[ " ${BENCH_FAILOVER_CFGS:-ri2n} " == *" ri2n "* ]]; then
		for fault in carrier blackhole; do failover_samples $fault "${BENCH_FAILOVER_CUTS:-7}"; done
	fi
fi
if want mpi; then
	for cfg in ${BENCH_MPI_CFGS:-single ri2n mpi-2nic}; do mpi $cfg; done
fi
if want paired; then
	for rate in "$RATE" none; do paired "$rate"; done
fi
if want profile; then
	for work in ${PROF_WORK:-rr64 rr16384 bulk}; do
		for cfg in ${PROF_CFGS:-single-1500 bond-1500 ri2n ri2n-seg}; do profile $cfg $work; done
	done
fi
[ "$LAB_NODES" = 0 ] || lab_down
if [ "$ONLY" = profile ]; then
	"$RI2N_ROOT/scripts/profile-report.sh" "$RAW"
else
	"$RI2N_ROOT/scripts/bench-report.sh" "$RAW"
fi
