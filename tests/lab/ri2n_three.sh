#!/usr/bin/env bash
# Three nodes on the same two networks: state per peer (2 peers x 2 links
# = 4 endpoints per node), every pair talks, a link failure toward one peer
# leaves the other peer's endpoints alone.
set -u
. "$(dirname "$0")/lib.sh"
lab_up 3 2
ri2n_up n1 n2 n3 || fail "ri2n_up"
for a in 1 2 3; do
	for b in 1 2 3; do
		[ $a = $b ] && continue
		check "n$a -> n$b over ri2n0" on n$a ping -c 3 -i 0.2 -W 2 -q 10.0.0.$b
	done
done
check "n1 knows 2 peers" out_has n1 '^Peers: 2 of ' cat /proc/net/ri2n/ri2n0
check "n1 has 4 endpoints" test "$(on n1 grep -c endpoint /proc/net/ri2n/ri2n0)" = 4
# Blackhole n3's port on network 1: only n3's endpoints on eth1 fail.
link_blackhole n3 1 on
# Traffic to both peers, until n3's counters judge (12 s at most).
on n1 sh -c 'for i in $(seq 60); do ping -c 1 -W 0.2 -q 10.0.0.3; ping -c 1 -W 0.2 -q 10.0.0.2; done' >/dev/null &
pinger=$!
n3_failed() { test "$(ep_state n1 n3 eth1)" = failed; }
check "n1: (n3, eth1) failed" await 12 "n1 to fail (n3, eth1)" n3_failed
kill $pinger 2>/dev/null
wait $pinger 2>/dev/null
check "n1: (n2, eth1) still up" test "$(ep_state n1 n2 eth1)" = up
check "n1 -> n3 still works (eth0)" on n1 ping -c 3 -i 0.2 -W 2 -q 10.0.0.3
check "n1 -> n2 still works" on n1 ping -c 3 -i 0.2 -W 2 -q 10.0.0.2
link_blackhole n3 1 off
finish
