#!/usr/bin/env bash
# Bad configuration is refused with one clear log line and nothing left
# half-registered. Module parameters are the defaults of new devices;
# each device's own are tunable at run time in /sys/class/net/DEV/ri2n/,
# validated, root-only.
set -u
. "$(dirname "$0")/lib.sh"
# n1 alone; n2 idles (no ri2n), so that the test shares the 2-node lab.
lab_up 2 2

# refused "ARGS" "LOG PATTERN"
refused() {
	local args=$1 pat=$2
	on n1 dmesg -C
	# shellcheck disable=SC2086
	if on n1 modprobe ri2n $args; then
		on n1 rmmod ri2n
		return 1
	fi
	out_has n1 "$pat" dmesg || return 1
	not out_has n1 '^ri2n ' lsmod || return 1
	not on n1 ip link show ri2n0 || return 1
	not on n1 test -e /proc/net/ri2n
}
check "modprobe without slaves= loads, makes no device" on n1 modprobe ri2n
check "  ... no ri2n0" not on n1 ip link show ri2n0
on n1 rmmod ri2n
check "one slave refused" refused "slaves=eth0" "at least 2 slaves"
check "unknown slave refused" refused "slaves=eth0,eth7" "slave eth7: no such device"
check "duplicate slave refused" refused "slaves=eth0,eth0" "slave eth0 listed twice"
check "loopback slave refused" refused "slaves=lo,eth0" "cannot enslave lo: .*Ethernet"
check "ri2n0 as a slave refused" refused "slaves=ri2n0,eth0" "slave ri2n0: no such device"
on n1 modprobe dummy numdummies=0
for i in $(seq 0 8); do on n1 ip link add dum$i type dummy; done
check "nine slaves refused" refused "slaves=dum0,dum1,dum2,dum3,dum4,dum5,dum6,dum7,dum8" "at most 8 slaves"
check "fast_tout=0 refused" refused "slaves=eth0,eth1 fast_tout=0" "fast_tout must be 1..=10000 ms"
check "maxbuf=512 refused" refused "slaves=eth0,eth1 maxbuf=512" "maxbuf must be 1..=511"
check "loss_thresh=1001 (over 100 %) refused" refused "slaves=eth0,eth1 loss_thresh=1001" "loss_thresh must be 0..=1000 0.1 %"
check "peer_mem=1000 (less than one peer and one buffer) refused" refused "slaves=eth0,eth1 peer_mem=1000" "peer_mem must be 10021\\.\\.="
check "one_switch=2 refused" refused "slaves=eth0,eth1 one_switch=2" "one_switch must be 0\\.\\.=1"
check "ft_lthresh=20 (>= ft_hthresh 10) refused" refused "slaves=eth0,eth1 ft_lthresh=20" "ft_lthresh must be below ft_hthresh"

