#!/usr/bin/env bash
# A node that many peers probe for loss asks them all to probe it less
# often. When a node's cable loses what it receives, every peer finds its
# link toward the node lossy and probes it; each has the node as its one
# lossy peer, so each probed every 5 ms, and the node answered every probe
# (ri2n-sim, before the peers' HB_LOSSY was counted: 214,000 frames a
# second received at 1,024 peers, 856,000 at 4,096). The lab has two real
# nodes, so n3 stands in for the cluster's other peers: it sends n2
# heartbeats that say "this link is out of use toward you for loss", from
# 1,000 MACs (200 on the debug kernel). n1's eth1 loses 20 % of what it
# sends, so n1 takes it for lossy toward n2 and probes it: as often as n2
# asks (every 320 ms for 1,000 such peers, 80 ms for 200), not every 5 ms.
#
#   n1 eth0 --- br0 --- eth0 n2        n3 (ri2n-forge) on br0 and br1
#   n1 eth1 --- br1 --- eth1 n2
set -u
. "$(dirname "$0")/lib.sh"
lab_up 3 2
ri2n_up n1 n2 || fail "ri2n_up"
# The switches learn nothing from n3's ports (as ri2n_auth): the forged
# peers' frames do not pull n1's or n2's traffic toward n3.
for k in 0 1; do ns bridge link set dev n3e$k learning off; done
m1=$(ri2n_mac n1) m2=$(ri2n_mac n2)
on n2 iperf3 -s -D

# n1 takes eth1 for lossy toward n2: what it sends there is lost.
on n1 sh -c "modprobe -q sch_netem && tc qdisc replace dev eth1 root netem loss 20%"
# Traffic until it does, 12 s at most.
on n1 timeout 14 iperf3 -c 10.0.0.2 -t 12 >/dev/null 2>&1 &
ip=$!
n2_lossy() { test "$(ep_state n1 n2 eth1)" = lossy; }
check "n1 took eth1 out of use toward n2 (lossy)" await 12 "n1 to take eth1 for lossy toward n2" n2_lossy
on n1 sh -c 'kill $(pidof iperf3) 2>/dev/null'
wait $ip

# The other peers, on both links (none of their links is one n2 should
# find silent): each heard every 2 s, within the 10.24 s window n2 counts
# them in. The debug kernel's n2 does not keep up with 1,000 heartbeats a
# second (even its ssh times out): there a fifth as many peers, each as
# often, and n2 asks for a shift that many call for. They send until the
# last check is read: the waits below stretch by LAB_TIME_SCALE.
peers=$((1000 / LAB_TIME_SCALE))
# node_probe_shift (core/detector/loss.rs): ceil(log2(ceil(peers / 16))).
want=0
while (((1 << want) < (peers + 15) / 16)); do want=$((want + 1)); done
on n3 sh -c "for l in 0 1; do ri2n-forge eth\$l forge hb-lossy --from 02:f0:00:00:00:00 --to $m2 --link \$l --peers $peers --rate $((peers / 2)) --duration $((40 * LAB_TIME_SCALE)) >/dev/null 2>&1 & done"
# A dump read while peers come and go can be cut short (no `end`), which
# `ri2n get` refuses: read again (the debug kernel's guests are slow
# enough to see it).
get2() { local v; for _ in 1 2 3 4 5; do v=$(on n2 ri2n get ri2n0 "$@") && [ -n "$v" ] && break; sleep 0.5; done; echo "$v"; }
all_probing() { [ "$(get2 peers probing_peers)" -ge "$peers" ]; }
await 10 "n2 to count $peers peers probing it" all_probing
probing=$(get2 peers probing_peers)
shift=$(get2 peers probe_shift)
pretty INFO "n2: $probing peers probe it; it asks for loss probes no faster than every $((5 << ${shift:-0})) ms"
check "n2 counts the peers that probe it ($probing >= $peers)" test "${probing:-0}" -ge "$peers"
check "  ... and asks them to probe it no faster than every $((5 << want)) ms (shift $shift >= $want)" test "${shift:-0}" -ge "$want"

# n1's heartbeats on eth1 as n2 receives them, over 5 s: its probes, as
# often as n2 asks, and its periodic ones: 40 at most for every 320 ms,
# twice as many for each step less. Every 5 ms, some 800 would come.
h0=$(get2 endpoint "$m1" eth1 hb)
sleep 5
h=$(($(get2 endpoint "$m1" eth1 hb) - h0))
most=$((40 << (6 - want)))
check "n1 probes n2 on eth1 as n2 asks: $h heartbeats there in 5 s (<= $most; every 5 ms: ~800)" test "$h" -le "$most"
check "  ... and eth1 stays lossy at n1, not failed" test "$(ep_state n1 n2 eth1)" = lossy
finish
