#!/usr/bin/env bash
# ri2n as a link type: `ip link add/del`, slaves added and released with
# `ip link set ... master/nomaster`, several devices, per-device parameters
# in sysfs, ethtool, `ip -d link`; every bad request refused with a clear
# message and nothing half-made.
#
#   n1 ri2n0 (ip link) over eth0 eth1 ------ n2 ri2n0 (insmod slaves=)
#   n1 ri2n1 over dum0..dum7 (a second device, no traffic)
set -u
. "$(dirname "$0")/lib.sh"
lab_up 2 2
ri2n_up n2 || fail "ri2n_up n2"

check "ip link add ri2n0 type ri2n (loads the module)" on n1 ip link add ri2n0 type ri2n
on n1 ip link set ri2n0 up
check "  ... a device without slaves has no carrier" out_has n1 "NO-CARRIER" ip link show ri2n0
check "ip link set eth0 master ri2n0" on n1 ip link set eth0 master ri2n0
check "ip link set eth1 master ri2n0" on n1 ip link set eth1 master ri2n0
check "eth1 shows its master" out_has n1 "master ri2n0" ip link show eth1
check "  ... and carrier with them" not out_has n1 "NO-CARRIER" ip link show ri2n0
on n1 ip addr add 10.0.0.1/24 dev ri2n0
check "n1 -> n2 over a device made with ip link" on n1 ping -c 3 -i 0.2 -W 2 -q 10.0.0.2
check "procfs file of ri2n0" out_has n1 "^Slave 1: eth1 carrier up" cat /proc/net/ri2n/ri2n0

# A second device, with parameters of its own.
on n1 modprobe dummy numdummies=0
for i in $(seq 0 9); do on n1 ip link add dum$i type dummy; done
check "a second device: ip link add ri2n1 type ri2n" on n1 ip link add ri2n1 type ri2n
for i in $(seq 0 7); do on n1 ip link set dum$i master ri2n1; done
check "ri2n1 took 8 slaves" test "$(on n1 grep -c '^Slave' /proc/net/ri2n/ri2n1)" = 8
P1=/sys/class/net/ri2n1/ri2n P0=/sys/class/net/ri2n0/ri2n
check "ri2n1: fast_tout=5 accepted" on n1 sh -c "echo 5 > $P1/fast_tout"
check "  ... in effect on ri2n1" test "$(on n1 cat $P1/fast_tout)" = 5
check "  ... ri2n0 keeps its own (20)" test "$(on n1 cat $P0/fast_tout)" = 20
check "sysfs parameters are root-writable only (0644)" test "$(on n1 stat -c %a $P0/hbspan)" = 644
check "fast_tout=0 refused" not on n1 sh -c "echo 0 > $P1/fast_tout"
check "  ... with a log line naming the range" out_has n1 "ri2n1: fast_tout must be 1\\.\\.=10000 ms, not 0" dmesg
check "ft_lthresh=10 (= ft_hthresh) refused" not on n1 sh -c "echo 10 > $P1/ft_lthresh"
check "garbage refused" not on n1 sh -c "echo abc > $P1/hbspan"
check "  ... values unchanged" test "$(on n1 cat $P1/ft_lthresh)/$(on n1 cat $P1/hbspan)" = 1/2000

# ethtool and ip -d link.
check "ethtool -i: driver ri2n" out_has n1 "^driver: ri2n" ethtool -i ri2n0
check "ethtool -S: device counters" out_has n1 "tx_packets: [1-9]" ethtool -S ri2n0
check "ethtool -S: each slave's counters" out_has n1 "eth1.tx_packets: [1-9]" ethtool -S ri2n0
check "ethtool: speed is the slaves' sum (2000Mb/s)" out_has n1 "Speed: 2000Mb/s" ethtool ri2n0
link_carrier n1 1 down
sleep 0.5
check "  ... 1000Mb/s with eth1 without carrier" out_has n1 "Speed: 1000Mb/s" ethtool ri2n0
link_carrier n1 1 up
sleep 0.5
check "ip -d link show: kind ri2n" out_has n1 "ri2n" ip -d link show ri2n0
check "ip -d link show eth0: a ri2n slave" out_has n1 "ri2n_slave" ip -d link show eth0

