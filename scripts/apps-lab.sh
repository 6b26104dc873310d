#!/usr/bin/env bash
# make bench-apps: real MPI work and the field's standard clients over ri2n,
# against the baselines an HPC site would choose, in the lab. Raw results go
# to bench/results/apps/raw/, and scripts/apps-report.py turns them into
# bench/results/apps/README.md and plots.
#
# The configurations differ by a few percent where this host's speed drifts
# by tens of percent over minutes, so every one of them is in the same lab
# at once, on links of its own, and they run by turns: APPS_ROUNDS rounds,
# each in another order, and the report takes the median of the rounds'
# ratios.
#
#   eth0, eth1   ri2n0 10.0.0.x      ri2n; ri2n-keyed (a key set for the run)
#   eth2         10.1.0.x            single: one link
#   eth3, eth4   bond0 10.3.0.x      bond: balance-rr, miimon 100;
#                                    bond-arp: the same bond switched to the
#                                    ARP monitor for the run
#   eth5, eth6   10.5.0.x, 10.6.0.x  mpi-2nic: no driver, OpenMPI's TCP BTL
#                                    over both NICs itself
#
# bond-arp is what a site sets against a blackhole: arp_interval 100, every
# other node an arp_ip_target, arp_validate filter (only ARP counts as a
# sign of life). With arp_validate all, balance-rr's slaves never come up:
# once down, a slave trusts an ARP only through an active slave or the
# current ARP slave, and balance-rr has neither then (bond_arp_rcv).
#
# Parts (APPS_ONLY=lammps,clients,coll; APPS_NODES="2 4"):
#   1. LAMMPS (Debian's lmp, OpenMPI TCP BTL), the LJ melt (tools/apps/in.lj,
#      APPS_LJ_BOX cells a side, APPS_LJ_STEPS steps), one rank per node:
#      every configuration uncut, by turns; then each once with its link 1
#      (ri2n eth1, bond eth4, mpi-2nic eth6) of n2 cut a third of the way
#      through its median uncut loop time and healed at two thirds, as
#      carrier loss and as a silent blackhole (one link is not cut). Rank
#      0's thermo lines are stamped with the host's clock as they arrive:
#      the progress timeline.
#   2. 2 nodes: netperf TCP_RR (1, 64, 1024, 4096 B) and TCP_STREAM, sockperf
#      UDP and TCP ping-pong (64 B, p50/p99/p99.9), and tools/pingpong at the
#      sizes of TCP_RR, over one link, bonding and ri2n.
#   3. 4 nodes: OSU-style all-to-all and allreduce latency (tools/mpi-coll.c)
#      at 8 B, 1 KiB, 64 KiB and 1 MiB, over one link, bonding, OpenMPI over
#      both NICs and ri2n.
#
# Every link is shaped to APPS_RATE (tbf on the host side of each tap, as in
# make bench), so that the links, not the emulated CPUs, carry the
# communication's cost.
set -u
. "$RI2N_ROOT/tests/lab/lib.sh"
RATE=${APPS_RATE:-100mbit}
ONLY=${APPS_ONLY:-lammps,clients,coll}
NODES=${APPS_NODES:-2 4}
CFGS=${APPS_CFGS:-single bond bond-arp mpi-2nic ri2n ri2n-keyed}
ROUNDS=${APPS_ROUNDS:-3}
BOX=${APPS_LJ_BOX:-16}
STEPS=${APPS_LJ_STEPS:-150}
THERMO=${APPS_LJ_THERMO:-5}
SECS=${APPS_SECS:-2}
RAW=${APPS_RAW:-$RI2N_ROOT/bench/results/apps/raw}
KEY=00112233445566778899aabbccddeeff
mkdir -p "$RAW"

