#!/usr/bin/env bash
# ARP and IPv6 neighbour discovery keep working while a link is dead and
# not yet detected (broadcasts go on every link), and no broadcast copy
# reaches the stack twice. Heartbeats are slowed to 60 s and SLOW_TOUT
# raised to 60 s so that nothing detects the dead link during the test.
# Unicast then loses every other packet, so each check waits for one reply.
set -u
. "$(dirname "$0")/lib.sh"
lab_up 2 2
RI2N_PARAMS="hbspan=60000 slow_tout=60000" ri2n_up n1 n2 || fail "ri2n_up"
on n1 ping -c 2 -q 10.0.0.2 >/dev/null
link_blackhole n2 1 on
check "link 1 still counted up (undetected)" test "$(ep_state n1 n2 eth1)" = up
on n1 ip neigh flush dev ri2n0
check "ARP resolves n2 while link 1 is dead" on n1 ping -c 1 -w 10 -i 0.3 -q 10.0.0.2
check "n1 has n2's MAC" out_has n1 "lladdr $(ri2n_mac n2)" ip neigh show 10.0.0.2 dev ri2n0
on n1 ip -6 neigh flush dev ri2n0
check "IPv6 ND resolves n2 while link 1 is dead" on n1 ping -6 -c 1 -w 10 -i 0.3 -q fd00::2
check "no duplicate replies (DUP!)" not out_has n1 'DUP!' ping -c 6 -i 0.2 -W 1 10.0.0.2
before=$(proc_counter n2 rx_bcast_copies)
on n2 ip neigh flush dev ri2n0
on n2 ping -c 2 -i 0.3 -W 1 -q 10.0.0.1
link_blackhole n2 1 off
on n1 ip neigh flush dev ri2n0
on n1 ping -c 2 -q -W 1 10.0.0.2
after=$(proc_counter n2 rx_bcast_copies)
check "with both links up, the second copy of n1's ARP request was dropped ($before -> $after)" test "$after" -gt "$before"
finish
