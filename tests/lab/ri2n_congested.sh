#!/usr/bin/env bash
# Bulk TCP into congested switch ports: two links shaped at the switch
# (tbf, 30 Mbit/s, 50 ms of queue), which TCP fills until they drop. Full
# queues delay and lose frames on every link alike; they are no failed
# link and no bad cable. Checked: no endpoint is failed or taken out for
# loss on either node, and ri2n0 carries about what two links do next to
# one link measured through the same shaping in the same lab.
#
# Both ways of striping are checked: tx_gso=0 (frames one by one) and the
# default tx_gso=1 (whole GSO packets per link), where a burst of drops
# lands on one port's queue at a time, in one link's loss sample alone.
set -u
. "$(dirname "$0")/lib.sh"
lab_up 2 2
for n in n1 n2; do for l in 0 1; do link_shape $n $l 30mbit 128kb; done; done
secs=$((4 * LAB_TIME_SCALE))
on n2 iperf3 -s -D

on n1 ip addr add 10.1.0.1/24 dev eth0
on n2 ip addr add 10.1.0.2/24 dev eth0
sleep 0.3
single=$(goodput n1 10.1.0.2 "$secs")
on n1 ip addr flush dev eth0
on n2 ip addr flush dev eth0

# congested LABEL: three transfers over ri2n0 (up on n1 and n2), checked.
congested() {
	local label=$1 runs=() median pair fails lossy
	on n1 ping -c 2 -q 10.0.0.2 >/dev/null
	for _ in 1 2 3; do runs+=("$(goodput n1 10.0.0.2 "$secs")"); done
	median=$(printf '%s\n' "${runs[@]}" | sort -n | sed -n 2p)
	pretty INFO "TCP ${secs} s into 30 Mbit/s ports: one link ${single:-0} Mbit/s; ri2n0 ($label) ${runs[*]} (median ${median:-0})"
	for pair in "n1 n2" "n2 n1"; do
		set -- $pair
		fails=$(peer_counter $1 $2 fails) lossy=$(peer_counter $1 $2 lossy)
		check "$label, $1: no link to $2 failed ($fails failures)" test "$fails" = 0 || on $1 dmesg | grep ri2n0 >&2
		check "$label, $1: no link to $2 out of use for loss ($lossy times)" test "$lossy" = 0
	done
	# The debug kernel's guests cannot fill two links.
	[ "$LAB_TIME_SCALE" = 1 ] && check "$label: ri2n0 carries two links' worth (median ${median:-0} >= 1.8 x ${single:-0})" \
		ge "${median:-0}" "$(awk -v s="${single:-0}" 'BEGIN { print 1.8 * s }')"
}

RI2N_PARAMS="tx_gso=0" ri2n_up n1 n2 || fail "ri2n_up (tx_gso=0)"
congested tx_gso=0
for n in n1 n2; do on $n ip link del ri2n0; on $n modprobe -r ri2n; done
ri2n_up n1 n2 || fail "ri2n_up (default)"
congested "tx_gso=1 (default)"
finish
