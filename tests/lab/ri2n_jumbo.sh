#!/usr/bin/env bash
# Jumbo slaves and what deleting a device leaves behind:
# - over slaves of MTU 9000, ri2n0 takes 8992 by itself (the smallest
#   slave's MTU less the header, as a VLAN follows its lower device) and
#   carries an 8964-byte DF ping; an MTU the administrator set is kept;
# - `ip link del ri2n0` over jumbo slaves is as quick as over 1500-byte
#   ones: releasing the slaves of a device being deleted changes neither
#   its MTU nor its carrier;
# - the addresses ri2n0 synced to its slaves while up (a macvlan's MAC,
#   IPv6 groups) leave them when it goes down, so that deleting it leaves
#   the slaves' filters as they were.
set -u
. "$(dirname "$0")/lib.sh"
lab_up 2 2
for ((k = 0; k < LAB_LINKS; k++)); do
	ns ip link set "br$k" mtu 9000
	for n in 1 2; do ns ip link set "n${n}e$k" mtu 9000; done
done
# The slaves' filters before ri2n: what must be left after it.
filters() { on n2 sh -c 'ip maddr show dev eth0 | sort; bridge fdb show dev eth0 | grep -v "^33:33\|^01:00:5e" | sort'; }
before=$(filters)
for n in n1 n2; do
	on $n ip link set eth0 mtu 9000
	on $n ip link set eth1 mtu 9000
done
ri2n_up n1 n2 || fail "ri2n_up"

check "ri2n0 follows its jumbo slaves (mtu $(on n1 cat /sys/class/net/ri2n0/mtu))" \
	test "$(on n1 cat /sys/class/net/ri2n0/mtu)" = 8992
check "an 8964-byte DF ping crosses" on n1 ping -c 2 -M 'do' -s 8964 -W 2 -q 10.0.0.2
check "and the peer's too" on n2 ping -c 2 -M 'do' -s 8964 -W 2 -q 10.0.0.1

# An MTU the administrator set stays, across a slave's release and return.
on n1 ip link set ri2n0 mtu 4000
on n1 ip link set eth1 nomaster
on n1 ip link set eth1 master ri2n0
check "an MTU set by hand stays (mtu $(on n1 cat /sys/class/net/ri2n0/mtu))" \
	test "$(on n1 cat /sys/class/net/ri2n0/mtu)" = 4000
# A slave smaller than it still lowers it.
on n1 ip link set eth1 nomaster
on n1 ip link set eth1 mtu 3000
on n1 ip link set eth1 master ri2n0
check "a smaller slave lowers it (mtu $(on n1 cat /sys/class/net/ri2n0/mtu))" \
	test "$(on n1 cat /sys/class/net/ri2n0/mtu)" = 2992

# On dummies: an MTU given at creation is the administrator's too, and an
# MTU survives the release of every slave (a NIC replaced).
on n1 modprobe dummy
for d in d0 d1; do
	on n1 ip link add $d type dummy
	on n1 ip link set $d mtu 9000
done
on n1 ip link add ri2n5 mtu 1400 type ri2n
on n1 ip link set d0 master ri2n5
check "an MTU given at creation stays (mtu $(on n1 cat /sys/class/net/ri2n5/mtu))" \
	test "$(on n1 cat /sys/class/net/ri2n5/mtu)" = 1400
on n1 ip link add ri2n6 type ri2n
on n1 ip link set d1 master ri2n6
on n1 ip link set ri2n6 mtu 8000
on n1 ip link set d1 nomaster
on n1 ip link set d1 master ri2n6
check "an MTU set by hand survives its last slave's replacement (mtu $(on n1 cat /sys/class/net/ri2n6/mtu))" \
	test "$(on n1 cat /sys/class/net/ri2n6/mtu)" = 8000
on n1 ip link del ri2n5
on n1 ip link del ri2n6

# n2: a macvlan on ri2n0 and IPv6 groups, synced to the slaves while up.
on n2 modprobe macvlan
on n2 ip link add mv0 link ri2n0 type macvlan mode bridge
on n2 ip link set mv0 up
check "ri2n0's groups reach its slaves while up" out_has n2 "33:33:ff:00:00:02" ip maddr show dev eth0
# (Its own by now; set by hand, it is the same over a driver that would not
# follow its slaves.)
on n2 ip link set ri2n0 mtu 8992
del_ms=$(on n2 sh -c 'a=$(date +%s%N); ip link del ri2n0; b=$(date +%s%N); echo $(((b - a) / 1000000))')
# The debug kernel's grace periods (several a slave's release) take some 50
# times as long, not LAB_TIME_SCALE's 5: there the time is only shown.
if [ "${LAB_VARIANT:-guest}" = debug ]; then
	pretty INFO "ip link del ri2n0 over jumbo slaves took ${del_ms} ms (not bounded on the debug kernel)"
else
	check "ip link del ri2n0 over jumbo slaves took ${del_ms} ms (< 500)" lt "${del_ms:-never}" 500
fi
after=$(filters)
if [ "$after" != "$before" ]; then
	pretty INFO "eth0's filters before ri2n0:"$'\n'"$before"
	pretty INFO "after deleting it:"$'\n'"$after"
fi
check "deleting ri2n0 left eth0's address filters as they were" test "$after" = "$before"
check "the slaves keep their MTU" test "$(on n2 cat /sys/class/net/eth0/mtu)" = 9000
finish
