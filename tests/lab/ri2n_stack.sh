#!/usr/bin/env bash
# Stacking and namespaces: a VLAN over ri2n0, ri2n0 in a bridge (its
# promiscuity reaches the slaves), a macvlan on ri2n0; ri2n0 cannot change
# namespace; a ri2n device lives with its slaves in a container's
# namespace; a slave that leaves the namespace is released.
#
#   n1 ri2n0 10.0.0.1 ------ n2 ri2n0 10.0.0.2
#      ri2n0.7 10.7.0.1          ri2n0.7 10.7.0.2    (VLAN 7)
#      mv0 10.8.0.1              ri2n0   10.8.0.2    (macvlan on n1)
set -u
. "$(dirname "$0")/lib.sh"
lab_up 2 2
ri2n_up n1 n2 || fail "ri2n_up"
on n1 ping -c 2 -q 10.0.0.2 >/dev/null

# VLAN.
for n in n1 n2; do
	on $n modprobe 8021q
	on $n ip link add link ri2n0 name ri2n0.7 type vlan id 7
	on $n ip addr add 10.7.0.${n#n}/24 dev ri2n0.7
	on $n ip link set ri2n0.7 up
done
check "VLAN 7 over ri2n0: ping" on n1 ping -c 3 -i 0.2 -W 2 -q 10.7.0.2
check "VLAN 7 keeps ri2n0's checksum offload" out_has n1 "^tx-checksumming: on" ethtool -k ri2n0.7
on n2 iperf3 -s -D -1
# A tagged GSO packet must be cut before ri2n0: whole, the slaves could not
# segment it (plain IP only under the RI2N header), and TCP would limp on
# retransmits.
on n1 iperf3 -c 10.7.0.2 -t 2 -J >"$LAB_DIR/vlan.json"
retr=$(awk -F'[:,]' '/"retransmits":/ {r = $2} END {print r + 0}' "$LAB_DIR/vlan.json")
check "VLAN 7 over ri2n0: TCP, $retr retransmits (< 20)" test "${retr:-1000}" -lt 20
for n in n1 n2; do on $n ip link del ri2n0.7; done

# macvlan on ri2n0: its own MAC reaches the slaves' filters.
on n1 modprobe macvlan
on n1 ip link add mv0 link ri2n0 type macvlan mode bridge
on n1 ip addr add 10.8.0.1/24 dev mv0
on n1 ip link set mv0 up
on n2 ip addr add 10.8.0.2/24 dev ri2n0
check "macvlan on ri2n0: ping" on n1 ping -c 3 -i 0.2 -W 2 -q -I mv0 10.8.0.2
on n1 ip link del mv0
on n2 ip addr del 10.8.0.2/24 dev ri2n0

# ri2n0 in a bridge: promiscuity reaches the slaves; traffic through br0.
on n1 modprobe bridge
on n1 ip link add br0 type bridge
on n1 ip addr del 10.0.0.1/24 dev ri2n0
on n1 ip link set ri2n0 master br0
on n1 ip addr add 10.0.0.1/24 dev br0
on n1 ip link set br0 up
check "ri2n0 in br0: its slaves are promiscuous" out_has n1 "promiscuity [1-9]" ip -d link show eth0
check "ri2n0 in br0: ping through the bridge" on n1 ping -c 3 -i 0.2 -W 3 -q 10.0.0.2
on n1 ip link set ri2n0 nomaster
check "out of the bridge: the slaves' promiscuity is back to 0" out_has n1 "promiscuity 0" ip -d link show eth0
on n1 ip link del br0
on n1 ip addr add 10.0.0.1/24 dev ri2n0

# Namespaces.
on n1 ip netns add c1
check "ri2n0 cannot move to another namespace" not on n1 ip link set ri2n0 netns c1
check "  ... and is still here" on n1 ip link show ri2n0
on n1 rmmod ri2n
check "a ri2n device in a container: slaves move in" on n1 sh -c "ip link set eth0 netns c1 && ip link set eth1 netns c1"
check "  ... ip link add inside" on n1 ip netns exec c1 ip link add ri2n0 type ri2n
on n1 ip netns exec c1 sh -c "ip link set eth0 master ri2n0 && ip link set eth1 master ri2n0 && ip link set lo up && ip link set ri2n0 up && ip addr add 10.0.0.1/24 dev ri2n0"
on n2 ip neigh flush dev ri2n0
check "  ... container -> n2 over ri2n0" on n1 ip netns exec c1 ping -c 3 -i 0.2 -W 2 -q 10.0.0.2
check "  ... its procfs file is in the container's /proc/net" on n1 ip netns exec c1 sh -c "grep -q '^Slave 1: eth1' /proc/net/ri2n/ri2n0"
check "  ... and not in the host's" not on n1 test -e /proc/net/ri2n/ri2n0
# Moving a slave out of the container releases it; traffic goes on.
check "a slave moved out of the namespace is released" on n1 ip netns exec c1 ip link set eth1 netns 1
check "  ... logged" out_has n1 "ri2n0: link eth1: slave released" dmesg
check "  ... traffic goes on over eth0" on n1 ip netns exec c1 ping -c 3 -i 0.2 -W 2 -q 10.0.0.2
check "deleting the namespace deletes its ri2n device" on n1 ip netns del c1
sleep 1
check "  ... eth0 came home, free" sh -c "! on n1 ip link show eth0 | grep -q master"
check "rmmod" on n1 rmmod ri2n
finish
