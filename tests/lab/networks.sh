#!/usr/bin/env bash
# Two nodes, two networks: each network carries traffic, only its own.
#
#   n1 eth0 --- br0 --- eth0 n2      10.1.0.0/24
#   n1 eth1 --- br1 --- eth1 n2      10.1.1.0/24
set -u
. "$(dirname "$0")/lib.sh"
lab_up 2 2

for k in 0 1; do
	on n1 ip addr add 10.1.$k.1/24 dev eth$k
	on n2 ip addr add 10.1.$k.2/24 dev eth$k
done

rx_packets() { on "$1" cat /sys/class/net/"$2"/statistics/rx_packets; }

for k in 0 1; do
	other=$((1 - k))
	before_k=$(rx_packets n2 eth$k)
	before_o=$(rx_packets n2 eth$other)
	check "network $k: ping n1 -> n2" on n1 ping -c 5 -i 0.2 -W 2 -q 10.1.$k.2
	check "network $k: ping n2 -> n1" on n2 ping -c 5 -i 0.2 -W 2 -q 10.1.$k.1
	after_k=$(rx_packets n2 eth$k)
	after_o=$(rx_packets n2 eth$other)
	check "network $k: n2 eth$k received the pings ($((after_k - before_k)) >= 10)" test $((after_k - before_k)) -ge 10
	check "network $k: n2 eth$other saw none of them ($((after_o - before_o)) < 3)" test $((after_o - before_o)) -lt 3
done

# The networks are independent L2 segments: no path from net 0 to net 1.
# (arp_ignore=1: by default Linux answers ARP for any of its addresses on
# any interface, which would hide the question.)
on n1 ip addr add 10.9.0.1/24 dev eth0
on n2 ip addr add 10.9.0.2/24 dev eth1
on n2 sysctl -qw net.ipv4.conf.all.arp_ignore=1
check "no path between network 0 and network 1" not on n1 ping -c 2 -W 1 -q 10.9.0.2

finish
