# The lab: N QEMU guests with K data NICs each; NIC k of every guest joins
# network k, a Linux bridge in a network namespace of the lab's own.
#
#                 netns ri2n-lab-<pid>
#   +----------------------------------------------------+
#   |  br0: n1e0  n2e0  ...    (network 0)               |
#   |  br1: n1e1  n2e1  ...    (network 1)               |
#   |  lo:  127.0.0.1:22<i> -> guest n<i>:22 (ssh)       |
#   +----------------------------------------------------+
#        |tap n1e0, n1e1           |tap n2e0, n2e1
#   +-----------+             +-----------+
#   | n1        |             | n2        |
#   | eth0 eth1 |             | eth0 eth1 |  ... mgmt0: QEMU user net,
#   +-----------+             +-----------+      restrict=on, ssh only
#
# Sourced by tests/lab/*.sh (through scripts/lab). Helpers:
#   lab_up NODES LINKS / lab_down
#   on NODE CMD...              run CMD (argv, quoted exactly) in a guest
#   link_carrier NODE LINK up|down     the guest sees carrier change
#   link_blackhole NODE LINK on|off    frames to and from the port dropped,
#                                      guest keeps carrier
#   link_netem NODE LINK ARGS...|off   netem on the port, both directions
#   link_shape NODE LINK RATE|off      tbf line rate into the guest (host side)
#   lab_check_kernel            fail on any WARN/BUG/oops/KASAN/lockdep line
#
# Under `scripts/lab test` (LAB_POOL set) a lab outlives the test that
# booted it: a test that passes resets it (lab_clean, its teardown part of
# the test), and the next test whose lab_up asks for the same lab
# (lab_key) takes it instead of booting its own. A test that fails takes
# its lab down with it, and a reset that leaves a guest unlike it booted
# makes a fresh boot.
# shellcheck shell=bash

: "${LAB_KERNEL:?run lab tests through scripts/lab}"
: "${LAB_INITRD:?run lab tests through scripts/lab}"
: "${LAB_SSH_KEY:?run lab tests through scripts/lab}"
LAB_MEM=${LAB_MEM:-1024}
LAB_NS=ri2n-lab-$$
if [ -n "${LAB_POOL:-}" ]; then
	LAB_DIR=${LAB_DIR:-$LAB_POOL/lab}
else
	LAB_DIR=${LAB_DIR:-$(mktemp -d /tmp/ri2n-lab.XXXXXX)}
fi
LAB_NODES=0
LAB_LINKS=0
LAB_BOOT_TIMEOUT=${LAB_BOOT_TIMEOUT:-120}
# Queues per data NIC (1: the default single-queue virtio NIC) and vCPUs
# per guest.
LAB_QUEUES=${LAB_QUEUES:-1}
LAB_SMP=${LAB_SMP:-1}
# A QEMU TCG plugin every guest loads (tools/insns/insns.c for
# scripts/insns-lab.sh), given ctl=$LAB_DIR/<node>.plugin-ctl.
LAB_QEMU_PLUGIN=${LAB_QEMU_PLUGIN:-}
# Non-empty: QEMU writes /tmp/perf-<pid>.map, naming each translated block
# by its guest address, for perf on the host (scripts/hostprof-lab.sh).
LAB_QEMU_PERFMAP=${LAB_QEMU_PERFMAP:-}

# Each line says when in the test it was written, to tell where its time goes.
pretty() { printf '\e[1m[%s]\e[0m %s \e[2m+%ss\e[0m\n' "$1" "$2" "$SECONDS" >&2; }
fail() { pretty FAIL "$*"; exit 1; }
ns() { ip netns exec "$LAB_NS" "$@"; }

lab_mac() { printf '52:54:00:1%x:00:%02x' "$2" "$1"; } # node link
lab_port() { echo $((2200 + $1)); }

# lab_key NODES LINKS: what makes two labs the same for a test (the
# topology is the host's bridges alone: a reset wires them anew).
lab_key() {
	echo "$1x$2 queues=$LAB_QUEUES smp=$LAB_SMP mem=$LAB_MEM" \
		"cmdline=${LAB_CMDLINE:-} plugin=${LAB_QEMU_PLUGIN:-} perfmap=${LAB_QEMU_PERFMAP:-}"
}

# lab_bridges: the bridges of LAB_TOPO, in the lab's namespace: two-switch
# (a bridge per link, the paper's testbed), one-switch (every link on
# br0), trunk (a bridge per link, the bridges joined by a trunk: one
# flooding, learning fabric). The ports join them (lab_br).
lab_bridges() {
	local k nbr=$LAB_LINKS
	[ "${LAB_TOPO:-two-switch}" = one-switch ] && nbr=1
	for ((k = 0; k < nbr; k++)); do
		ns ip link add br$k type bridge stp_state 0 forward_delay 0 mcast_snooping 0
		ns ip link set br$k up
	done
	if [ "${LAB_TOPO:-}" = trunk ] && ((LAB_LINKS > 1)); then
		for ((k = 1; k < LAB_LINKS; k++)); do
			ns ip link add tr$k type veth peer name tr${k}b
			ns ip link set tr$k master br0 up
			ns ip link set tr${k}b master br$k up
		done
	fi
}
# lab_br LINK: the bridge of link LINK's ports.
lab_br() { echo "br$([ "${LAB_TOPO:-}" = one-switch ] && echo 0 || echo "$1")"; }

