#!/usr/bin/env bash
# make bench-apps: real MPI work and the field's standard clients over ri2n,
# against the baselines an HPC site would choose, in the lab. Raw results go
# to bench/results/apps/raw/, and scripts/apps-report.sh turns them into
# bench/results/apps/README.md and plots.
#
#   1. LAMMPS (Debian's lmp, OpenMPI TCP BTL), the LJ melt (tools/apps/in.lj,
#      APPS_LJ_BOX cells a side, APPS_LJ_STEPS steps), one rank per node, on
#      2 and 4 nodes: uncut, then with n2's link 1 cut a third of the way
#      through the uncut run's loop time and healed at two thirds, as carrier
#      loss and as a silent blackhole. Rank 0's thermo lines are stamped with
#      the host's clock as they arrive: the progress timeline.
#   2. 2 nodes: netperf TCP_RR (1, 64, 1024, 4096 B) and TCP_STREAM, sockperf
#      UDP ping-pong (p50/p99/p99.9), and tools/pingpong at the same sizes
#      for comparison.
#   3. 4 nodes: OSU-style all-to-all and allreduce latency (tools/mpi-coll.c)
#      at 8 B, 1 KiB, 64 KiB and 1 MiB.
#
# Configurations (APPS_CFGS), all with two links:
#   single     eth0 alone (a cut of link 1 does not touch it: not cut);
#   bond       bonding balance-rr, miimon 100;
#   bond-arp   bonding balance-rr, arp_interval 100, every other node an
#              arp_ip_target, arp_validate filter (only ARP counts as a
#              sign of life): what a site sets against a blackhole. With
#              arp_validate all, balance-rr's slaves never come up: once
#              down, a slave trusts an ARP only through an active slave or
#              the current ARP slave, and balance-rr has neither then
#              (bond_arp_rcv);
#   mpi-2nic   no driver: OpenMPI's TCP BTL over eth0 and eth1 itself
#              (btl_tcp_if_include eth0,eth1; its out-of-band channel on
#              eth0, the link not cut);
#   ri2n, ri2n-keyed   ri2n0 over eth0,eth1, without and with a key.
# Clients (part 2) run over single, bond and ri2n; collectives (part 3) over
# single, bond, mpi-2nic and ri2n.
#
# Every link is shaped to APPS_RATE (tbf on the host side of each tap, as
# in make bench), so that the links, not the emulated CPUs, carry the
# communication's cost. APPS_ONLY=lammps,clients,coll selects parts;
# APPS_NODES="2 4" the node counts.
set -u
. "$RI2N_ROOT/tests/lab/lib.sh"
RATE=${APPS_RATE:-100mbit}
ONLY=${APPS_ONLY:-lammps,clients,coll}
NODES=${APPS_NODES:-2 4}
CFGS=${APPS_CFGS:-single bond bond-arp mpi-2nic ri2n ri2n-keyed}
BOX=${APPS_LJ_BOX:-16}
STEPS=${APPS_LJ_STEPS:-200}
THERMO=${APPS_LJ_THERMO:-5}
SECS=${APPS_SECS:-5}
RAW=${APPS_RAW:-$RI2N_ROOT/bench/results/apps/raw}
mkdir -p "$RAW"

want() { [[ ",$ONLY," == *",$1,"* ]]; }
addr() { echo "10.$1.0.${2#n}"; } # NET NODE

