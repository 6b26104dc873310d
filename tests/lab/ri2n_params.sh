#!/usr/bin/env bash
# Bad configuration is refused with one clear log line and nothing left
# half-registered. Module parameters are the defaults of new devices;
# each device's own are tunable at run time in /sys/class/net/DEV/ri2n/,
# validated, root-only.
set -u
. "$(dirname "$0")/lib.sh"
lab_up 1 2

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
finish