# lab_qemu I: boots node I's guest on its taps, which lab_up made.
lab_qemu() {
	local i=$1 k netargs=()
	for ((k = 0; k < LAB_LINKS; k++)); do
		if ((LAB_QUEUES > 1)); then
			# A multiqueue NIC: LAB_QUEUES transmit and receive queues.
			netargs+=(-netdev "tap,id=l$k,ifname=n${i}e$k,script=no,downscript=no,queues=$LAB_QUEUES"
				-device "virtio-net-pci,netdev=l$k,mac=$(lab_mac "$i" "$k"),speed=1000,duplex=full,mq=on,vectors=$((2 * LAB_QUEUES + 2))")
		else
			netargs+=(-netdev "tap,id=l$k,ifname=n${i}e$k,script=no,downscript=no"
				-device "virtio-net-pci,netdev=l$k,mac=$(lab_mac "$i" "$k"),speed=1000,duplex=full")
		fi
	done
	# A subshell whose output is the log alone: a pooled lab's guests
	# outlive the test, and must hold none of its descriptors.
	# la57=off: with 5-level paging, the KASAN kernel sometimes took an
	# interrupt mid-way through identify_cpu() and panicked at boot.
	# no_timer_check: under TCG on a busy host the IO-APIC timer check
	# can miss its ticks and panic ("IO-APIC + timer doesn't work!",
	# seen once in make bench); as in cloud images' guest kernels.
	(exec >"$LAB_DIR/n$i.qemu.log" 2>&1 </dev/null
	ns qemu-system-x86_64 -nodefaults -display none -no-reboot \
		-accel tcg -cpu max,la57=off -smp "$LAB_SMP" -m "$LAB_MEM" \
		-kernel "$LAB_KERNEL" -initrd "$LAB_INITRD" \
		-append "console=ttyS0 no_timer_check panic=-1 panic_on_warn=1 oops=panic lab.node=n$i ${LAB_CMDLINE:-}" \
		"${netargs[@]}" \
		-netdev "user,id=mgmt,restrict=on,hostfwd=tcp:127.0.0.1:$(lab_port "$i")-:22" \
		-device "virtio-net-pci,netdev=mgmt,mac=52:54:00:ff:00:$(printf %02x "$i")" \
		-serial file:"$LAB_DIR/n$i.console" \
		-monitor unix:"$LAB_DIR/n$i.mon",server=on,wait=off \
		-pidfile "$LAB_DIR/n$i.pid" \
		${LAB_QEMU_PLUGIN:+-plugin "$LAB_QEMU_PLUGIN,ctl=$LAB_DIR/n$i.plugin-ctl"} ${LAB_QEMU_PERFMAP:+-perfmap}) &
	# Not this test's job: lab_release kills and waits for those.
	[ -z "${LAB_POOL:-}" ] || disown
}

# lab_qemu_stop I: node I's QEMU ends (10 s at most), its taps free.
lab_qemu_stop() {
	lab_qemu_kill "$1"
	lab_qemu_reap "$1"
}

# lab_qemu_kill I: asks guest nI's QEMU to quit (its ssh connection first).
lab_qemu_kill() {
	ssh -O exit -S "$LAB_DIR/n$1.ssh" x 2>/dev/null
	[ -f "$LAB_DIR/n$1.pid" ] || return 0
	# QEMU's perf map (some 20 MB) goes with the guest.
	[ -z "${LAB_QEMU_PERFMAP:-}" ] || rm -f "/tmp/perf-$(cat "$LAB_DIR/n$1.pid").map"
	kill "$(cat "$LAB_DIR/n$1.pid")" 2>/dev/null
}

# lab_qemu_reap I: waits up to 10 s for guest nI's QEMU to go, then kills it.
lab_qemu_reap() {
	local pid t
	pid=$(cat "$LAB_DIR/n$1.pid" 2>/dev/null) || return 0
	for ((t = 0; t < 100; t++)); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null
	sleep 0.5
}