# setup CONFIG NODES: a fresh lab of NODES nodes, two shaped links each, with
# CONFIG's data path; sets DEV (the interface MPI uses; "eth0,eth1" for
# mpi-2nic), HOSTS (the nodes' addresses on it, comma-separated) and NET.
setup() {
	local cfg=$1 nodes=$2 i j n l targets
	[ "$LAB_NODES" = 0 ] || lab_down
	LAB_DIR=$(mktemp -d /tmp/ri2n-lab.XXXXXX)
	lab_up "$nodes" 2
	for ((i = 1; i <= nodes; i++)); do
		for l in 0 1; do link_shape n$i $l "$RATE"; done
	done
	case $cfg in
	single) DEV=eth0 NET=1 ;;
	bond | bond-arp) DEV=bond0 NET=3 ;;
	mpi-2nic) DEV=eth0,eth1 NET=1 ;;
	ri2n | ri2n-keyed) DEV=ri2n0 NET=0 ;;
	*) fail "no configuration '$cfg'" ;;
	esac
	HOSTS=
	for ((i = 1; i <= nodes; i++)); do
		n=n$i
		HOSTS=$HOSTS${HOSTS:+,}$(addr $NET $n)
		case $cfg in
		single) on $n ip addr add "$(addr 1 $n)/24" dev eth0 ;;
		mpi-2nic)
			on $n ip addr add "$(addr 1 $n)/24" dev eth0
			on $n ip addr add "$(addr 2 $n)/24" dev eth1
			;;
		bond | bond-arp)
			on $n modprobe bonding max_bonds=0
			if [ "$cfg" = bond ]; then
				on $n ip link add bond0 type bond mode balance-rr miimon 100
			else
				targets=
				for ((j = 1; j <= nodes; j++)); do
					[ $j = $i ] || targets=$targets${targets:+,}$(addr 3 n$j)
				done
				on $n ip link add bond0 type bond mode balance-rr arp_interval 100 \
					arp_ip_target "$targets" arp_validate filter
			fi
			for l in 0 1; do
				on $n ip link set eth$l down
				on $n ip link set eth$l master bond0
			done
			on $n ip link set bond0 up
			on $n ip addr add "$(addr 3 $n)/24" dev bond0
			;;
		ri2n | ri2n-keyed)
			on $n modprobe ri2n slaves=eth0,eth1
			[ "$cfg" = ri2n ] || on $n sh -c 'echo 00112233445566778899aabbccddeeff > /sys/class/net/ri2n0/ri2n/key'
			on $n ip link set ri2n0 up
			on $n ip addr add "$(addr 0 $n)/24" dev ri2n0
			;;
		esac
	done
	for ((i = 2; i <= nodes; i++)); do
		await 30 "n1 to reach n$i over $cfg" on n1 ping -c 1 -q -W 1 "$(addr $NET n$i)" ||
			fail "$cfg: n1 does not reach n$i"
	done
	# bond-arp: its slaves come up only once the probes have been answered.
	[ "$cfg" != bond-arp ] || await 30 "bond0's slaves to be up" \
		on n1 sh -c '[ "$(grep -c "MII Status: up" /proc/net/bonding/bond0)" = 3 ]' ||
		fail "bond-arp: the ARP monitor did not bring both slaves up"
}

# mpi NP CMD...: mpirun on n1 over the configuration's interfaces, one rank
# per node.
mpi() {
	local np=$1
	shift
	on n1 mpirun --allow-run-as-root --oversubscribe -np "$np" -H "$HOSTS" \
		--mca plm_rsh_agent ri2n-rsh --mca btl tcp,self --mca btl_tcp_if_include "$DEV" \
		--mca oob_tcp_if_include "${DEV%%,*}" --bind-to none "$@"
}

# --- 1. LAMMPS ------------------------------------------------------------------

