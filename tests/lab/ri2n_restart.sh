#!/usr/bin/env bash
# A node that reloads ri2n comes back under the same ri2n0 address (derived
# from its first slave's permanent address), so its peers' neighbour
# entries stay right: traffic to it is back within 1 s of its ri2n0 coming
# up, twice in a row, and the peer counts each restart (a new epoch). An
# address set by hand is announced (gratuitous ARP) and neighbours follow
# without a flush.
set -u
. "$(dirname "$0")/lib.sh"
lab_up 2 2
ri2n_up n1 n2 || fail "ri2n_up"
on n1 ping -c 2 -q 10.0.0.2 >/dev/null
mac2=$(ri2n_mac n2)
slave_mac=$(on n2 cat /sys/class/net/eth0/address)
check "n2's ri2n0 address is locally administered ($mac2)" test $((0x${mac2:0:2} & 2)) = 2
check "  ... and not its slave's own ($slave_mac)" test "$mac2" != "$slave_mac"

# back_ms: in n1, pings 10.0.0.2 until one is answered; prints the ms it took.
back_ms() {
	on n1 sh -c 'start=$(date +%s%3N)
		until ping -c 1 -W 0.1 -q 10.0.0.2 >/dev/null 2>&1; do
			[ $(($(date +%s%3N) - start)) -gt 40000 ] && { echo never; exit 0; }
		done
		echo $(($(date +%s%3N) - start))'
}
for round in 1 2; do
	on n2 rmmod ri2n
	on n2 modprobe ri2n slaves=eth0,eth1
	on n2 ip addr add 10.0.0.2/24 dev ri2n0
	on n2 ip link set ri2n0 up
	ms=$(back_ms)
	pretty INFO "round $round: n1 reached the reloaded n2 after $ms ms"
	check "round $round: same address after the reload" test "$(ri2n_mac n2)" = "$mac2"
	check "round $round: traffic back within 1 s ($ms ms)" lt "$ms" 1000
	# The restart shows when n2's first heartbeat (new epoch) reaches n1.
	for _ in $(seq 30); do
		r=$(peer_counter n1 n2 restarts)
		[ "$r" -ge "$round" ] && break
		sleep 0.1
	done
	check "round $round: n1 counted the restart (restarts $r)" test "$r" -ge "$round"
done

# An address set by hand is announced: n1's entry follows, no flush.
on n2 ip link set ri2n0 address 02:00:00:00:22:22
sleep 1
check "n1's neighbour entry follows a new address without a flush" out_has n1 "lladdr 02:00:00:00:22:22" ip neigh show 10.0.0.2 dev ri2n0
check "  ... and traffic flows" on n1 ping -c 2 -i 0.2 -W 1 -q 10.0.0.2
finish