lab_up() {
	local nodes=${1:-2} links=${2:-2} i k
	# `scripts/lab test` asks each test for its lab first, to run the
	# tests that share one in a row.
	if [ -n "${LAB_DRYRUN:-}" ]; then
		lab_key "$nodes" "$links" >"$LAB_DRYRUN"
		exit 0
	fi
	[ -c /dev/net/tun ] || fail "/dev/net/tun is missing: the lab needs TUN/TAP."
	((links >= 1 && links <= 8)) || fail "lab_up: 1 to 8 links, not $links."
	if [ -n "${LAB_POOL:-}" ] && lab_take "$nodes" "$links"; then
		return 0
	fi
	LAB_NODES=$nodes
	LAB_LINKS=$links
	if [ -n "${LAB_POOL:-}" ]; then
		LAB_NS=ri2n-lab-$$ LAB_DIR=$LAB_POOL/lab
		rm -rf "$LAB_DIR"
		trap lab_release EXIT
	else
		trap lab_down EXIT
	fi
	mkdir -p "$LAB_DIR"
	ip netns add "$LAB_NS"
	ns ip link set lo up
	lab_bridges
	for ((i = 1; i <= nodes; i++)); do
		for ((k = 0; k < links; k++)); do
			if ((LAB_QUEUES > 1)); then
				ns ip tuntap add dev n${i}e$k mode tap multi_queue
			else
				ns ip tuntap add dev n${i}e$k mode tap
			fi
			ns ip link set "n${i}e$k" master "$(lab_br "$k")" up
		done
		lab_qemu "$i"
	done
	for ((i = 1; i <= nodes; i++)); do
		lab_wait_ready n$i && continue
		# A guest that hung at boot (seen once, in PCI enumeration, under
		# TCG with two vCPUs) is booted again, once: its kernel has met
		# neither the module nor the test yet.
		tail -20 "$LAB_DIR/n$i.console" >&2
		pretty INFO "n$i did not boot within ${LAB_BOOT_TIMEOUT}s: booting it again"
		lab_qemu_stop "$i"
		mv "$LAB_DIR/n$i.console" "$LAB_DIR/n$i.console.hung" 2>/dev/null
		lab_qemu "$i"
		lab_wait_ready n$i || fail "n$i did not boot within ${LAB_BOOT_TIMEOUT}s, twice"
	done
	[ "${LAB_VARIANT:-guest}" != stock ] || for ((i = 1; i <= nodes; i++)); do lab_stock_check n$i; done
	if [ -n "${LAB_POOL:-}" ]; then
		for ((i = 1; i <= nodes; i++)); do
			on n$i lab-reset snapshot >"$LAB_DIR/n$i.state" || fail "n$i: lab-reset snapshot failed"
		done
		printf '%s\n' "$(lab_key "$nodes" "$links")" "$LAB_NS" "$LAB_DIR" >"$LAB_POOL/lab.key"
		echo "${LAB_TOPO:-two-switch}" >"$LAB_DIR/topology"
	fi
	lab_clocks
}

# LAB_CLOCKS=1 (tests that time a guest's event from a host action):
# the clock offsets, while the guests are idle (see guest_offset).
lab_clocks() {
	local i
	if [ "${LAB_CLOCKS:-0}" = 1 ]; then
		for ((i = 1; i <= LAB_NODES; i++)); do
			guest_offset_measure n$i
		done
	fi
}

# lab_take NODES LINKS: the pool's lab, if it is the one asked for and the
# test before left it clean (lab_clean); else the pool is emptied (false).
lab_take() {
	local key k0 ns dir i f k
	key=$(lab_key "$1" "$2")
	[ -f "$LAB_POOL/lab.key" ] || return 1
	{ read -r k0 && read -r ns && read -r dir; } <"$LAB_POOL/lab.key"
	LAB_NS=$ns LAB_DIR=$dir LAB_NODES=${k0%%x*}
	if [ "$k0" != "$key" ] || [ ! -f "$LAB_DIR/clean" ]; then
		lab_down
		return 1
	fi
	for ((i = 1; i <= LAB_NODES; i++)); do
		kill -0 "$(cat "$LAB_DIR/n$i.pid")" 2>/dev/null || { lab_down; return 1; }
	done
	LAB_LINKS=$2
	trap lab_release EXIT
	# Another topology: the bridges go, and the ports join the new ones.
	if [ "$(cat "$LAB_DIR/topology")" != "${LAB_TOPO:-two-switch}" ]; then
		for f in $(ns ip -o link show type bridge | awk -F': ' '{print $2}') $(ns ip -o link show type veth | awk -F'[:@]' '/ tr[0-9]+@/ {print $2}'); do
			ns ip link del "${f# }" 2>/dev/null
		done
		lab_bridges
		for ((i = 1; i <= LAB_NODES; i++)); do
			for ((k = 0; k < LAB_LINKS; k++)); do ns ip link set n${i}e$k master "$(lab_br "$k")" up; done
		done
		echo "${LAB_TOPO:-two-switch}" >"$LAB_DIR/topology"
	fi
	# What the last test left in the lab's directory goes, but the guests'
	# consoles, whose splat check starts where this test starts.
	find "$LAB_DIR" -maxdepth 1 -type f ! -name 'n*.console' ! -name 'n*.pid' \
		! -name 'n*.qemu.log' ! -name 'n*.state' ! -name topology -delete
	for ((i = 1; i <= LAB_NODES; i++)); do
		stat -c %s "$LAB_DIR/n$i.console" >"$LAB_DIR/n$i.console-from"
	done
	lab_clocks
}

