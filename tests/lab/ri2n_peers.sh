#!/usr/bin/env bash
# Four nodes, n1's peer table sized for two peers (peers that heartbeat are
# never idle, so a table full of them must still let a newcomer in once
# one falls silent): a table truly full of live peers refuses the newcomer, logged and counted; once one of its peers
# falls silent, the newcomer takes its place within a few HBSPANs; a live
# peer is never evicted; silent peers age out everywhere; the default
# budget takes every node.
set -u
. "$(dirname "$0")/lib.sh"
lab_up 4 2
count() { local v; v=$(proc_counter "$@"); echo "${v:-0}"; } # 0 if the driver lacks it
hb=200 # HBSPAN (ms): idle limit 3 x, age limit 8 x
if on n1 modinfo -p ri2n | grep -q '^peer_mem'; then
	# Two peers and one reorder buffer: 8192 + 2 x 1829 bytes (procfs
	# shows the table's size; checked below).
	small="peer_mem=12000"
else
	small="max_peers=2" # a module from before peer_mem
fi
RI2N_PARAMS="hbspan=$hb $small" ri2n_up n1 || fail "ri2n_up n1"
RI2N_PARAMS="hbspan=$hb" ri2n_up n2 n3 n4 || fail "ri2n_up"
if [ "$small" = peer_mem=12000 ]; then
	check "n1's table holds two peers" out_has n1 "^Peers: [0-9]+ of 2 " cat /proc/net/ri2n/ri2n0
fi
check "n1 -> n2" on n1 ping -c 2 -i 0.2 -W 2 -q 10.0.0.2
check "n1 -> n3" on n1 ping -c 2 -i 0.2 -W 2 -q 10.0.0.3
# n4 heartbeats to n1 as to everyone: n1's table is full of live peers.
sleep 1
refused=$(count n1 peers_refused)
check "a table full of live peers refuses the newcomer, counted ($refused)" test "${refused:-0}" -gt 0
check "and says so in the log" out_has n1 "peer table full \(2 live peers" dmesg
check "the default budget takes every node: n4 -> n2" on n4 ping -c 2 -i 0.2 -W 2 -q 10.0.0.2
check "n4 -> n3" on n4 ping -c 2 -i 0.2 -W 2 -q 10.0.0.3

# n3 falls silent (its ri2n0 goes down): after 3 x HBSPAN it may be
# replaced, and n4 gets in. n2 keeps heartbeating and is never evicted.
on n3 ip link set ri2n0 down
t0=$(host_ms)
reached=never
for _ in $(seq 40); do
	if on n4 ping -c 1 -W 1 -q 10.0.0.1 >/dev/null 2>&1; then
		reached=$(($(host_ms) - t0))
		break
	fi
	sleep 0.2
done
check "n4 reaches n1 once n3 is silent ($reached ms after n3 went down)" lt "$reached" 8000
check "n1 -> n2 still (a live peer is never evicted)" on n1 ping -c 3 -i 0.2 -W 2 -q 10.0.0.2
check "n1 counts the replacement" test $(($(count n1 peers_evicted) + $(count n1 peers_aged))) -gt 0

# Silent peers are forgotten after 8 x HBSPAN (1.6 s) everywhere.
sleep 3
check "n2 aged n3 out" test "$(count n2 peers_aged)" -gt 0
check "n2 no longer lists n3" not out_has n2 "^Peer $(on n3 cat /sys/class/net/ri2n0/address):" cat /proc/net/ri2n/ri2n0
finish