want() { [[ ",$ONLY," == *",$1,"* ]]; }
# addr NET NODE
addr() { echo "10.$1.0.${2#n}"; }
# The network of a configuration's addresses, its interfaces (for OpenMPI;
# the first also carries its out-of-band channel) and the link a cut takes.
net_of() { case $1 in ri2n*) echo 0 ;; single) echo 1 ;; bond*) echo 3 ;; mpi-2nic) echo 5 ;; esac; }
dev_of() { case $1 in ri2n*) echo ri2n0 ;; single) echo eth2 ;; bond*) echo bond0 ;; mpi-2nic) echo eth5,eth6 ;; esac; }
cut_link() { case $1 in ri2n*) echo 1 ;; bond*) echo 4 ;; mpi-2nic) echo 6 ;; *) echo none ;; esac; }
# rotate ROUND WORD...: the words, starting at the ROUND-th (1-based, cyclic).
rotate() {
	local r=$1 i
	shift
	local w=("$@")
	for ((i = 0; i < ${#w[@]}; i++)); do echo "${w[(i + r - 1) % ${#w[@]}]}"; done
}

# lab_all NODES: a fresh lab of NODES nodes with every configuration's
# links and devices (the table above), every link shaped.
lab_all() {
	local nodes=$1 i n l
	[ "$LAB_NODES" = 0 ] || lab_down
	LAB_DIR=$(mktemp -d /tmp/ri2n-lab.XXXXXX)
	lab_up "$nodes" 7
	for ((i = 1; i <= nodes; i++)); do
		n=n$i
		for ((l = 0; l < 7; l++)); do link_shape $n $l "$RATE"; done
		on $n modprobe ri2n slaves=eth0,eth1
		on $n ip link set ri2n0 up
		on $n ip addr add "$(addr 0 $n)/24" dev ri2n0
		on $n ip addr add "$(addr 1 $n)/24" dev eth2
		on $n modprobe bonding max_bonds=0
		on $n ip link add bond0 type bond mode balance-rr miimon 100
		for l in 3 4; do
			on $n ip link set eth$l down
			on $n ip link set eth$l master bond0
		done
		on $n ip link set bond0 up
		on $n ip addr add "$(addr 3 $n)/24" dev bond0
		on $n ip addr add "$(addr 5 $n)/24" dev eth5
		on $n ip addr add "$(addr 6 $n)/24" dev eth6
	done
	BOND_MON=mii KEYED=0
	for cfg in single bond mpi-2nic ri2n; do reach "$cfg"; done
}

# reach CONFIG: n1 reaches every other node over CONFIG's addresses.
reach() {
	local i net
	net=$(net_of "$1")
	for ((i = 2; i <= LAB_NODES; i++)); do
		await 30 "n1 to reach n$i over $1" on n1 ping -c 1 -q -W 1 "$(addr "$net" n$i)" ||
			fail "$1: n1 does not reach n$i"
		[ "$1" != mpi-2nic ] || await 30 "n1 to reach n$i over eth6" on n1 ping -c 1 -q -W 1 "$(addr 6 n$i)" ||
			fail "$1: n1 does not reach n$i over eth6"
	done
}

# use CONFIG: what CONFIG needs of the shared devices, set for its run: the
# bond's monitor, ri2n0's key.
use() {
	local cfg=$1 i j n targets
	case $cfg in
	bond | bond-arp)
		local want=mii
		[ "$cfg" = bond ] || want=arp
		[ "$BOND_MON" != "$want" ] || return 0
		for ((i = 1; i <= LAB_NODES; i++)); do
			n=n$i
			if [ $want = arp ]; then
				targets=
				for ((j = 1; j <= LAB_NODES; j++)); do
					[ $j = $i ] || targets=$targets${targets:+,}$(addr 3 n$j)
				done
				on $n ip link set bond0 type bond miimon 0 arp_interval 100 arp_ip_target "$targets" arp_validate filter
			else
				on $n ip link set bond0 type bond arp_interval 0 miimon 100
			fi
		done
		BOND_MON=$want
		for ((i = 1; i <= LAB_NODES; i++)); do
			await 30 "n$i's bond0 slaves to be up ($want monitor)" \
				on n$i sh -c '[ "$(grep -c "MII Status: up" /proc/net/bonding/bond0)" = 3 ]' ||
				fail "$cfg: bond0's slaves are not up on n$i"
		done
		reach "$cfg"
		;;
	ri2n | ri2n-keyed)
		local want=0
		[ "$cfg" = ri2n ] || want=1
		[ "$KEYED" != "$want" ] || return 0
		for ((i = 1; i <= LAB_NODES; i++)); do
			if [ $want = 1 ]; then
				on n$i sh -c "echo $KEY > /sys/class/net/ri2n0/ri2n/key"
			else
				# Keys off leave the MTU a key lowered: take it back.
				on n$i sh -c 'echo none > /sys/class/net/ri2n0/ri2n/key'
				on n$i ip link set ri2n0 mtu 1492
			fi
		done
		KEYED=$want
		reach "$cfg"
		;;
	esac
}

# mpi CONFIG CMD...: mpirun on n1 over CONFIG's interfaces, one rank per node.
mpi() {
	local cfg=$1 dev hosts='' i
	shift
	dev=$(dev_of "$cfg")
	for ((i = 1; i <= LAB_NODES; i++)); do hosts=$hosts${hosts:+,}$(addr "$(net_of "$cfg")" n$i); done
	on n1 mpirun --allow-run-as-root --oversubscribe -np "$LAB_NODES" -H "$hosts" \
		--mca plm_rsh_agent ri2n-rsh --mca btl tcp,self --mca btl_tcp_if_include "$dev" \
		--mca oob_tcp_if_include "${dev%%,*}" --bind-to none "$@"
}

# fault LINK carrier|blackhole on|off: n2's LINK fails or heals.
fault() {
	case $2/$3 in
	carrier/on) link_carrier n2 "$1" down ;;
	carrier/off) link_carrier n2 "$1" up ;;
	blackhole/*) link_blackhole n2 "$1" "$3" ;;
	esac
}


# --- 1. LAMMPS ------------------------------------------------------------------

# lammps_run CONFIG FAULT CAP_S TAG: one LJ melt run over CONFIG; FAULT none,
# carrier or blackhole (n2's link of the configuration cut at CUT_MS and
# healed at HEAL_MS after the loop starts). Every output line goes to
# lammps-NODES-CONFIG-TAG.txt stamped with the host's clock (ms); the run
# is stopped after CAP_S seconds. Sets LOOP (empty: did not finish).
lammps_run() {
	local cfg=$1 fault=$2 cap=$3 tag=$4 out pid t0 start link i
	out=$RAW/lammps-$LAB_NODES-$cfg-$tag.txt
	link=$(cut_link "$cfg")
	use "$cfg"
	pretty APPS "LAMMPS, $LAB_NODES nodes, $cfg, $tag"
	start=$(host_ms)
	echo "# start_ms $start" >"$out"
	mpi "$cfg" lmp -in /usr/share/ri2n/in.lj -var b "$BOX" -var s "$STEPS" -var t "$THERMO" -log none 2>&1 |
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
		fault "$link" "$fault" on
		sleep_until $((t0 + HEAL_MS))
		echo "# heal_ms $(host_ms)" >>"$out"
		fault "$link" "$fault" off
	fi
	while kill -0 $pid 2>/dev/null && (($(host_ms) - start < cap * 1000)); do sleep 0.5; done
	if kill -0 $pid 2>/dev/null; then
		echo "# stopped_ms $(host_ms) (cap ${cap} s)" >>"$out"
		for ((i = 1; i <= LAB_NODES; i++)); do on n$i pkill -9 -f 'lmp|orted|orterun' 2>/dev/null; done
		kill $pid 2>/dev/null
	fi
	wait $pid 2>/dev/null
	# Whatever the cut did, the next run starts from a healed link.
	[ "$fault" = none ] || fault "$link" "$fault" off 2>/dev/null
	LOOP=$(awk '$2 == "Loop" {print $5; exit}' "$out")
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$LAB_NODES" "$cfg" "$tag" "${LOOP:-none}" \
		"$(awk '$2 == "Comm" {print $NF; exit}' "$out")" \
		"$(awk '$2 == "Step" {h = 1; next} h && $2 ~ /^[0-9]+$/ && NF == 5 {s = $2} END {print s + 0}' "$out")" >>"$RAW/lammps.tsv"
}

lammps() {
	local r cfg fault loops med
	local -A uncut=()
	for ((r = 1; r <= ROUNDS; r++)); do
		for cfg in $(rotate "$r" $CFGS); do
			lammps_run "$cfg" none "${APPS_CAP:-600}" "none-r$r"
			[ -z "$LOOP" ] || uncut[$cfg]="${uncut[$cfg]:-} $LOOP"
		done
	done
	# The cuts: each configuration once per fault, at a third and two thirds
	# of its median uncut loop time.
	for fault in carrier blackhole; do
		for cfg in $CFGS; do
			[ "$(cut_link "$cfg")" != none ] || continue
			loops=${uncut[$cfg]:-}
			if [ -z "$loops" ]; then
				pretty APPS "LAMMPS $cfg never finished uncut: not cut"
				continue
			fi
			med=$(printf '%s\n' $loops | sort -n | awk '{a[NR] = $1} END {print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2)}')
			CUT_MS=$(awk -v t="$med" 'BEGIN {printf "%.0f", t * 1000 / 3}')
			HEAL_MS=$(awk -v t="$med" 'BEGIN {printf "%.0f", t * 2000 / 3}')
			lammps_run "$cfg" $fault "$(awk -v t="$med" 'BEGIN {printf "%.0f", 3 * t + 60}')" $fault
		done
	done
}

# --- 2. clients -----------------------------------------------------------------

# client_run CONFIG ROUND: every client once over one path; one line per
# figure in clients.tsv (round, path, test, bytes, value).
client_run() {
	local cfg=$1 r=$2 dst size v sp proto q tcp
	dst=$(addr "$(net_of "$cfg")" n2)
	use "$cfg"
	pretty APPS "clients, round $r, $cfg"
	for size in 1 64 1024 4096; do
		# -P 0: no banner; the result line is "local remote req resp secs trans/s".
		v=$(on n1 netperf -P 0 -H "$dst" -l "$SECS" -t TCP_RR -- -r "$size,$size" | awk 'NF >= 6 {print $6; exit}')
		printf '%s\t%s\tnetperf_rr\t%s\t%s\n' "$r" "$cfg" "$size" "${v:-0}"
		# tools/pingpong's mean round trip, as round trips per second.
		v=$(on n1 ri2n-pingpong client "$dst" --sizes "$size:$size" --time "$SECS" | awk '!/^#/ && NF {printf "%.2f", 1e6 / $3; exit}')
		printf '%s\t%s\tpingpong_rr\t%s\t%s\n' "$r" "$cfg" "$size" "${v:-0}"
	done
	for proto in udp tcp; do
		sp=$LAB_DIR/sockperf.txt tcp=()
		[ $proto = udp ] || tcp=(--tcp)
		on n1 sockperf ping-pong "${tcp[@]}" -i "$dst" -m 64 -t "$SECS" --full-rtt >"$sp" 2>&1
		for q in 50.000 99.000 99.900; do
			v=$(awk -v q="$q" '$3 == "percentile" && $4 == q {print $6; exit}' "$sp")
			printf '%s\t%s\tsockperf_%s_p%s\t64\t%s\n' "$r" "$cfg" "$proto" "${q%.000}" "${v:-0}"
		done
	done
	v=$(on n1 netperf -P 0 -H "$dst" -l "$SECS" -t TCP_STREAM | awk 'NF >= 5 {print $5; exit}')
	printf '%s\t%s\tnetperf_stream\t-\t%s\n' "$r" "$cfg" "${v:-0}"
}

clients() {
	local r cfg
	on n2 netserver >/dev/null 2>&1
	on n2 sh -c 'sockperf server --tcp -i 0.0.0.0 >/dev/null 2>&1 &'
	on n2 sh -c 'sockperf server -i 0.0.0.0 >/dev/null 2>&1 &'
	on n2 sh -c 'ri2n-pingpong server >/dev/null 2>&1 &'
	await 10 "n2's servers" on n2 sh -c 'pidof netserver && pidof ri2n-pingpong && [ "$(pidof sockperf | wc -w)" = 2 ]' ||
		fail "clients: n2's servers did not start"
	printf '#round\tpath\ttest\tbytes\tvalue\n' >"$RAW/clients.tsv"
	for ((r = 1; r <= ROUNDS; r++)); do
		for cfg in $(rotate "$r" single bond ri2n); do client_run "$cfg" "$r" >>"$RAW/clients.tsv"; done
	done
}

# --- 3. collectives -------------------------------------------------------------

coll() {
	local r cfg
	for ((r = 1; r <= ROUNDS; r++)); do
		for cfg in $(rotate "$r" single bond mpi-2nic ri2n); do
			use "$cfg"
			pretty APPS "collectives, $LAB_NODES nodes, round $r, $cfg"
			mpi "$cfg" mpi-coll "${APPS_COLL_SECS:-1}" >"$RAW/coll-$LAB_NODES-$cfg-r$r.txt" 2>"$LAB_DIR/coll.err" ||
				pretty APPS "mpi-coll over $cfg failed: $(tail -1 "$LAB_DIR/coll.err")"
		done
	done
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
	echo "rounds $ROUNDS"
	echo "lj_box $BOX"
	echo "lj_steps $STEPS"
	echo "lj_thermo $THERMO"
	echo "secs $SECS"
} >"$RAW/meta-${ONLY//,/-}-${NODES// /-}.txt"
# A run of some parts or node counts adds to the raw results of the others
# (make bench-apps starts from none).
want lammps && [ ! -f "$RAW/lammps.tsv" ] && printf '#nodes\tcfg\trun\tloop_s\tcomm_pct\tlast_step\n' >"$RAW/lammps.tsv"

for nodes in $NODES; do
	want lammps || { [ "$nodes" = 2 ] && want clients; } || { [ "$nodes" = 4 ] && want coll; } || continue
	lab_all "$nodes"
	[ "$nodes" != 2 ] || ! want clients || clients
	[ "$nodes" != 4 ] || ! want coll || coll
	! want lammps || lammps
	lab_check_kernel || fail "kernel splat on $nodes nodes"
done
[ "$LAB_NODES" = 0 ] || lab_down
python3 "$RI2N_ROOT/scripts/apps-report.py" "$RAW"