# lab_clean: undoes what the test that passed left in its lab, as part of
# that test: the host's side (stopped guests, ports, shaping, bridges) and
# each guest (scripts/guest/reset: its devices and modules go, so the
# driver's teardown runs here). False, saying why, if that teardown
# splatted, killed a guest or hung; the lab is kept for the next test
# ($LAB_DIR/clean) only if every guest then reads as it booted.
lab_clean() {
	local i k f p deadline resets=()
	for ((i = 1; i <= LAB_NODES; i++)); do
		monitor n$i cont
		for ((k = 0; k < LAB_LINKS; k++)); do
			monitor n$i "set_link l$k on"
			ns tc qdisc del dev n${i}e$k root 2>/dev/null
			ns tc qdisc del dev n${i}e$k ingress 2>/dev/null
			ns ip link set n${i}e$k mtu 1500
			ns ip link set n${i}e$k master "$(lab_br "$k")" up
		done
		# A client the test left holds this test's output open: its
		# connection goes, and the next test makes its own.
		ssh -O exit -S "$LAB_DIR/n$i.ssh" x 2>/dev/null
	done
	# The guests in parallel: each takes a second or two under TCG.
	for ((i = 1; i <= LAB_NODES; i++)); do
		on n$i lab-reset >"$LAB_DIR/n$i.now" 2>/dev/null &
		resets+=($!)
	done
	deadline=$(($(host_ms) + 120000 * LAB_TIME_SCALE))
	for p in "${resets[@]}"; do
		while kill -0 "$p" 2>/dev/null && [ "$(host_ms)" -lt "$deadline" ]; do sleep 0.2; done
	done
	if kill -0 "${resets[@]}" 2>/dev/null; then
		kill "${resets[@]}" 2>/dev/null
		pretty FAIL "the lab's reset after the test (its devices deleted, ri2n unloaded) did not end within $((120 * LAB_TIME_SCALE)) s"
		return 1
	fi
	wait "${resets[@]}" 2>/dev/null
	lab_check_kernel || { pretty FAIL "  ... (while the lab's reset deleted the test's devices and unloaded ri2n)"; return 1; }
	# After the guests, which sent on their way out: what the bridges learnt.
	for ((i = 1; i <= LAB_NODES; i++)); do
		for ((k = 0; k < LAB_LINKS; k++)); do ns bridge link set dev n${i}e$k learning on; done
	done
	for f in $(ns ip -o link show type bridge | awk -F': ' '{print $2}'); do
		ns ip link set "$f" mtu 1500 type bridge fdb_flush
	done
	for ((i = 1; i <= LAB_NODES; i++)); do
		if ! cmp -s "$LAB_DIR/n$i.state" "$LAB_DIR/n$i.now"; then
			pretty INFO "n$i is not as it booted after the reset: the next test boots a lab of its own"
			diff "$LAB_DIR/n$i.state" "$LAB_DIR/n$i.now" | head -20 >&2
			return 0
		fi
	done
	touch "$LAB_DIR/clean"
}

# At a test's end: a lab that passed is cleaned for the next test (a
# teardown that goes wrong fails this test); one that failed goes.
lab_release() {
	local rc=$? jobs
	trap - EXIT
	jobs=$(jobs -p)
	[ -z "$jobs" ] || kill $jobs 2>/dev/null
	if [ "$rc" = 0 ]; then
		rm -f "$LAB_DIR/clean"
		lab_clean || rc=1
	fi
	if [ "$rc" != 0 ]; then
		(exit "$rc")
		lab_down
		exit $rc
	fi
	wait 2>/dev/null
	exit 0
}

# lab_pool_down: the pool's lab, if any, goes (scripts/lab, at the end).
lab_pool_down() {
	[ -f "$LAB_POOL/lab.key" ] || return 0
	local k0 ns dir
	{ read -r k0 && read -r ns && read -r dir; } <"$LAB_POOL/lab.key"
	LAB_NS=$ns LAB_DIR=$dir LAB_NODES=${k0%%x*}
	lab_down
}

# lab_stock_check NODE: NODE runs Debian's kernel, and its ri2n is the one
# DKMS built and signed for it (scripts/stock-dkms.sh), of this version.
lab_stock_check() {
	local rel sig ver magic want=$LAB_RI2N_VERSION
	rel=$(on "$1" uname -r) sig=$(on "$1" modinfo -F signer ri2n) ver=$(on "$1" modinfo -F version ri2n)
	magic=$(on "$1" modinfo -F vermagic ri2n)
	[ "$rel" = "$LAB_STOCK_ABI" ] && [ "$sig" = "DKMS module signing key" ] && [ "$ver" = "$want" ] &&
		[ "${magic%% *}" = "$LAB_STOCK_ABI" ] ||
		fail "$1: kernel $rel, ri2n $ver for ${magic%% *} signed by '$sig'; not Debian's $LAB_STOCK_ABI with ri2n $want from DKMS"
	pretty INFO "$1: kernel $rel; ri2n $ver, vermagic $magic, signed by $sig"
}

