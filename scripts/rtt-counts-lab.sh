#!/usr/bin/env bash
# scripts/lab run scripts/rtt-counts-lab.sh: what a 64 B ping-pong round trip
# costs in events rather than time (TCP segments, frames per NIC, context
# switches, interrupts, per round trip at each node), over ri2n0 (eth0,
# eth1), one link (eth2, TSO off) and bonding balance-rr (eth3, eth4, TSO
# off) in one lab, two rounds of 4 s each. Round trips under TCG swing
# with the host; event counts do not.
set -u
. "$RI2N_ROOT/tests/lab/lib.sh"
. "$RI2N_ROOT/scripts/paths-lab.sh"
paths_up 1 off
on n2 sh -c 'ri2n-pingpong server >/dev/null 2>&1 &'
sleep 1
for a in 10.0.0.2 10.3.0.2 10.4.0.2; do on n1 ping -c 2 -q $a >/dev/null; done
snap() { on "$1" sh -c 'awk "/^ctxt/ {print \"ctxt\", \$2} /^intr/ {print \"intr\", \$2}" /proc/stat; nstat -az TcpOutSegs TcpInSegs TcpExtDelayedACKs TcpExtTCPHPAcks TcpExtTCPPureAcks TcpExtTCPHPHits | awk "NR>1 {print \$1, \$2}"; for d in eth0 eth1 eth2 eth3 eth4; do echo tx_$d $(cat /sys/class/net/$d/statistics/tx_packets); echo rx_$d $(cat /sys/class/net/$d/statistics/rx_packets); done; awk "/LOC/ {print \"LOC\", \$2}" /proc/interrupts'; }
for _ in 1 2; do
for a in 10.0.0.2 10.3.0.2 10.4.0.2; do
	snap n1 >$LAB_DIR/a1; snap n2 >$LAB_DIR/a2
	r=$(on n1 ri2n-pingpong client $a --sizes 64:64 --time 4 | awk '!/^#/ && NF {print $2, $3; exit}')
	snap n1 >$LAB_DIR/b1; snap n2 >$LAB_DIR/b2
	set -- $r
	for n in 1 2; do
		echo "$a n$n: $1 round trips, rtt $2 us; per round trip: $(paste -d" " $LAB_DIR/a$n $LAB_DIR/b$n | awk -v t=$1 '{d = $4 - $2; if (d) printf "%s %.2f ", $1, d / t}')"
	done
done
done
finish
