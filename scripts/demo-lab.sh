#!/usr/bin/env bash
# The demo (make demo): two nodes, ri2n0 over two links of 100 Mbit/s each,
# a 30 s TCP transfer n1 -> n2; link 1 loses carrier at 10 s and gets it
# back at 20 s. Prints the throughput every 0.5 s and the endpoint state.
set -u
. "$RI2N_ROOT/tests/lab/lib.sh"
RATE=${DEMO_RATE:-100mbit}
pretty DEMO "booting two nodes with two links each"
lab_up 2 2
for n in n1 n2; do for l in 0 1; do link_shape $n $l "$RATE"; done; done
pretty DEMO "links shaped to $RATE each, on the host side (tbf on each tap, into the guest)"
ri2n_up n1 n2 || fail "ri2n_up"
on n1 ping -c 2 -q 10.0.0.2 >/dev/null
on n2 iperf3 -s -D
sleep 0.5
pretty DEMO "TCP n1 -> n2 over ri2n0 for 30 s; cut link 1 (carrier) at 10 s, restore at 20 s"
on n1 iperf3 -c 10.0.0.2 -t 30 -i 0.5 -J >"$LAB_DIR/iperf.json" &
ip=$!
sleep 10
link_carrier n2 1 down
pretty DEMO "link 1 of n2: carrier down"
sleep 10
link_carrier n2 1 up
pretty DEMO "link 1 of n2: carrier up"
wait $ip
echo
echo "   time   Mbit/s"
awk -F'[:,]' '
	/"intervals"/ {inside = 1}
	inside && /"sum"/ {s = 1}
	s && /"end":/ {end = $2}
	s && /"bits_per_second"/ {
		mb = $2 / 1e6; bar = ""
		for (i = 0; i < mb / 5; i++) bar = bar "#"
		printf "%6.1fs %8.1f  %s\n", end, mb, bar; s = 0
	}
	/"sum_sent"/ {inside = 0}' "$LAB_DIR/iperf.json"
echo
pretty DEMO "n1's view (/proc/net/ri2n/ri2n0):"
on n1 cat /proc/net/ri2n/ri2n0
echo
pretty DEMO "kernel log of n1 and n2:"
on n1 dmesg | grep -E 'ri2n0: (link|peer)' | sed 's/^/n1 /'
on n2 dmesg | grep -E 'ri2n0: (link|peer)' | sed 's/^/n2 /'
lab_check_kernel