# lab_wait_ready NODE: true once NODE booted and answers ssh; false if not
# within LAB_BOOT_TIMEOUT.
lab_wait_ready() {
	local n=$1 t=0
	# The marker alone: a kernel message may land in the middle of its
	# line (the console file is this node's own).
	until grep -q "RI2N-GUEST-READY" "$LAB_DIR/$n.console" 2>/dev/null; do
		sleep 0.2
		t=$((t + 1))
		((t <= LAB_BOOT_TIMEOUT * 5)) || return 1
	done
	until on "$n" true 2>/dev/null; do
		sleep 0.2
		t=$((t + 1))
		((t < LAB_BOOT_TIMEOUT * 5)) || return 1
	done
}

lab_down() {
	local rc=$? i
	trap - EXIT
	for ((i = 1; i <= LAB_NODES; i++)); do lab_qemu_kill "$i"; done
	wait 2>/dev/null
	# A pooled lab's guests are not this shell's children: wait them out.
	for ((i = 1; i <= LAB_NODES; i++)); do lab_qemu_reap "$i"; done
	[ -z "${LAB_POOL:-}" ] || rm -f "$LAB_POOL/lab.key"
	ip netns del "$LAB_NS" 2>/dev/null
	if [ "${LAB_KEEP:-0}" = 1 ]; then
		pretty INFO "lab output kept in $LAB_DIR"
	else
		rm -rf "$LAB_DIR"
	fi
	LAB_NODES=0
	return $rc
}

# on NODE CMD...: runs CMD in NODE with its arguments quoted exactly; returns
# its exit status. One ssh connection per node is kept open and shared.
on() {
	local n=$1
	shift
	ns ssh -F none -i "$LAB_SSH_KEY" -p "$(lab_port "${n#n}")" \
		-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR \
		-o BatchMode=yes -o ConnectTimeout=10 -o ServerAliveInterval=5 \
		-o ControlMaster=auto -o ControlPath="$LAB_DIR/$n.ssh" -o ControlPersist=yes \
		root@127.0.0.1 -- "$(printf '%q ' "$@")"
}

monitor() { # NODE CMD: one QEMU monitor command
	printf '%s\n' "$2" | ns socat - UNIX-CONNECT:"$LAB_DIR/$1.mon" >/dev/null
}

link_carrier() {
	case $3 in
	up) monitor "$1" "set_link l$2 on" ;;
	down) monitor "$1" "set_link l$2 off" ;;
	*) fail "link_carrier NODE LINK up|down" ;;
	esac
}

# eavesdrop on|off: n3 listens to n1 and n2 as a host on a shared segment
# does: the bridges forget and stop learning n1's and n2's addresses (a
# hub), so their unicast floods, and n3's ports are promiscuous.
eavesdrop() {
	local k i learn=on
	[ "$1" = on ] && learn=off
	for k in 0 1; do
		for i in 1 2; do ns bridge link set dev n${i}e$k learning $learn; done
		ns ip link set br$k type bridge fdb_flush
		on n3 ip link set eth$k promisc "$1"
	done
}

# Detaching the tap from its bridge drops every frame both ways, while QEMU
# keeps the guest's link up: the failure miimon cannot see.
link_blackhole() {
	local port=$1e$2
	case $3 in
	on) ns ip link set "$port" nomaster ;;
	off) ns ip link set "$port" master "$(lab_br "$2")" ;;
	*) fail "link_blackhole NODE LINK on|off" ;;
	esac
}

# netem on the guest's NIC, both directions: egress directly, ingress through
# an ifb (the host kernel has no netem). The guest's own CPU does the work.
link_netem() {
	local n=$1 l=$2
	shift 2
	if [ "$1" = off ]; then
		on "$n" sh -c "tc qdisc del dev eth$l root 2>/dev/null; tc qdisc del dev eth$l ingress 2>/dev/null; ip link del ifb$l 2>/dev/null; true"
		return
	fi
	on "$n" sh -c "set -e; modprobe -q sch_netem; modprobe -q ifb numifbs=0; modprobe -q act_mirred; modprobe -q cls_matchall; modprobe -q sch_ingress
		ip link show ifb$l >/dev/null 2>&1 || ip link add ifb$l type ifb
		ip link set ifb$l up
		tc qdisc replace dev eth$l root netem $*
		tc qdisc replace dev ifb$l root netem $*
		tc qdisc replace dev eth$l ingress
		tc filter replace dev eth$l parent ffff: matchall action mirred egress redirect dev ifb$l"
}

# A line rate on the link into the guest, on the host side (the tap's egress,
# like a switch port), so shaping costs the guests nothing.
link_shape() {
	local port=$1e$2
	if [ "$3" = off ]; then
		ns tc qdisc del dev "$port" root 2>/dev/null || true
	else
		ns tc qdisc replace dev "$port" root tbf rate "$3" burst "${4:-128kb}" latency 50ms
	fi
}

# An OOM report prints a stack trace. A test that drives a memory cgroup
# to its limit sets LAB_OOM_EXPECTED: then a report, from its first line
# to the process killed, is no splat; anything else still is.
lab_oom_reports_out() {
	if [ -n "${LAB_OOM_EXPECTED:-}" ]; then
		awk '/invoked oom-killer/ {oom = 1} !oom {print} /Killed process/ {oom = 0}'
	else
		cat
	fi
}

