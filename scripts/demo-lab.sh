#!/usr/bin/env bash
# The demo (make demo): two nodes, ri2n0 over two links of 100 Mbit/s each,
# a 30 s TCP transfer n1 -> n2; link 1 loses carrier at 10 s and gets it
# back at 20 s. Prints the throughput every 0.5 s and the endpoint state,
# and draws the timeline (lab-out/demo-timeline.png).
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
# n1's state every 0.5 s (`ri2n show --json`, one line each) for the plot.
on n1 sh -c 'for i in $(seq 64); do ri2n show --json; sleep 0.5; done' >"$LAB_DIR/samples.jsonl" &
sampler=$!
on n1 sh -c 'date +%s%3N >/tmp/t0; exec iperf3 -c 10.0.0.2 -t 30 -i 0.5 -J' >"$LAB_DIR/iperf.json" &
ip=$!
sleep 10
link_carrier n2 1 down
pretty DEMO "link 1 of n2: carrier down"
sleep 10
link_carrier n2 1 up
pretty DEMO "link 1 of n2: carrier up"
wait $ip
wait $sampler
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
pretty DEMO "n1's view (ri2n show):"
on n1 ri2n show
echo
pretty DEMO "kernel log of n1 and n2:"
on n1 dmesg | grep -E 'ri2n0: (link|peer)' | sed 's/^/n1 /'
on n2 dmesg | grep -E 'ri2n0: (link|peer)' | sed 's/^/n2 /'

# The timeline: goodput, packets per second on each of n1's links, and the
# state of n1's endpoint (n2, eth1), around the cut.
out=$RI2N_ROOT/lab-out
mkdir -p "$out"
python3 "$RI2N_ROOT/scripts/demo-plot.py" "$LAB_DIR/samples.jsonl" "$(on n1 cat /tmp/t0)" "$LAB_DIR"
if command -v gnuplot >/dev/null && [ -s "$LAB_DIR/links.dat" ]; then
	gnuplot <<PLOT
set terminal pngcairo size 1000,640 noenhanced
set output "$out/demo-timeline.png"
set multiplot layout 2,1 title "ri2n0, two links at $RATE: n2's link 1 loses carrier at 10 s, back at 20 s"
set xrange [0:30]
set rmargin 12
set grid
set ylabel "goodput, Mbit/s"
set yrange [0:*]
set arrow from 10, graph 0 to 10, graph 1 nohead dt 2
set arrow from 20, graph 0 to 20, graph 1 nohead dt 2
plot "$LAB_DIR/goodput.dat" using 1:2 with steps lw 2 title "TCP n1 -> n2 (iperf3, 0.5 s)"
set ylabel "n1 sends, packets/s"
set xlabel "time, s"
set y2range [-0.1:1.3]
set y2tics ("out of use" 0, "up" 1)
set key center right
plot "$LAB_DIR/links.dat" using 1:2 with steps lw 2 title "eth0", \
     "" using 1:3 with steps lw 2 title "eth1", \
     "" using 1:4 axes x1y2 with steps lw 2 dt 3 title "endpoint (n2, eth1)"
unset multiplot
PLOT
	pretty DEMO "timeline: $out/demo-timeline.png"
else
	pretty DEMO "no timeline picture (gnuplot missing: scripts/setup-host.sh --demo installs it)"
fi
lab_check_kernel