check "ft_lthresh=20 ft_hthresh=40 accepted (order free)" on n1 modprobe ri2n slaves=eth0,eth1 ft_lthresh=20 ft_hthresh=40
check "  ... and in effect" out_has n1 "ft_hthresh=40 ft_lthresh=20" cat /proc/net/ri2n/ri2n0
P=/sys/class/net/ri2n0/ri2n
check "sysfs parameters are root-writable only (0644)" test "$(on n1 stat -c %a $P/fast_tout)" = 644
check "run time: fast_tout=5 accepted" on n1 sh -c "echo 5 > $P/fast_tout"
check "  ... and in effect" out_has n1 "fast_tout=5 " cat /proc/net/ri2n/ri2n0
check "run time: fast_tout=0 refused" not on n1 sh -c "echo 0 > $P/fast_tout"
check "run time: ft_lthresh=40 (= ft_hthresh) refused" not on n1 sh -c "echo 40 > $P/ft_lthresh"
check "run time: garbage refused" not on n1 sh -c "echo abc > $P/hbspan"
check "  ... values unchanged" test "$(on n1 cat $P/ft_lthresh)/$(on n1 cat $P/hbspan)" = 20/2000
# Root without CAP_NET_ADMIN passes the files' mode, not the capability
# check net-sysfs asks of a write.
check "a write without CAP_NET_ADMIN refused" not on n1 setpriv --bounding-set=-net_admin sh -c "echo 7 > $P/fast_tout"
check "  ... value unchanged" test "$(on n1 cat $P/fast_tout)" = 5
check "slaves= is read-only" test "$(on n1 stat -c %a /sys/module/ri2n/parameters/slaves)" = 444
check "numeric module parameters are load-time defaults, not files" not on n1 test -e /sys/module/ri2n/parameters/fast_tout
check "unload" on n1 rmmod ri2n
check "load again with defaults" on n1 modprobe ri2n slaves=eth1,eth0
check "  ... defaults back" out_has n1 "ft_hthresh=10 ft_lthresh=1 slow_tout=100 hbspan=2000 hbweight=3 fast_tout=20 maxbuf=300" cat /proc/net/ri2n/ri2n0
check "unload again" on n1 rmmod ri2n

# Netlink, as bonding is configured: ip link add/set DEV type ri2n PARAM
# VALUE... (ip loads the ri2n link kind, tools/iproute2/link_ri2n.c), in
# force at once, all or none, a refusal's reason in ip's own error.
# nl_refused PATTERN IP-ARGS...: ip fails, printing PATTERN.
nl_refused() {
	local pat=$1 out
	shift
	if out=$(on n1 ip "$@" 2>&1); then
		echo "ip $* succeeded"
		return 1
	fi
	echo "$out"
	grep -Eq -- "$pat" <<<"$out"
}
Q=/sys/class/net/ri2n5/ri2n
vals() { local f out=; for f; do out+=$(on n1 cat "$Q/$f")/; done; echo "${out%/}"; }
on n1 modprobe ri2n
check "netlink: ip link add with parameters" on n1 ip link add ri2n5 type ri2n hbspan 500 fast_tout 10 ft_lthresh 20 ft_hthresh 40
check "  ... in force" test "$(vals hbspan fast_tout ft_lthresh ft_hthresh)" = 500/10/20/40
check "  ... shown by ip -d link" out_has n1 "ri2n .*ft_hthresh 40 ft_lthresh 20 .*hbspan 500 .*fast_tout 10 " ip -d link show ri2n5
check "  ... and in its JSON" out_has n1 '"hbspan":500,' ip -j -d link show ri2n5
check "netlink: out of range refused, the range said" nl_refused "Error: fast_tout must be 1\.\.=10000 ms, not 0" link add ri2n6 type ri2n fast_tout 0
check "  ... nothing made" not on n1 ip link show ri2n6
check "netlink: ft_lthresh not below ft_hthresh refused" nl_refused "Error: ft_lthresh 10 must be below ft_hthresh" link add ri2n6 type ri2n ft_lthresh 10
check "  ... nothing made" not on n1 ip link show ri2n6
on n1 ip link set ri2n5 up
check "netlink: changed while up" on n1 ip link set ri2n5 type ri2n hbspan 1000 maxbuf 100
check "  ... in force" test "$(vals hbspan maxbuf)" = 1000/100
check "netlink: all or none (maxbuf 512 refused)" nl_refused "Error: maxbuf must be 1\.\.=511 packets, not 512" link set ri2n5 type ri2n fast_tout 5 maxbuf 512
check "  ... fast_tout unchanged" test "$(vals fast_tout maxbuf)" = 10/100
check "netlink: peer_mem refused while up" nl_refused "Error: peer_mem can only change while ri2n5 is down" link set ri2n5 type ri2n peer_mem 1000000
check "netlink: one_switch refused while up" nl_refused "Error: one_switch can only change while ri2n5 is down" link set ri2n5 type ri2n one_switch 1
check "  ... unchanged" test "$(vals peer_mem one_switch)" = 16777216/0
on n1 ip link set ri2n5 down
check "netlink: both changed while down" on n1 ip link set ri2n5 type ri2n peer_mem 1000000 one_switch 1
check "  ... in force" test "$(vals peer_mem one_switch)" = 1000000/1
slave_shown() { on n1 ip link set eth0 master ri2n5 && out_has n1 'ri2n_slave link 0 carrier [01] peers_up 0 ' ip -d link show eth0; }
check "netlink: a slave's link shown" slave_shown
sysfs_logged() { on n1 dmesg -C; not on n1 sh -c "echo 0 > $Q/fast_tout" && out_has n1 'ri2n5: fast_tout must be 1\.\.=10000 ms, not 0' dmesg; }
check "sysfs: a refusal logged with the range" sysfs_logged
check "netlink: a change without CAP_NET_ADMIN refused" not on n1 setpriv --bounding-set=-net_admin ip link set ri2n5 type ri2n hbspan 700
check "  ... value unchanged" test "$(vals hbspan)" = 1000
check "netlink: delete" on n1 ip link del ri2n5

