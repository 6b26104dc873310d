#!/usr/bin/env bash
# Ad-hoc: one-switch mode's ping-pong gap. Configs: mode/topology.
set -u
. "$RI2N_ROOT/tests/lab/lib.sh"
LAB_NODES=0
run() { # MODE(0|1) TOPO TAG
	[ "$LAB_NODES" = 0 ] || lab_down
	LAB_DIR=$(mktemp -d /tmp/ri2n-lab.XXXXXX)
	LAB_TOPO=$2; export LAB_TOPO
	lab_up 2 2
	for n in n1 n2; do
		on $n modprobe ri2n slaves=eth0,eth1 one_switch=$1
		on $n ip link set ri2n0 up
		on $n ip addr add 10.0.0.${n#n}/24 dev ri2n0
	done
	on n1 ping -c 3 -q -W 2 10.0.0.2 >/dev/null || echo "no ping"
	on n2 sh -c 'ri2n-pingpong server >/dev/null 2>&1 &'
	sleep 0.3
	for n in n1 n2; do on $n nstat -n; done
	echo "== mode $1 topo $2 ($3)"
	on n1 ri2n-pingpong client 10.0.0.2 --sizes 128K:2M --time 1.5 | grep -v '^#'
	for n in n1 n2; do echo "-- $n"; on $n nstat | grep -E "Retrans|DSACK|Reorder|Spurious|TCPTimeouts|TCPLoss|OFO" | tr '\n' ' '; echo; on $n cat /proc/net/ri2n/ri2n0 | grep -E "^Counters" | tr ' ' '\n' | paste - - | awk '$2 > 0' | tr '\n' ' '; echo; done
	for n in n1 n2; do on $n sh -c 'for d in eth0 eth1; do echo $d rx $(cat /sys/class/net/$d/statistics/rx_packets) tx $(cat /sys/class/net/$d/statistics/tx_packets); done' | tr '\n' ' '; echo; done
}
for i in 1 2; do
run 0 two-switch base
run 1 one-switch 1sw
run 1 two-switch 1sw-on-2sw
done
lab_down
