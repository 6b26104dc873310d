#!/usr/bin/env bash
# Keys switched on after a forger moved a receiver's broadcast filter: the
# cause of ri2n_auth's rare failure (the keyed pair's ARP refused as
# replays ever after, so pings failed for good). Unkeyed, n3 sends
# broadcasts in n1's name numbered 5000 ahead of n1's own, which n2 takes
# (the unkeyed segment is trusted); then both set a key. n1's next ARP
# request, sealed and numbered behind the forged ones, must be taken: what
# frames carried before the key says nothing once it is on.
#
#   n1 eth0 --- br0 --- eth0 n2        n3 (ri2n-forge) on br0 and br1
#   n1 eth1 --- br1 --- eth1 n2
set -u
. "$(dirname "$0")/lib.sh"
lab_up 3 2
ri2n_up n1 n2 || fail "ri2n_up"
for k in 0 1; do ns bridge link set dev n3e$k learning off; done
m1=$(ri2n_mac n1)
m2=$(ri2n_mac n2)
key=00112233445566778899aabbccddeeff

# n1's broadcast numbering, from one of its ARP requests n3 sees.
on n3 ri2n-forge eth0 capture /tmp/bcast --src "$m1" --kind bcast --count 1 --timeout 5 >/dev/null &
capture=$!
sleep 0.5
on n1 ip neigh flush dev ri2n0
on n1 ping -c 1 -W 2 -q 10.0.0.2 >/dev/null
wait $capture
frame=$(on n3 head -1 /tmp/bcast)
check "n3 saw one of n1's broadcasts" test -n "$frame"
seq=$((16#${frame:36:8}))
ahead=$(((seq + 5000) % 4294967296))
pretty INFO "n1's broadcasts are numbered from $seq; n3 forges from $ahead"

# Forged, then the keys on at once (n1 sends no broadcast meanwhile: its
# ARP entry for n2 is fresh).
e1=$(on n2 ri2n get ri2n0 peer "$m1" epoch)
rx0=$(proc_counter n2 rx_packets)
forged=$(on n3 sh -c "for l in 0 1; do ri2n-forge eth\$l forge bcast --from $m1 --to $m2 --epoch $e1 --seq $ahead --link \$l --rate 50 --duration 1 & done; wait" |
	awk '/^sent/ {n += $2} END {print n + 0}')
for n in n2 n1; do on $n sh -c "echo $key > /sys/class/net/ri2n0/ri2n/key" || fail "setting the key on $n"; done
pretty INFO "n3 forged $forged broadcasts; n2 took $(($(proc_counter n2 rx_packets) - rx0)) packets meanwhile"

on n1 ip neigh flush dev ri2n0
replays=$(proc_counter n2 rx_replays)
check "keyed: n1 -> n2 ping, ARP included" on n1 ping -c 3 -i 0.2 -W 2 -q 10.0.0.2
pretty INFO "n2 refused $(($(proc_counter n2 rx_replays) - replays)) of n1's frames as replays meanwhile"
check "n2 -> n1 ping" on n2 ping -c 2 -i 0.2 -W 2 -q 10.0.0.1
finish
