#!/usr/bin/env bash
# scripts/lab run scripts/lossy-failover-lab.sh: the last usable link dies
# beside a lossy one. eth1 loses 20 % both ways (lossy at both nodes);
# n1 pings n2 every 10 ms, over eth0 alone; then eth0 is blackholed (the
# guests keep carrier). Per run (RUNS, 3): when each node failed eth0 and
# the longest gap between n1's ping replies, which the lossy eth1 carries
# once eth0 is out of use. A probe round that eth1 witnesses finds eth0
# dead (core/detector/probe.rs); ri2n_lossy checks it, this prints more runs.
set -u
. "$RI2N_ROOT/tests/lab/lib.sh"
lab_up 2 2
ri2n_up n1 n2 || fail "ri2n_up"
on n2 iperf3 -s -D
link_netem n1 1 loss 20%
goodput n1 10.0.0.2 2 >/dev/null
goodput n1 10.0.0.2 6 >/dev/null
[ "$(ep_state n1 n2 eth1):$(ep_state n2 n1 eth1)" = lossy:lossy ] || fail "eth1 not lossy at both nodes"
# until NODE PEER STATE: ms until eth0's endpoint is in STATE (30 s at most).
until_state() {
	local t0 t
	t0=$(host_ms)
	while [ "$(ep_state "$1" "$2" eth0)" != "$3" ]; do
		t=$(($(host_ms) - t0))
		[ $t -lt 30000 ] || { echo never; return; }
		sleep 0.05
	done
	echo $(($(host_ms) - t0))
}
for ((r = 1; r <= ${RUNS:-3}; r++)); do
	ping_start n1 10.0.0.2 40
	sleep 2
	link_blackhole n1 0 on
	f1=$(until_state n1 n2 failed)
	f2=$(until_state n2 n1 failed)
	sleep 1
	link_blackhole n1 0 off
	until_state n1 n2 up >/dev/null
	gap=$(ping_gap n1)
	echo "run $r: eth0 failed at n1 after ${f1} ms, at n2 by ${f2} ms more; longest gap between replies ${gap} ms"
	sleep 3
done
