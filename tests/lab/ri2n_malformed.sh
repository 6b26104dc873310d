#!/usr/bin/env bash
# Frames injected from a raw socket on a slave: bad version, unknown kind,
# garbage, a flood of random source MACs, a forged heartbeat, and RI2N
# frames on a non-slave.
# Each is dropped and counted; nothing crashes; ri2n0 keeps working; the
# peer table stays bounded.
set -u
. "$(dirname "$0")/lib.sh"
lab_up 2 2
# peer_mem for 8 peers and one reorder buffer: 8192 + 8 x 1829 bytes.
RI2N_PARAMS="peer_mem=23000" ri2n_up n1 n2 || fail "ri2n_up"
on n1 ping -c 2 -q 10.0.0.2 >/dev/null
mac2=$(ri2n_mac n2 | tr -d :)

src=020000000099
before=$(proc_counter n2 rx_malformed)
inject n1 eth0 "$mac2$src" 1004 05010800 00000001 0000  # version 5
inject n1 eth0 "$mac2$src" 1004 00010800 00000001 0000  # version 0
inject n1 eth1 "$mac2$src" 1004 01090800 00000001 0000  # kind 9
inject n1 eth1 "$mac2$src" 1004 01000800 00000001 0000  # kind 0
after=$(proc_counter n2 rx_malformed)
check "4 malformed frames dropped and counted ($before -> $after)" test $((after - before)) = 4
check "the kernel log names the reason" out_has n2 "dropped malformed frame on eth[01]: (bad version|unknown kind)" dmesg

# Garbage: random bytes behind the RI2N ethertype, 50 frames.
on n1 sh -c "for i in \$(seq 50); do (printf '\\x${mac2:0:2}\\x${mac2:2:2}\\x${mac2:4:2}\\x${mac2:6:2}\\x${mac2:8:2}\\x${mac2:10:2}\\x02\\x00\\x00\\x00\\x00\\x98\\x10\\x04'; head -c \$((RANDOM % 200 + 1)) /dev/urandom) >/tmp/frame; socat -u -b 2000 OPEN:/tmp/frame INTERFACE:eth0; done"
check "ri2n0 still works after garbage" on n1 ping -c 3 -i 0.2 -W 2 -q 10.0.0.2

# Flood of valid-looking data frames from 100 random source MACs: the peer
# table stays at its size (8); flood MACs never heartbeat, so each admitted
# one takes the place of an older one, never of n1, a live peer; beyond 8
# per HBSPAN they are refused. All are counted. Frames go through a file,
# as inject's do (lib.sh).
before=$(proc_counter n2 peers_new) refused0=$(proc_counter n2 peers_refused)
on n1 sh -c "for i in \$(seq 100); do (printf '\\x${mac2:0:2}\\x${mac2:2:2}\\x${mac2:4:2}\\x${mac2:6:2}\\x${mac2:8:2}\\x${mac2:10:2}\\x02'; head -c 5 /dev/urandom; printf '\\x10\\x04\\x01\\x01\\x08\\x00'; head -c 40 /dev/urandom) >/tmp/frame; socat -u -b 2000 OPEN:/tmp/frame INTERFACE:eth1; done"
peers=$(on n2 ri2n get ri2n0 peers count)
new=$(($(proc_counter n2 peers_new) - before)) refused=$(($(proc_counter n2 peers_refused) - refused0))
evicted=$(proc_counter n2 peers_evicted)
check "peer table bounded by peer_mem ($peers <= 8)" out_has n2 "^Peers: [0-8] of 8 " cat /proc/net/ri2n/ri2n0
check "the flood is counted: new peers ($new) and refused ($refused)" test $((new + refused)) -ge 95
check "  ... each new one beyond the free slots evicted one ($evicted)" test "$evicted" -ge $((new - 8))
check "n1 is still a peer of n2" out_has n2 "^Peer $(ri2n_mac n1):" cat /proc/net/ri2n/ri2n0
check "ri2n0 still works after the flood (n1 is a known peer)" on n1 ping -c 3 -i 0.2 -W 2 -q 10.0.0.2

# A forged heartbeat in n1's name (its MAC, epoch and numbering) saying
# every link is down: one alone takes no link out (the hardening without a
# key); n2 keeps reaching n1.
m1=$(ri2n_mac n1)
epoch=$(on n2 ri2n get ri2n0 peer "$m1" epoch)
next=$(printf %08x "$(on n1 ri2n get ri2n0 peer "$(ri2n_mac n2)" tx_next)")
inject n1 eth0 "$mac2$(echo "$m1" | tr -d :)" 1004 0103 0000 "$next" "$epoch" 00 00 03 00
states="$(ep_state n2 n1 eth0)/$(ep_state n2 n1 eth1)"
check "one forged all-links-down heartbeat takes no link out ($states)" test "$states" = up/up
check "  ... n2 still reaches n1" on n2 ping -c 2 -i 0.2 -W 2 -q 10.0.0.1

# RI2N frames on a device that is not a slave never reach ri2n.
# (rx_packets is not compared: ARP and ND may arrive meanwhile.)
before=$(proc_counter n2 rx_dropped)/$(proc_counter n2 rx_malformed)
inject n2 lo "$mac2$src" 1004 02010800 00000001 0000
after=$(proc_counter n2 rx_dropped)/$(proc_counter n2 rx_malformed)
check "frame on a non-slave ignored ($before -> $after)" test "$before" = "$after"
finish