# lammps_run NODES CONFIG FAULT CAP_S: one LJ melt run; FAULT none, carrier
# or blackhole (n2's link 1 cut at CUT_MS and healed at HEAL_MS after the
# loop starts). Every output line goes to the raw file stamped with the
# host's clock (ms); the run is stopped after CAP_S seconds.
lammps_run() {
	local nodes=$1 cfg=$2 fault=$3 cap=$4 out pid t0 start
	out=$RAW/lammps-$nodes-$cfg-$fault.txt
	pretty APPS "LAMMPS, $nodes nodes, $cfg, fault $fault"
	start=$(host_ms)
	echo "# start_ms $start" >"$out"
	mpi "$nodes" lmp -in /usr/share/ri2n/in.lj -var b "$BOX" -var s "$STEPS" -var t "$THERMO" -log none 2>&1 |
		while IFS= read -r line; do printf '%s %s\n' "$(host_ms)" "$line"; done >>"$out" &
	pid=$!
	# The loop starts with the thermo header.
	t0=
	while [ -z "$t0" ] && kill -0 $pid 2>/dev/null && (($(host_ms) - start < cap * 1000)); do
		sleep 0.2
		t0=$(awk '$2 == "Step" && $3 == "CPU" {print $1; exit}' "$out")
	done
	if [ -n "$t0" ] && [ "$fault" != none ]; then
		sleep_until $((t0 + CUT_MS))
		echo "# cut_ms $(host_ms)" >>"$out"
		fault "$fault" on
		sleep_until $((t0 + HEAL_MS))
		echo "# heal_ms $(host_ms)" >>"$out"
		fault "$fault" off
	fi
	while kill -0 $pid 2>/dev/null && (($(host_ms) - start < cap * 1000)); do sleep 0.5; done
	if kill -0 $pid 2>/dev/null; then
		echo "# stopped_ms $(host_ms) (cap ${cap} s)" >>"$out"
		for ((i = 1; i <= nodes; i++)); do on n$i pkill -9 -f 'lmp|orted|orterun' 2>/dev/null; done
		kill $pid 2>/dev/null
	fi
	wait $pid 2>/dev/null
	# Whatever the cut did, the next run starts from a healed link.
	[ "$fault" = none ] || fault "$fault" off 2>/dev/null
	LOOP=$(awk '$2 == "Loop" {print $5; exit}' "$out")
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$nodes" "$cfg" "$fault" "${LOOP:-none}" \
		"$(awk '$2 == "Comm" {print $NF; exit}' "$out")" \
		"$(awk '$2 == "Step" {h = 1; next} h && $2 ~ /^[0-9]+$/ && NF == 5 {s = $2} END {print s + 0}' "$out")" >>"$RAW/lammps.tsv"
}