# Every attribute: each bound, one value past each, and a change while up.
# name min max: core/params.rs's SPECS (tools/ri2n-core/tests/uapi.rs
# holds this table to it). peer_mem's maximum (1 GiB of peer table) is
# more than a lab guest has.
PARAM_RANGES="ft_hthresh 1 1000000
ft_lthresh 0 999999
slow_tout 1 600000
hbspan 10 3600000
hbweight 0 1000000
fast_tout 1 10000
maxbuf 1 511
peer_mem 10021 1073741824
held_mem 65536 1073741824
loss_thresh 0 1000
one_switch 0 1"
Q=/sys/class/net/ri2n7/ri2n
# nl_set PARAM VALUE: sets it on ri2n7, with ft_lthresh kept below ft_hthresh.
nl_set() {
	case $1 in
	ft_hthresh) on n1 ip link set ri2n7 type ri2n ft_lthresh 0 ft_hthresh "$2" ;;
	ft_lthresh) on n1 ip link set ri2n7 type ri2n ft_hthresh 1000000 ft_lthresh "$2" ;;
	*) on n1 ip link set ri2n7 type ri2n "$1" "$2" ;;
	esac && test "$(vals "$1")" = "$2"
}
on n1 ip link add ri2n7 type ri2n
# (Not `while read`: ssh in `on` would read the rest of the table.)
mapfile -t ranges <<<"$PARAM_RANGES"
for row in "${ranges[@]}"; do
	read -r p min max <<<"$row"
	check "netlink: $p $min, its minimum" nl_set "$p" "$min"
	[ "$p" = peer_mem ] || check "netlink: $p $max, its maximum" nl_set "$p" "$max"
	check "netlink: $p $((max + 1)) refused" nl_refused "Error: $p must be $min\.\.=$max .*, not $((max + 1))\.?$" link set ri2n7 type ri2n "$p" $((max + 1))
	[ "$min" = 0 ] || check "netlink: $p $((min - 1)) refused" nl_refused "Error: $p must be $min\.\.=$max .*, not $((min - 1))\.?$" link set ri2n7 type ri2n "$p" $((min - 1))
done
on n1 ip link set ri2n7 type ri2n peer_mem 16777216 one_switch 0
on n1 ip link set ri2n7 up
for row in "${ranges[@]}"; do
	read -r p min max <<<"$row"
	case $p in
	peer_mem | one_switch) check "netlink: $p refused while up" nl_refused "Error: $p can only change while ri2n7 is down" link set ri2n7 type ri2n "$p" "$max" ;;
	*) check "netlink: $p changed while up" nl_set "$p" "$min" ;;
	esac
done
on n1 ip link del ri2n7

