#!/usr/bin/env bash
# Striping granularity (stripe_segs) with tx_gso=0, where ri2n
# segments GSO packets itself (with tx_gso=1, the default, every GSO packet
# goes whole to one link: ri2n_gso.sh): a GSO packet that ri2n
# segments goes whole to one link if it has at most stripe_segs segments
# (default 8), its frames numbered in a row, which the receiving slave's
# GRO then merges (rx_gro); a longer one is spread segment by segment.
# Checked: a 4 KiB message (3 segments) keeps to one link, at the default
# and not with stripe_segs=1 (the paper's per-segment spreading); bulk TCP
# (long GSO packets) is still spread segment by segment over both links.
set -u
. "$(dirname "$0")/lib.sh"
lab_up 2 2
# A debug kernel is much slower: fewer round trips, and fewer frames of a
# message arrive within one poll of the slave.
div=4
[ "$LAB_TIME_SCALE" = 1 ] || div=10

# merges SIZE: n1 -> n2 ping-pong of SIZE-byte messages for 2 s;
# sets TRIPS and MERGED (packets n2's slaves merged meanwhile).
merges() {
	local m0
	m0=$(proc_counter n2 rx_merged)
	TRIPS=$(on n1 ri2n-pingpong client 10.0.0.2 --sizes "$1:$1" --time 2 | awk '!/^#/ {print $2; exit}')
	MERGED=$(($(proc_counter n2 rx_merged) - m0))
}
links_even() { # N1_FRAMES_LINK0 N1_FRAMES_LINK1
	test $(($1 * 10)) -gt $(($2 * 7)) -a $(($2 * 10)) -gt $(($1 * 7))
}
tx() { on n1 cat /sys/class/net/eth$1/statistics/tx_packets; }

for stripe in default 1; do
	params=tx_gso=0
	[ $stripe = default ] || params="$params stripe_segs=$stripe"
	RI2N_PARAMS="$params" ri2n_up n1 n2 || fail "ri2n_up $params"
	on n2 sh -c 'ri2n-pingpong server >/dev/null 2>&1 &'
	sleep 0.5
	merges 4096
	if [ $stripe = default ]; then
		check "4 KiB messages (3 segments) keep to one link: n2's slaves merged $MERGED packets in ${TRIPS:-0} round trips (> 1/$div of them)" \
			test "${TRIPS:-0}" -gt 0 -a "$MERGED" -gt $((${TRIPS:-0} / div))
	else
		check "stripe_segs=1: 4 KiB messages spread segment by segment: n2's slaves merged $MERGED packets in ${TRIPS:-0} round trips (< 1/20 of them)" \
			test "${TRIPS:-0}" -gt 0 -a "$MERGED" -lt $((${TRIPS:-0} / 20 + 1))
	fi
	on n2 iperf3 -s -D
	sleep 0.3
	t0=$(tx 0) t1=$(tx 1) f0=$(proc_counter n2 rx_packets) m0=$(proc_counter n2 rx_merged_frames)
	on n1 iperf3 -c 10.0.0.2 -t 3 >/dev/null
	t0=$(($(tx 0) - t0)) t1=$(($(tx 1) - t1))
	f0=$(($(proc_counter n2 rx_packets) - f0)) m0=$(($(proc_counter n2 rx_merged_frames) - m0))
	check "stripe_segs $stripe: bulk TCP on both links evenly ($t0 / $t1 frames from n1)" links_even $t0 $t1
	# Bulk TCP's GSO packets are long: spread, their frames alternate
	# links and are not merged (whole, nearly all would be). On a debug
	# kernel TCP moves a few Mbit/s, in packets of a few segments, which
	# go whole as they should: nothing to check there.
	if [ "$LAB_TIME_SCALE" = 1 ]; then
		check "  ... its long packets spread segment by segment: $m0 of n2's $f0 frames merged (< 1/5)" \
			test $((m0 * 5)) -lt "$f0"
	else
		pretty INFO "  ... $m0 of n2's $f0 frames merged (debug kernel: short packets, not checked)"
	fi
	for n in n1 n2; do
		on $n sh -c 'kill $(pidof iperf3 ri2n-pingpong) 2>/dev/null; true'
		on $n rmmod ri2n || fail "$n: rmmod"
	done
done
finish
