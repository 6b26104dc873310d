#!/usr/bin/env bash
# Keyed against unkeyed bulk TCP in one lab (the target "with a key >= 0.9 x
# without", which make bench measures one configuration after another,
# ±30 % apart on a noisy host): 8 s unkeyed, keyed, unkeyed again, each with its
# retransmits and n2's window and offload counters.
#   scripts/lab run scripts/keyed-ab.sh          (shaped 100mbit)
#   SHAPE=0 scripts/lab run scripts/keyed-ab.sh  (unshaped)
set -u
. "$RI2N_ROOT/tests/lab/lib.sh"
lab_up 2 2
ri2n_up n1 n2 || fail up
[ "${SHAPE:-1}" = 1 ] && for n in n1 n2; do for l in 0 1; do link_shape $n $l 100mbit; done; done
on n2 iperf3 -s -D
for mode in unkeyed keyed unkeyed2; do
	if [ $mode = unkeyed2 ]; then for n in n1 n2; do on $n sh -c "echo none > /sys/class/net/ri2n0/ri2n/key"; done; sleep 1; fi
	if [ $mode = keyed ]; then
		for n in n1 n2; do on $n sh -c 'echo 00112233445566778899aabbccddeeff > /sys/class/net/ri2n0/ri2n/key'; done
		sleep 1
	fi
	on n1 ping -c 2 -q 10.0.0.2 >/dev/null
	b=$(on n1 nstat -az TcpRetransSegs | awk '/TcpRetransSegs/ {print $2}')
	g=$(goodput n1 10.0.0.2 8)
	a=$(on n1 nstat -az TcpRetransSegs | awk '/TcpRetransSegs/ {print $2}')
	echo "$mode: $g Mbit/s, retrans $((a - b))"
	for c in rx_replays rx_auth_fail rx_merged rx_merged_frames rx_duplicates tx_queue_full tx_dropped rx_dropped rx_held_full; do printf '%s=%s ' $c "$(proc_counter n2 $c)"; done; echo
	peer_counters n2 n1 timeout loss late late_loss replays; echo
	for c in fails lossy; do printf 'n1 %s=%s ' $c "$(peer_counter n1 n2 $c)"; done; echo
	on n1 tc -s qdisc show dev eth0 | head -3
done
