#!/usr/bin/env bash
# The sweep timer runs at its peers' deadlines, not every FAST_TOUT / 4
#. It ran 200 times a second whether or not anything was due:
# under TCG each run is a TIMER softirq, and ri2n's share of a 64-byte
# round trip's cost (0.34-0.40 TIMER softirqs per round trip against 0.06
# over one link, Documentation/ri2n-design.rst, "Where the time goes").
#
# Counted here: TIMER softirqs per second on each node with ri2n0 down
# (the guest's own timers), up and idle, and during 64-byte ping-pong,
# every 2 ms for 4 s. What ri2n0 adds is its heartbeat timer and the
# sweep: at most 100 a second in all in ping-pong, where the periodic
# sweep alone took 200. The sweep's own runs (`sweeps`): at most 50 a
# second (tools/ri2n-core/tests/sweep.rs: some 20 in a second of
# ping-pong, and one at least every 63 ms). Idle, with one peer, at most
# 30 a second: the heartbeat timer wakes for the phases that have a peer
# (core/phases.rs), once per HBSPAN here; it woke every HBSPAN / 64, 32
# times a second, and idle ri2n0 added 43-52. Last, a shorter hbspan set
# at run time wakes the heartbeat timer that a longer one put to sleep.
set -u
. "$(dirname "$0")/lib.sh"
lab_up 2 2
ri2n_up n1 n2 || fail "ri2n_up"
on n1 ping -c 3 -i 0.2 -W 2 -q 10.0.0.2 >/dev/null

# rate NODE SECONDS: TIMER softirqs per second on NODE over SECONDS.
rate() {
	on "$1" sh -c "t() { awk '\$1 == \"TIMER:\" {s = 0; for (i = 2; i <= NF; i++) s += \$i; print s}' /proc/softirqs; }
		a=\$(t); sleep $2; b=\$(t); echo \$(((b - a) / $2))"
}
sweeps() { proc_counter "$1" sweeps; }

for n in n1 n2; do on $n ip link set ri2n0 down; done
sleep 1
rate n1 4 >"$LAB_DIR/rate1" &
r1=$!
down2=$(rate n2 4)
wait $r1
down1=$(cat "$LAB_DIR/rate1")
for n in n1 n2; do on $n ip link set ri2n0 up; done
on n1 ping -c 3 -i 0.2 -W 2 -q 10.0.0.2 >/dev/null
sleep 1
s1=$(sweeps n1) s2=$(sweeps n2)
rate n1 4 >"$LAB_DIR/rate1" &
r1=$!
idle2=$(rate n2 4)
wait $r1
idle1=$(cat "$LAB_DIR/rate1")
e1=$(sweeps n1) e2=$(sweeps n2)
pretty INFO "TIMER softirqs/s, ri2n0 down: n1 $down1, n2 $down2; up and idle: n1 $idle1, n2 $idle2; sweeps in 4 s idle: n1 $((e1 - s1)), n2 $((e2 - s2))"

on n1 ping -q -i 0.002 -s 16 -w 6 10.0.0.2 >"$LAB_DIR/pingpong.out" &
pid=$!
sleep 1
s1=$(sweeps n1) s2=$(sweeps n2)
rate n1 4 >"$LAB_DIR/rate1" &
r1=$!
rate n2 4 >"$LAB_DIR/rate2"
wait $r1
e1=$(sweeps n1) e2=$(sweeps n2)
wait $pid
pp1=$(cat "$LAB_DIR/rate1") pp2=$(cat "$LAB_DIR/rate2")
rtts=$(awk '/packets transmitted/ {print $4}' "$LAB_DIR/pingpong.out")
pretty INFO "ping-pong: $(grep -E 'transmitted|rtt' "$LAB_DIR/pingpong.out" | tr '\n' ' ')"
pretty INFO "TIMER softirqs/s during ping-pong: n1 $pp1, n2 $pp2 (about $((rtts / 6)) round trips/s); sweeps in 4 s: n1 $((e1 - s1)), n2 $((e2 - s2))"

check "ping-pong answered ($rtts round trips)" test "${rtts:-0}" -gt 300
for n in 1 2; do
	v=down$n down=${!v} v=idle$n idle=${!v} v=pp$n pp=${!v}
	# A count the guest did not give fails, never passes.
	check "n$n: TIMER softirqs counted (down '$down', idle '$idle', ping-pong '$pp')" \
		test -n "$down" -a -n "$idle" -a -n "$pp" -a "${down:-0}" -gt 0 || continue
	check "n$n: ri2n0 up and idle adds $((idle - down)) TIMER softirqs/s (<= 30)" test $((idle - down)) -le 30
	check "n$n: ri2n0 in 64-byte ping-pong adds $((pp - down)) TIMER softirqs/s (<= 100)" test $((pp - down)) -le 100
done
runs1=$((e1 - s1)) runs2=$((e2 - s2))
check "the sweep ran at most 50 times a second in ping-pong (n1 $((runs1 / 4)), n2 $((runs2 / 4)))" \
	test "$runs1" -gt 0 -a "$runs1" -le 200 -a "$runs2" -gt 0 -a "$runs2" -le 200

# The heartbeat timer sleeps up to HBSPAN: after hbspan=60000 it is armed
# for up to a minute, and a shorter HBSPAN set at run time must wake it,
# or the peers hear nothing for that long (and may age us out: 8 x the
# new HBSPAN). Idle, n1 sends heartbeats only from its timer: 2 links,
# one each per 2 s.
P=/sys/class/net/ri2n0/ri2n
on n1 sh -c "echo 60000 > $P/hbspan"
sleep 3
h0=$(proc_counter n1 hb_sent)
on n1 sh -c "echo 2000 > $P/hbspan"
t0=$(host_ms)
# Two ticks at least (one within 2 s of the change, the next 2 s on), on
# two links; 0 without the wake.
beats() { [ $(($(proc_counter n1 hb_sent) - h0)) -ge 4 ]; }
await 6 "four heartbeats" beats
h1=$(proc_counter n1 hb_sent) t1=$(host_ms)
check "n1 sends heartbeats within HBSPAN of hbspan 60000 -> 2000 at run time ($((h1 - h0)) in $(((t1 - t0) / 1000)) s of 6, >= 4)" \
	test $((h1 - h0)) -ge 4
finish
