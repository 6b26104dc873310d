#!/usr/bin/env bash
# Slave ownership, as bonding and team own their ports: a NIC that a bond
# owns is refused; a ri2n slave cannot be taken by a bond; unloading gives
# every slave back exactly as it was found (flags, allmulti, filters).
set -u
. "$(dirname "$0")/lib.sh"
lab_up 2 2
flags() { on n1 cat /sys/class/net/$1/flags; }

# eth1 is a bond's port: ri2n refuses it, and creates nothing.
on n1 modprobe bonding max_bonds=0
on n1 ip link add bond0 type bond mode balance-rr
on n1 ip link set eth1 down
on n1 ip link set eth1 master bond0
on n1 dmesg -C
check "modprobe ri2n slaves=eth0,eth1 refused while eth1 is a bond's port" not on n1 modprobe ri2n slaves=eth0,eth1
check "  ... logged as in use" out_has n1 "cannot enslave eth1: .*in use" dmesg
check "  ... no ri2n0 left behind" not on n1 ip link show ri2n0
check "  ... eth0 has no master" not out_has n1 "master" ip link show eth0
check "  ... eth1 still the bond's" out_has n1 "master bond0" ip link show eth1
on n1 ip link set eth1 nomaster
on n1 ip link set eth1 up
on n1 rmmod ri2n 2>/dev/null

# A bond cannot take a slave from a running ri2n0.
f0=$(flags eth0) f1=$(flags eth1)
check "modprobe ri2n slaves=eth0,eth1" on n1 modprobe ri2n slaves=eth0,eth1
check "a bond cannot take eth1 from ri2n0" not on n1 sh -c 'echo +eth1 > /sys/class/net/bond0/bonding/slaves'
check "  ... eth1 stays ri2n0's" out_has n1 "master ri2n0" ip link show eth1
on n1 modprobe bridge
on n1 ip link add br9 type bridge
# `ip link set eth0 master br9` asks ri2n0 to release it first, and so
# moves it, as it moves a bond's port; it comes back the same way.
check "ip link set eth0 master br9 moves it, as a bond's port" on n1 ip link set eth0 master br9
check "  ... eth0 is br9's" out_has n1 "master br9" ip link show eth0
check "  ... and back to ri2n0" on n1 sh -c "ip link set eth0 nomaster && ip link set eth0 master ri2n0"
check "  ... eth0 is ri2n0's" out_has n1 "master ri2n0" ip link show eth0

# Unload: every slave exactly as found, three times over (each rmmod used
# to leave allmulti behind).
for round in 1 2 3; do
	on n1 rmmod ri2n
	check "round $round: eth0 flags as found ($f0 -> $(flags eth0))" test "$(flags eth0)" = "$f0"
	check "round $round: eth1 flags as found ($f1 -> $(flags eth1))" test "$(flags eth1)" = "$f1"
	check "round $round: eth0 not in allmulticast mode" not out_has n1 ALLMULTI ip link show eth0
	check "round $round: eth0 has no master" not out_has n1 master ip link show eth0
	on n1 modprobe ri2n slaves=eth0,eth1
done
on n1 rmmod ri2n
finish