# Bad requests: refused, with a message, nothing changed.
check "a ninth slave refused" not on n1 ip link set dum8 master ri2n1
check "  ... logged" out_has n1 "ri2n1: cannot enslave dum8: at most 8 slaves" dmesg
check "  ... dum8 untouched (no master)" not out_has n1 "master" ip link show dum8
check "loopback refused" not on n1 ip link set lo master ri2n1
on n1 modprobe sit
check "a non-Ethernet device (sit0) refused" not on n1 ip link set sit0 master ri2n0
check "the device itself refused" not on n1 ip link set ri2n0 master ri2n0
check "another ri2n device refused" not on n1 ip link set ri2n1 master ri2n0
on n1 modprobe macvlan
on n1 ip link add mv9 link dum9 type macvlan
check "a port in use (macvlan's lower device) refused" not on n1 ip link set dum9 master ri2n0
check "  ... logged as in use" out_has n1 "cannot enslave dum9: .*in use" dmesg
# Down to one slave, and to none, as a bond: a NIC is replaced without
# deleting the device.
check "releasing all but one slave" on n1 ip link set eth1 nomaster
check "  ... said in the log" out_has n1 "ri2n0: one slave left" dmesg
on n2 ip neigh flush dev ri2n0
check "  ... traffic goes on over eth0" on n2 ping -c 3 -i 0.2 -W 2 -q 10.0.0.1
check "releasing the last one" on n1 ip link set eth0 nomaster
check "  ... no carrier" out_has n1 "NO-CARRIER" ip link show ri2n0
on n1 ip link set eth0 master ri2n0
on n1 ip link set eth1 master ri2n0
check "  ... both back: traffic again" await 10 "n2 to reach n1" on n2 ping -c 1 -W 1 -q 10.0.0.1
check "mtu above the slaves' (1493) refused" not on n1 ip link set ri2n0 mtu 1493
mac0=$(ri2n_mac n1)
check "multicast MAC refused" not on n1 ip link set ri2n0 address 01:00:5e:00:00:01
check "zero MAC refused" not on n1 ip link set ri2n0 address 00:00:00:00:00:00
check "  ... MAC unchanged" test "$(ri2n_mac n1)" = "$mac0"
on n2 ip neigh flush dev ri2n0
check "  ... and still reachable" on n2 ping -c 3 -i 0.2 -W 2 -q 10.0.0.1

# Release gives the slave back as it was found.
flags() { on n1 cat /sys/class/net/$1/flags; }
check "nomaster (ri2n1 has 8)" on n1 ip link set dum7 nomaster
check "  ... dum7 has no master" not out_has n1 "master" ip link show dum7
check "  ... flags as dum8's, never enslaved ($(flags dum7) = $(flags dum8))" test "$(flags dum7)" = "$(flags dum8)"
# The procfs file follows its device's name, and a new device may take
# the old one (a file left behind would refuse it, with a warning).
check "ip link set ri2n1 name clu1" on n1 ip link set ri2n1 name clu1
check "  ... its procfs file follows" out_has n1 "^Slave 1: dum1 " cat /proc/net/ri2n/clu1
check "  ... under the old name, none" not on n1 test -e /proc/net/ri2n/ri2n1
check "a new device takes the old name" on n1 ip link add ri2n1 type ri2n
new_file() { on n1 test -e /proc/net/ri2n/ri2n1 && not out_has n1 "^Slave" cat /proc/net/ri2n/ri2n1; }
check "  ... with a file of its own" new_file
on n1 ip link del ri2n1
on n1 ip link set clu1 name ri2n1
check "ip link del ri2n1" on n1 ip link del ri2n1
check "  ... its slaves are free" not out_has n1 "master" ip link show dum0
check "  ... and down again, as found ($(flags dum0))" test "$(flags dum0)" = "$(flags dum8)"
check "  ... its procfs file is gone" not on n1 test -e /proc/net/ri2n/ri2n1
check "ri2n0 unaffected" on n1 ping -c 2 -i 0.2 -W 2 -q 10.0.0.2
check "log lines carry the module name once" not out_has n1 "ri2n: ri2n: " dmesg
finish