# Kernel splats in any guest's console fail the test.
lab_check_kernel() {
	local i bad=0
	for ((i = 1; i <= LAB_NODES; i++)); do
		# On a shared lab, from where this test's part of the console starts.
		if tail -c +$(($(cat "$LAB_DIR/n$i.console-from" 2>/dev/null || echo 0) + 1)) "$LAB_DIR/n$i.console" |
			lab_oom_reports_out | grep -E 'WARNING:|BUG:|Oops|Kernel panic|KASAN|possible (circular|recursive)|INFO: lockdep|unreferenced object|Call Trace' >&2; then
			pretty FAIL "n$i: kernel splat in console (above)"
			bad=1
		fi
		if [ -f "$LAB_DIR/n$i.pid" ] && ! kill -0 "$(cat "$LAB_DIR/n$i.pid")" 2>/dev/null; then
			tail -30 "$LAB_DIR/n$i.console" >&2
			pretty FAIL "n$i: guest died"
			bad=1
		fi
	done
	return $bad
}

# --- ri2n ----------------------------------------------------------------

# ri2n_up NODE...: ri2n0 over all data NICs, 10.0.0.<i>/24 and fd00::<i>/64;
# extra module parameters in RI2N_PARAMS.
ri2n_up() {
	local n slaves
	slaves=$(seq -s, -f 'eth%g' 0 $((LAB_LINKS - 1)))
	for n in "$@"; do
		# shellcheck disable=SC2086
		on "$n" modprobe ri2n slaves="$slaves" ${RI2N_PARAMS:-} &&
			on "$n" ip link set ri2n0 up &&
			on "$n" ip addr add 10.0.0.${n#n}/24 dev ri2n0 &&
			on "$n" ip -6 addr add fd00::${n#n}/64 dev ri2n0 nodad || return 1
	done
}
ri2n_mac() { on "$1" cat /sys/class/net/ri2n0/address; }
# Everything below reads ri2n's state through the `ri2n` command (tools/ri2n,
# which reads it over the generic netlink family).
# ep_state NODE PEER_NODE SLAVE: the endpoint's state in NODE.
ep_state() { on "$1" ri2n get ri2n0 endpoint "$(ri2n_mac "$2")" "$3" state; }
# goodput FROM TO_IP SECONDS [IPERF3_ARGS...]: TCP goodput FROM -> TO_IP as
# the receiver counted it, in Mbit/s (one decimal); iperf3 -s runs at TO_IP.
goodput() {
	local from=$1 to=$2 t=$3
	shift 3
	on "$from" iperf3 -c "$to" -t "$t" -J "$@" | awk -F'[:,]' '/"sum_received"/ {r = 1} r && /"bits_per_second"/ {printf "%.1f", $2 / 1e6; exit}'
}
# inject NODE DEV HEX...: one raw frame (hex bytes) out of DEV. The frame
# is written to a file first, which socat takes in one read(): from a pipe,
# socat sends whatever part of a frame has arrived as a frame of its own
# (ri2n_malformed then counts 94 of its 100 flood frames).
inject() {
	local n=$1 dev=$2
	shift 2
	on "$n" sh -c "printf '$(printf '%s' "$*" | tr -d ' ' | sed 's/\(..\)/\\x\1/g')' >/tmp/frame && socat -u -b 2000 OPEN:/tmp/frame INTERFACE:$dev"
}
# udp_rcvbuf_errors NODE: datagrams NODE's UDP sockets had no room for
# (RcvbufErrors): lost to a starved guest's reader, not to ri2n.
udp_rcvbuf_errors() { on "$1" awk '/^Udp:/ {if (!h) {for (i = 1; i <= NF; i++) c[$i] = i; h = 1} else print $c["RcvbufErrors"]}' /proc/net/snmp; }
# ge A B: whether A >= B, as decimals.
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }
# proc_counter NODE NAME: a device counter (empty if the driver lacks it).
proc_counter() { on "$1" ri2n get ri2n0 counter "$2"; }
# peer_counter NODE PEER NAME: the peer's NAME (late, late_loss, loss...),
# or NAME summed over its endpoints (fails, lossy...); 0 if neither.
peer_counter() {
	local mac v
	mac=$(ri2n_mac "$2")
	v=$(on "$1" ri2n get ri2n0 peer "$mac" "$3") || v=$(on "$1" ri2n get ri2n0 endpoints "$mac" "$3") || v=0
	echo "$v"
}
# peer_counters NODE PEER NAME...: "NAME=value" of each, as peer_counter.
peer_counters() {
	local node=$1 peer=$2 c
	shift 2
	for c in "$@"; do printf '%s=%s ' "$c" "$(peer_counter "$node" "$peer" "$c")"; done
}
host_ms() { date +%s%3N; }
# sleep_until T_HOST_MS: sleeps until the host clock reads T_HOST_MS.
sleep_until() { sleep "$(awk -v t="$1" -v now="$(host_ms)" 'BEGIN {d = (t - now) / 1000; print (d > 0 ? d : 0)}')"; }
# guest_offset NODE: the guest clock minus the host clock, in ms, from the
# quickest of 10 ssh round trips (error below half of it; a busy guest
# answers some of them late).
#
# A TCG guest's clocks run off the host's, so the offset stays put for a
# boot: lab_up measures it once per guest while idle (LAB_CLOCKS=1), where
# an ssh round trip takes a few ms (under load one takes tens, and so would
# the error); otherwise the first use measures it.
# $LAB_DIR/NODE.offset holds the offset and its error bound (ms).
guest_offset_measure() {
	local h0 g h1 i best=999999 off=0
	for i in 1 2 3 4 5 6 7 8 9 10; do
		h0=$(host_ms)
		g=$(on "$1" date +%s%3N)
		h1=$(host_ms)
		if ((h1 - h0 < best)); then
			best=$((h1 - h0))
			off=$((g - (h0 + h1) / 2))
		fi
	done
	echo "$off $(((best + 1) / 2))" >"$LAB_DIR/$1.offset"
}
guest_offset() {
	[ -f "$LAB_DIR/$1.offset" ] || guest_offset_measure "$1"
	awk '{print $1}' "$LAB_DIR/$1.offset"
}
# guest_offset_err NODE: the error bound of guest_offset NODE, in ms.
guest_offset_err() { awk '{print $2}' "$LAB_DIR/$1.offset"; }
# after_cut MS_GUEST OFFSET T_HOST: milliseconds from a host event to a guest event.
since_host() { echo $(($1 - $2 - $3)); }

# Counting checks, in the style of WireGuard's netns.sh.
TESTS_OK=0
TESTS_BAD=0
# Checks run CMD in this shell (so helper functions work), output to the log.
check() { # DESCRIPTION CMD...: one expectation; a failure shows the
	# last lines CMD printed (an await's "gave up waiting for ...").
	local d=$1 out=$LAB_DIR/check.out
	shift
	if "$@" >"$out" 2>&1; then
		cat "$out" >>"$LAB_DIR/checks.log"
		pretty OK "$d"
		TESTS_OK=$((TESTS_OK + 1))
	else
		cat "$out" >>"$LAB_DIR/checks.log"
		pretty FAIL "$d"
		tail -n 3 "$out" | sed 's/^/    /' >&2
		TESTS_BAD=$((TESTS_BAD + 1))
		return 1
	fi
}
not() { ! "$@"; }

# await SECONDS WHAT CMD...: runs CMD every 0.1 s until it succeeds; false,
# saying what it waited for, if it has not within SECONDS (scaled as the
# lab's times are). A condition, not a fixed sleep: a slow host only waits
# longer.
await() {
	local what=$2 end=$(($(host_ms) + $1 * 1000 * LAB_TIME_SCALE))
	shift 2
	until "$@" >/dev/null 2>&1; do
		if [ "$(host_ms)" -ge "$end" ]; then
			pretty INFO "gave up waiting for $what"
			return 1
		fi
		sleep 0.1
	done
}
# out_has NODE PATTERN CMD...: CMD's output on NODE matches PATTERN (grep -E).
out_has() {
	local n=$1 pat=$2
	shift 2
	on "$n" "$@" | grep -Eq -- "$pat"
}
finish() {
	lab_check_kernel || TESTS_BAD=$((TESTS_BAD + 1))
	pretty INFO "$TESTS_OK checks ok, $TESTS_BAD failed"
	[ "$TESTS_BAD" = 0 ]
}

# transfer FROM TO MB [PORT]: sends MB MiB of random data over TCP from FROM
# to TO's ri2n0 address, in the background; `transfer_wait` checks that the
# SHA-256 both ends computed match. The data is in FROM's RAM, made once
# per boot and kept by the lab's reset (/run/lab-data, as large as the
# largest transfer asked for: up to 100 MiB of a guest's 1 GiB), as is the
# SHA-256 of each length sent: under TCG, making 50 MiB and hashing it
# takes 3 s.
transfer_start() {
	local from=$1 to=$2 mb=$3 port=${4:-5001}
	on "$from" sh -c "d=/run/lab-data; mkdir -p \$d
		[ \"\$(stat -c %s \$d/data 2>/dev/null)\" -ge $((mb << 20)) ] 2>/dev/null ||
			{ rm -f \$d/*; head -c ${mb}M /dev/urandom >\$d/data; }
		[ -s \$d/sha-$mb ] || { head -c ${mb}M \$d/data | sha256sum | cut -d' ' -f1 >\$d/sha.tmp && mv \$d/sha.tmp \$d/sha-$mb; }
		cp \$d/sha-$mb /tmp/tx.sha"
	on "$to" sh -c "rm -f /tmp/rx.sha; (socat -u TCP-LISTEN:$port,reuseaddr - | sha256sum | cut -d' ' -f1 > /tmp/rx.sha.tmp; mv /tmp/rx.sha.tmp /tmp/rx.sha) >/dev/null 2>&1 &"
	# Until the listener is up (slow on the debug kernel): LISTEN is 0A.
	on "$to" sh -c "for i in \$(seq 100); do grep -q ':$(printf %04X "$port") 00000000:0000 0A' /proc/net/tcp && exit; sleep 0.1; done"
	XFER_FROM=$from XFER_TO=$to
	on "$from" socat -u OPEN:/run/lab-data/data,readbytes=$((mb << 20)) TCP:10.0.0.${to#n}:$port &
	XFER_PID=$!
}
transfer_wait() { # TIMEOUT_S: true if the transfer completed with equal checksums
	local end=$(($(host_ms) + $1 * 1000))
	while kill -0 "$XFER_PID" 2>/dev/null; do
		if [ "$(host_ms)" -ge "$end" ]; then
			kill "$XFER_PID" 2>/dev/null
			pretty INFO "transfer did not finish within $1 s"
			return 1
		fi
		sleep 0.2
	done
	wait "$XFER_PID" || return 1
	for _ in $(seq 50); do on "$XFER_TO" test -f /tmp/rx.sha && break; sleep 0.2; done
	local tx rx
	tx=$(on "$XFER_FROM" cat /tmp/tx.sha)
	rx=$(on "$XFER_TO" cat /tmp/rx.sha)
	pretty INFO "sha256 sent ${tx:0:16}… received ${rx:0:16}…"
	[ -n "$tx" ] && [ "$tx" = "$rx" ]
}

# watch_start NODE PEER SLAVE STATES TIMEOUT_S: starts watching, in NODE,
# for the endpoint (PEER, SLAVE) to reach one of STATES (a|b): `ri2n events`
# prints when the driver changed it (its clock). A slave losing carrier is
# its own event (`slave SLAVE carrier up -> down`), not one per endpoint.
watch_start() {
	local mac
	mac=$(ri2n_mac "$2")
	WATCH_OFF=$(guest_offset "$1")
	on "$1" ri2n events ri2n0 --peer "$mac" --slave "$3" --state "$4" --initial --count 1 --timeout "$5" |
		awk '{print $1}' >"$LAB_DIR/watch" &
	WATCH_PID=$!
	sleep 0.2
}
# shellcheck disable=SC2034 # WATCHED is read by the tests that source this.
# watch_ms T_HOST: sets WATCHED to the milliseconds from host time T_HOST to
# the watched change, or "never". Not in $(...): wait needs this shell.
watch_ms() {
	if wait "$WATCH_PID" && [ -s "$LAB_DIR/watch" ]; then
		WATCHED=$(($(cat "$LAB_DIR/watch") - WATCH_OFF - $1))
	else
		WATCHED=never
	fi
}
# ping_start NODE DST SECS: NODE pings DST every 10 ms in the background,
# for SECS at most, replies timestamped (ping_gap reads them).
ping_start() { on "$1" sh -c "ping -D -i 0.01 -w $3 $2 >/tmp/ping.txt 2>&1 &"; }
# ping_gap NODE: stops NODE's ping (no pkill in the guest) and prints the
# longest gap between its replies, in ms.
ping_gap() {
	on "$1" sh -c 'kill $(pidof ping) 2>/dev/null; sleep 0.2'
	on "$1" cat /tmp/ping.txt |
		awk -F'[][]' '/bytes from/ {t = $2 * 1000; if (last != "" && t - last > g) g = t - last; last = t} END {printf "%.0f", g}'
}
# lt MS BOUND: MS is a time below BOUND. The debug kernel (KASAN, lockdep)
# runs several times slower under TCG, and a command reaches its guest
# late: there the bounds are LAB_TIME_SCALE (5) times wider.
LAB_TIME_SCALE=${LAB_TIME_SCALE:-$([ "${LAB_VARIANT:-guest}" = debug ] && echo 5 || echo 1)}
lt() { [ "$1" != never ] && [ "$1" -lt $(($2 * LAB_TIME_SCALE)) ]; }
# mib N: N MiB of transfer, a fifth of it on the debug kernel (about
# 10 Mbit/s under TCG), so that a transfer spans the same events in time.
mib() { echo $(($1 / LAB_TIME_SCALE)); }

# measure NODE PEER SLAVE REGEX TIMEOUT_S CMD...: runs CMD on the host and
# sets WATCHED to the ms until NODE's endpoint (PEER, SLAVE) matches REGEX.
measure() {
	local node=$1 peer=$2 slave=$3 want=$4 timeout=$5 t
	shift 5
	watch_start "$node" "$peer" "$slave" "$want" "$timeout"
	t=$(host_ms)
	"$@"
	watch_ms "$t"
}

# ri2n_pair RATE: two nodes, two links shaped to RATE into each guest, ri2n0
# up on both, n1 and n2 know each other.
ri2n_pair() {
	lab_up 2 2
	ri2n_up n1 n2 || fail "ri2n_up"
	local n l
	for n in n1 n2; do for l in 0 1; do link_shape $n $l "$1"; done; done
	on n1 ping -c 2 -q 10.0.0.2 >/dev/null
}