# fault carrier|blackhole on|off: n2's link 1 fails or heals.
fault() {
	case $1/$2 in
	carrier/on) link_carrier n2 1 down ;;
	carrier/off) link_carrier n2 1 up ;;
	blackhole/*) link_blackhole n2 1 "$2" ;;
	esac
}

# sleep_until T_HOST_MS
sleep_until() { sleep "$(awk -v t="$1" -v now="$(host_ms)" 'BEGIN {d = (t - now) / 1000; print (d > 0 ? d : 0)}')"; }

lammps() { # NODES CONFIG: uncut, then cut by carrier and by blackhole
	local nodes=$1 cfg=$2 fault
	lammps_run "$nodes" "$cfg" none "${APPS_CAP:-600}"
	[ "$cfg" != single ] || return 0
	if [ -z "$LOOP" ]; then
		pretty APPS "LAMMPS $cfg did not finish uncut: no cut runs"
		return 0
	fi
	CUT_MS=$(awk -v t="$LOOP" 'BEGIN {printf "%.0f", t * 1000 / 3}')
	HEAL_MS=$(awk -v t="$LOOP" 'BEGIN {printf "%.0f", t * 2000 / 3}')
	for fault in carrier blackhole; do
		lammps_run "$nodes" "$cfg" $fault "$(awk -v t="$LOOP" 'BEGIN {printf "%.0f", 3 * t + 60}')"
	done
}

# --- 2. clients -----------------------------------------------------------------

clients() { # CONFIG (2 nodes, set up): netperf, sockperf, tools/pingpong
	local cfg=$1 dst size
	dst=$(addr $NET n2)
	pretty APPS "clients over $cfg"
	on n2 netserver >/dev/null 2>&1
	on n2 sh -c 'sockperf server --tcp -i 0.0.0.0 >/dev/null 2>&1 &'
	on n2 sh -c 'sockperf server -i 0.0.0.0 >/dev/null 2>&1 &'
	on n2 sh -c 'ri2n-pingpong server >/dev/null 2>&1 &'
	sleep 0.5
	for size in 1 64 1024 4096; do
		# -P 0: no banner; the result line is "local remote req resp secs trans/s".
		printf '%s\tTCP_RR\t%s\t%s\n' "$cfg" "$size" \
			"$(on n1 netperf -P 0 -H "$dst" -l "$SECS" -t TCP_RR -- -r "$size,$size" | awk 'NF >= 6 {print $6; exit}')" >>"$RAW/netperf.tsv"
	done
	printf '%s\tTCP_STREAM\t-\t%s\n' "$cfg" \
		"$(on n1 netperf -P 0 -H "$dst" -l "$SECS" -t TCP_STREAM | awk 'NF >= 5 {print $5; exit}')" >>"$RAW/netperf.tsv"
	for size in 64 1024; do
		on n1 sockperf ping-pong -i "$dst" -m "$size" -t "$SECS" --full-rtt >"$RAW/sockperf-$cfg-udp-$size.txt" 2>&1
		on n1 sockperf ping-pong --tcp -i "$dst" -m "$size" -t "$SECS" --full-rtt >"$RAW/sockperf-$cfg-tcp-$size.txt" 2>&1
	done
	for size in 1 64 1024 4096; do
		on n1 ri2n-pingpong client "$dst" --sizes "$size:$size" --time "$SECS" | grep -v '^#'
	done >"$RAW/pingpong-$cfg.txt"
}

# --- 3. collectives -------------------------------------------------------------

coll() { # CONFIG NODES (set up)
	pretty APPS "collectives, $2 nodes, $1"
	mpi "$2" mpi-coll "${APPS_COLL_SECS:-2}" >"$RAW/coll-$2-$1.txt" 2>&1 || pretty APPS "mpi-coll over $1 failed"
}

{
	echo "date $(date -u +%Y-%m-%dT%H:%MZ)"
	echo "commit $(git -C "$RI2N_ROOT" rev-parse --short HEAD)$(git -C "$RI2N_ROOT" diff --quiet HEAD -- . ':!bench' || echo '+dirty')"
	echo "kernel $(cat "${LAB_KERNEL%/arch/x86/boot/bzImage}/include/config/kernel.release") ($LAB_VARIANT)"
	echo "qemu $(qemu-system-x86_64 --version | head -1)"
	echo "host $(nproc) x $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)"
	echo "lammps $(dpkg-query -W -f='${Version}' lammps) openmpi $(dpkg-query -W -f='${Version}' openmpi-bin)"
	echo "netperf $(dpkg-query -W -f='${Version}' netperf) sockperf $(dpkg-query -W -f='${Version}' sockperf)"
	echo "rate $RATE"
	echo "lj_box $BOX"
	echo "lj_steps $STEPS"
	echo "lj_thermo $THERMO"
	echo "secs $SECS"
} >"$RAW/meta.txt"
want lammps && printf '#nodes\tcfg\tfault\tloop_s\tcomm_pct\tlast_step\n' >"$RAW/lammps.tsv"
want clients && printf '#cfg\ttest\tbytes\tresult\n' >"$RAW/netperf.tsv"

for nodes in $NODES; do
	for cfg in $CFGS; do
		# A configuration's lab is booted only for what it runs here.
		run_lammps=0 run_clients=0 run_coll=0
		want lammps && run_lammps=1
		[ "$nodes" = 2 ] && want clients && [[ " single bond ri2n " == *" $cfg "* ]] && run_clients=1
		[ "$nodes" = 4 ] && want coll && [[ " single bond mpi-2nic ri2n " == *" $cfg "* ]] && run_coll=1
		[ $((run_lammps + run_clients + run_coll)) != 0 ] || continue
		setup "$cfg" "$nodes"
		[ $run_clients = 0 ] || clients "$cfg"
		[ $run_coll = 0 ] || coll "$cfg" "$nodes"
		[ $run_lammps = 0 ] || lammps "$nodes" "$cfg"
		lab_check_kernel || fail "kernel splat during $cfg on $nodes nodes"
	done
done
[ "$LAB_NODES" = 0 ] || lab_down
python3 "$RI2N_ROOT/scripts/apps-report.py" "$RAW"
