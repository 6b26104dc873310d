#!/usr/bin/env bash
# A node that stops for a while fails no link, on either side. A vCPU
# descheduled by its host, a softirq held off: for a tenth of a second or
# more a node sends and processes nothing, then the frames queued meanwhile
# come in one link's after the other's (QEMU flushes one NIC's queue, then
# the next; NAPI takes up to 64 frames of one NIC before the other's). The
# detector's judgement (a counter past FT_HTHRESH, another link silent for
# SLOW_TOUT) ran on the first link's frames and failed the other, healthy
# link (ri2n_congested on a busy host: "tx_gso=0, n2: no link to n1
# failed").
#
# Here QEMU's monitor stops a guest (vCPUs, NICs and its clock) for 150 to
# 400 ms while TCP runs through ri2n0, four times each way. Checked: no
# endpoint failed on either node. The rule over many phases and 16 stops is
# engine.rs's a_node_that_stops_fails_no_link; this checks it end to end,
# with QEMU's own queues. (That a link that dies is still found, under
# traffic and idle, is ri2n_blackhole's.)
set -u
. "$(dirname "$0")/lib.sh"
lab_up 2 2
ri2n_up n1 n2 || fail "ri2n_up"
for n in n1 n2; do for l in 0 1; do link_shape $n $l 200mbit; done; done
on n1 ping -c 3 -i 0.2 -W 2 -q 10.0.0.2 >/dev/null
on n2 ping -c 3 -i 0.2 -W 2 -q 10.0.0.1 >/dev/null
sleep 1
f1=$(peer_counter n1 n2 fails) f2=$(peer_counter n2 n1 fails)
pretty INFO "endpoint failures before the stalls (new peers): n1 $f1, n2 $f2"

# stall NODE MS: NODE's guest stops for MS ms.
stall() {
	monitor "$1" stop
	sleep "$(awk -v m="$2" 'BEGIN { print m / 1000 }')"
	monitor "$1" cont
}

on n2 iperf3 -s -D
# Long enough for every stall on a slow host; stopped after the last.
on n1 iperf3 -c 10.0.0.2 -t 120 >/dev/null &
bulk=$!
sleep 3
for ms in 150 400 250 350; do
	stall n2 "$ms" # the receiver of the data
	sleep 1
	stall n1 "$ms" # the receiver of the ACKs
	sleep 1
done
on n1 sh -c 'kill $(pidof iperf3) 2>/dev/null'
wait "$bulk"
for pair in "n1 n2 $f1" "n2 n1 $f2"; do
	set -- $pair
	fails=$(($(peer_counter $1 $2 fails) - $3))
	check "$1: no link to $2 failed by 8 stalls of 150 to 400 ms under bulk TCP ($fails failures)" \
		test "$fails" = 0 || on $1 sh -c 'dmesg | grep ri2n0 | tail -8' >&2
done

finish