# Root of a user namespace (unshare -rn: CAP_NET_ADMIN over its own
# network namespace only) makes and sets its own devices, within the
# memory the module's defaults allow each; beyond is the host's to give.
# The devices go with the namespace.
userns() { on n1 unshare -rn sh -c "$1"; }
check "userns: a device made and set" userns 'ip link add ri2n8 type ri2n hbspan 700 peer_mem 1000000 && ip link set ri2n8 type ri2n fast_tout 9 && ip -d link show ri2n8 | grep -q "hbspan 700 .*fast_tout 9 maxbuf 300 peer_mem 1000000 "'
check "userns: peer_mem above the default refused" userns 'ip link add ri2n8 type ri2n peer_mem 16777217 2>&1 | grep -q "Error: peer_mem above 16777216 needs CAP_NET_ADMIN over the host"'
check "userns: nor raised later" userns 'ip link add ri2n8 type ri2n && ip link set ri2n8 type ri2n held_mem 33554433 2>&1 | grep -q "Error: held_mem above 33554432 needs CAP_NET_ADMIN over the host"'
check "userns: the device went with its namespace" not out_has n1 ri2n8 ip link show

# What a container's devices allocate (the peer table, its slots, the
# per-CPU GRO cells) is charged to its memory cgroup, as the core charges
# the net_device itself: a device's charge grows with its peer_mem (about
# 2.4 MiB at 16 MiB), and a creation loop stops at the cgroup's limit
# (refused, or its shell killed by the cgroup's OOM killer, whose report
# is no splat).
export LAB_OOM_EXPECTED=1
on n1 sh -c 'cat >/tmp/cg && chmod +x /tmp/cg' <<'EOF'
#!/bin/sh
# cg CMD: CMD as the root of a new user namespace, in cgroup ri2n.
echo $$ >/sys/fs/cgroup/ri2n/cgroup.procs
exec unshare -rn sh -c "$*"
EOF
on n1 sh -c 'mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup
	echo +memory >/sys/fs/cgroup/cgroup.subtree_control && mkdir /sys/fs/cgroup/ri2n'
charged=$(on n1 /tmp/cg 'c=/sys/fs/cgroup/ri2n/memory.current; ip link add ri2n8 type ri2n peer_mem 100000; c0=$(cat $c); ip link add ri2n9 type ri2n peer_mem 16777216; echo $(($(cat $c) - c0))')
pretty INFO "a device of peer_mem 16 MiB charged ${charged:-?} bytes to its cgroup"
check "memcg: a container's device is charged to its cgroup (${charged:-?} bytes >= 1 MiB)" test "${charged:-0}" -ge 1048576
on n1 sh -c 'echo 24M >/sys/fs/cgroup/ri2n/memory.max && rm -f /tmp/made'
on n1 /tmp/cg 'for i in $(seq 40); do ip link add r$i type ri2n peer_mem 16777216 || break; echo $i >>/tmp/made; done' || true
made=$(on n1 sh -c 'cat /tmp/made 2>/dev/null | wc -l')
at_max=$(on n1 awk '$1 == "max" {print $2}' /sys/fs/cgroup/ri2n/memory.events)
pretty INFO "under memory.max 24 MiB: $made devices of 16 MiB made, the limit reached ${at_max:-?} times"
check "memcg: a creation loop stops at the cgroup's limit ($made < 40 devices)" test "$made" -lt 40 -a "${at_max:-0}" -gt 0
check "  ... its devices went with the namespace" await 10 "the loop's devices to go" not out_has n1 ' r[0-9]+:' ip link show
on n1 sh -c 'rmdir /sys/fs/cgroup/ri2n && echo -memory >/sys/fs/cgroup/cgroup.subtree_control'
host_may() { on n1 ip link add ri2n8 type ri2n peer_mem 33554432 && on n1 ip link del ri2n8; }
check "the host's root may" host_may
on n1 rmmod ri2n
finish
