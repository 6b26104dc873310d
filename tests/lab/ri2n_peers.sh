#!/usr/bin/env bash
# Three nodes, n1's peer table sized for one peer (peers that heartbeat are
# never idle, so a table full of them must still let a newcomer in once
# one falls silent): a table truly full of live peers refuses the
# newcomer, logged and counted; once its peer falls silent, the newcomer
# takes its place within a few HBSPANs; silent peers age out everywhere;
# the default budget takes every node. (That a live peer is never evicted
# for a newcomer is misc.rs's
# a_full_table_takes_newcomers_in_place_of_unheard_or_silent_peers.)
set -u
. "$(dirname "$0")/lib.sh"
lab_up 3 2
count() { local v; v=$(proc_counter "$@"); echo "${v:-0}"; } # 0 if the driver lacks it
hb=200 # HBSPAN (ms): idle limit 3 x, age limit 8 x
# One peer and one reorder buffer: 8192 + 1829 bytes (procfs shows the
# table's size; checked below).
RI2N_PARAMS="hbspan=$hb peer_mem=10021" ri2n_up n1 || fail "ri2n_up n1"
RI2N_PARAMS="hbspan=$hb" ri2n_up n2 n3 || fail "ri2n_up"
check "n1's table holds one peer" out_has n1 "^Peers: [0-9]+ of 1 " cat /proc/net/ri2n/ri2n0
check "n1 -> n2" on n1 ping -c 2 -i 0.2 -W 2 -q 10.0.0.2
# n3 heartbeats to n1 as to everyone: n1's table is full of a live peer.
refused() { [ "$(count n1 peers_refused)" -gt 0 ]; }
check "a table full of live peers refuses the newcomer, counted" await 5 "n1 to refuse n3" refused
check "and says so in the log" out_has n1 "peer table full \(1 live peers" dmesg
check "the default budget takes every node: n3 -> n2" on n3 ping -c 2 -i 0.2 -W 2 -q 10.0.0.2

# n2 falls silent (its ri2n0 goes down): after 3 x HBSPAN it may be
# replaced, and n3 gets in.
on n2 ip link set ri2n0 down
t0=$(host_ms)
reached=never
for _ in $(seq 40); do
	if on n3 ping -c 1 -W 1 -q 10.0.0.1 >/dev/null 2>&1; then
		reached=$(($(host_ms) - t0))
		break
	fi
	sleep 0.2
done
check "n3 reaches n1 once n2 is silent ($reached ms after n2 went down)" lt "$reached" 8000
check "n1 counts the replacement" test $(($(count n1 peers_evicted) + $(count n1 peers_aged))) -gt 0

# Silent peers are forgotten after 8 x HBSPAN (1.6 s) everywhere.
aged() { [ "$(count n3 peers_aged)" -gt 0 ]; }
check "n3 aged n2 out" await 5 "n3 to age n2 out" aged
check "n3 no longer lists n2" not out_has n3 "^Peer $(on n2 cat /sys/class/net/ri2n0/address):" cat /proc/net/ri2n/ri2n0
finish
