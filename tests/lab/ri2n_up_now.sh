#!/usr/bin/env bash
# A peer's packets go up in the order its window released them, on a
# receiver with 2 CPUs, and short ones at once.
#
# The window orders under the state lock, but handed its releases up after
# the lock, on the GRO cell of whichever CPU released them; two CPUs
# releasing one after the other raced, and the later could go up first.
# Now each peer has one cell (net/gro.rs), its packets queued there under
# the lock: one poll of a cell runs at a time and flushes its GRO before
# the next. A packet that ends any run GRO could merge (a short one, at
# most half the MTU, as GRO merges only runs of full segments; a TCP
# segment with PSH, as a message's last) goes up at once if its peer's
# cell is idle, through a claim that keeps the cell's poll off meanwhile,
# saving a NAPI round on every message.
#
# Checked, on n2 (2 vCPUs): 64-byte ping-pong goes up at once (`up_now`),
# and so does each 4 KiB message (merged by the slave, PSH at its end);
# bulk TCP's runs without PSH through the cell (`up_gro`); n2's TCP sees
# nothing out of order (TcpExtTCPOFOQueue) in bulk, in a stream whose
# short segments follow full ones in the same poll (n2 rx_gro=0), and in
# the same with every segment on the next link and each link's interrupt
# on its own CPU. With the kernel's gro_cells (each CPU's own): 112, 134
# and 418 out of order; with short ones up at once always (1 vCPU): 7 and
# 466.
#
# Each stream is judged only in a run where n2's window handed nothing up
# out of turn (no gap given up, no late packet): one such gap puts a
# segment out of order at TCP for each GRO flush until it fills, so no
# count of them bounds TCP's (a stalled vCPU under TCG makes gaps: 10 out
# of order for 6 window events). n2 waits long for
# gaps (fast_tout 10 s, maxbuf 511), yet one link still runs a window
# (512 numbers) ahead of the other now and then: each slave interrupts
# its own CPU, and one CPU falls a ring (256 frames) behind the other
# (unpaced bulk here: 0-11 jumps in a 2 s run, at 1512-byte frames; at
# 150 Mbit/s none in 6 runs). So bulk is paced at 200 Mbit/s, and a
# stream runs 2 s, up to 6 times, for one run without.
set -u
. "$(dirname "$0")/lib.sh"
LAB_SMP=2 lab_up 2 2
ri2n_up n1 n2 || fail "ri2n_up"
on n1 ping -c 3 -i 0.2 -W 2 -q 10.0.0.2 >/dev/null
# (0 from a driver without them.)
now() { local v; v=$(proc_counter "$1" up_now); echo "${v:-0}"; }
gro() { local v; v=$(proc_counter "$1" up_gro); echo "${v:-0}"; }
# What n2's window for n1 handed up out of turn: FAST_TOUT and loss
# releases, flushes, jumps, and late packets; turns RELS: their sum.
rel() { peer_counters n2 n1 timeout loss flushes jumps late; }
turns() { local s=0 kv; for kv in $1; do s=$((s + ${kv#*=})); done; echo $s; }

n0=$(now n2) g0=$(gro n2)
# (-A: the next ping leaves about when the last pong is in, even where a
# round trip takes more than 2 ms: 12 ms on average on the debug kernel,
# where -i 0.002 kept about six in flight, one CPU's often finding the
# cell claimed by the other's: 933 of 1003 at once; with -A 987, at most
# 4 in flight.)
on n1 ping -q -A -s 16 -c 1000 -w $((20 * LAB_TIME_SCALE)) 10.0.0.2 >"$LAB_DIR/pingpong.out"
n1=$(($(now n2) - n0)) g1=$(($(gro n2) - g0))
pretty INFO "64-byte ping-pong, n2: up at once $n1, through the cell $g1; $(grep -o '[0-9]* received' "$LAB_DIR/pingpong.out"), rtt min/avg/max $(awk -F' = ' '/^rtt/ {print $2}' "$LAB_DIR/pingpong.out")"
check "64-byte ping-pong: n2 hands nearly all up at once ($n1 of $((n1 + g1)), >= 95 %)" \
	test "$n1" -ge 950 -a $((n1 * 100)) -ge $(((n1 + g1) * 95))

# 4 KiB messages: three segments, which n2's slave merges into one packet
# whose header has the last one's PSH: it ends any run GRO could merge,
# so it too skips the idle cell.
on n2 sh -c 'ri2n-pingpong server >/dev/null 2>&1 &'
sleep 0.3
n0=$(now n2) g0=$(gro n2)
trips=$(on n1 ri2n-pingpong client 10.0.0.2 --sizes 4096:4096 --time 2 | awk '!/^#/ && NF {print $2; exit}')
n1=$(($(now n2) - n0)) g1=$(($(gro n2) - g0))
on n2 sh -c 'kill $(pidof ri2n-pingpong)' 2>/dev/null
pretty INFO "4 KiB ping-pong, ${trips:-0} round trips: n2 up at once $n1, through the cell $g1"
check "4 KiB ping-pong: n2 hands a packet a message up at once ($n1 at once for ${trips:-0} messages, >= 90 %)" \
	test "${trips:-0}" -gt $((100 / LAB_TIME_SCALE)) -a $((n1 * 10)) -ge $((${trips:-0} * 9))

# in_order NAME CMD...: runs CMD on n1 (a TCP stream to n2) until n2's
# window hands nothing up out of turn in a run, at most 6 times; sets n1
# and g1 (n2's packets up at once and through the cell), t1 (out of turn
# at n2's window), ofo (out of order at n2's TCP) and try (the runs).
in_order() {
	local name=$1 n0 g0 r0 r1
	shift
	for try in 1 2 3 4 5 6; do
		on n2 nstat -n
		n0=$(now n2) g0=$(gro n2) r0=$(rel)
		on n1 "$@" >"$LAB_DIR/stream.out"
		n1=$(($(now n2) - n0)) g1=$(($(gro n2) - g0)) r1=$(rel)
		t1=$(($(turns "$r1") - $(turns "$r0")))
		ofo=$(on n2 nstat -z TcpExtTCPOFOQueue | awk '$1 == "TcpExtTCPOFOQueue" {print $2}')
		pretty INFO "$name, run $try: n2 up at once $n1, through the cell $g1, out of order ${ofo:-0}; n2's window: $r0-> $r1"
		[ "$t1" -eq 0 ] && break
	done
}
# ordered: the check on the last in_order (whose stream must have moved:
# 264-341 packets in a 2 s run on the debug kernel, thousands here).
ordered() {
	check "  ... none out of order at n2's TCP (${ofo:-0}) in a run where n2's window handed up nothing out of turn ($t1, run $try of 6) and $((n1 + g1)) packets went up (>= 100)" \
		test "$t1" -eq 0 -a "${ofo:-0}" -eq 0 -a $((n1 + g1)) -ge 100
}
# n2 waits long for a gap, so that a stalled vCPU seldom makes one.
gaps_waited() { on n2 sh -c 'echo 10000 > /sys/class/net/ri2n0/ri2n/fast_tout && echo 511 > /sys/class/net/ri2n0/ri2n/maxbuf'; }

gaps_waited || fail "n2: fast_tout 10000, maxbuf 511"
on n2 iperf3 -s -D
sleep 0.3
in_order "bulk TCP n1 -> n2 (200 Mbit/s)" iperf3 -c 10.0.0.2 -t 2 -b 200M
# (Merged runs that end with PSH go at once when the cell is idle: most
# of bulk here, as iperf3's writes end with PSH every 128 KiB.)
check "bulk TCP: runs not ended through the cell ($g1 through it, $n1 at once)" test "$g1" -gt 0
ordered

# short_after_full NAME: writes of a full segment and 60 bytes (iperf3 -N
# -l 1500) n1 -> n2.
short_after_full() { # NAME [IPERF3_ARGS...]
	local name=$1
	shift
	in_order "$name" iperf3 -c 10.0.0.2 -t 2 -N -l 1500 "$@"
}

# n2 again with rx_gro=0: n1's slave cuts each GSO packet into frames
# that n2 now takes one by one, so a short tail (iperf3 -N -l 1500: writes
# of a full segment and 60 bytes) comes right after full segments that its
# window released into the cell in the same poll.
on n2 rmmod ri2n || fail "rmmod on n2"
RI2N_PARAMS="rx_gro=0" ri2n_up n2 || fail "ri2n_up n2 rx_gro=0"
gaps_waited || fail "n2: fast_tout 10000, maxbuf 511"
on n2 iperf3 -s -D
on n1 ping -c 3 -i 0.2 -W 2 -q 10.0.0.2 >/dev/null
short_after_full "full and short segments in turn (iperf3 -N -l 1500, n2 rx_gro=0, 100 Mbit/s)" -b 100M
check "full and short segments in turn: both ways up used ($n1 at once, $g1 through the cell)" test "$n1" -gt 0 -a "$g1" -gt 0
ordered

# Across CPUs: n2's eth0 interrupts on CPU 0, eth1's on CPU 1, and n1
# sends every segment to the next link (tx_gso=0 stripe_segs=1), so a
# full segment goes into one CPU's cell and the short one after it
# arrives on the other CPU. Both go through the peer's one cell (or the
# short one up at once only if that cell is idle): the full one may still
# be queued.
for n in n1 n2; do on $n rmmod ri2n || fail "rmmod on $n"; done
RI2N_PARAMS="tx_gso=0 stripe_segs=1" ri2n_up n1 || fail "ri2n_up n1 tx_gso=0 stripe_segs=1"
RI2N_PARAMS="rx_gro=0" ri2n_up n2 || fail "ri2n_up n2 rx_gro=0"
gaps_waited || fail "n2: fast_tout 10000, maxbuf 511"
for l in 0 1; do
	irq=$(on n2 sh -c "awk -v d=\$(basename \$(readlink /sys/class/net/eth$l/device))-input '\$NF ~ d {sub(\":\", \"\", \$1); print \$1}' /proc/interrupts")
	on n2 sh -c "echo $((l + 1)) > /proc/irq/$irq/smp_affinity" || fail "eth$l's interrupt (irq ${irq:-none}) to CPU $l"
done
on n2 iperf3 -s -D
on n1 ping -c 3 -i 0.2 -W 2 -q 10.0.0.2 >/dev/null
cpu_rx() { on n2 awk '$1 == "NET_RX:" {print $2 "/" $3}' /proc/softirqs; }
c0=$(cpu_rx)
# Paced, as bulk above and the part before: unpaced (some 32,000 frames a
# second), one of n2's CPUs often fell a ring (256 frames) behind the
# other, and the window jumped in 4 to 6 of 6 runs, leaving no run to
# judge; so did the part before once (6 of 6).
short_after_full "across CPUs (100 Mbit/s)" -b 100M
c1=$(cpu_rx)
check "across CPUs: both of n2's CPUs took NET_RX softirqs ($c0 -> $c1)" test "${c1%/*}" -gt "${c0%/*}" -a "${c1#*/}" -gt "${c0#*/}"
ordered
finish
