#!/usr/bin/env bash
# An idle, healthy pair sends its periodic heartbeats (a peer's on every
# link at once, each HBSPAN) and next to nothing beside: no probe rounds.
# ri2n-sim sent each link's heartbeat on a phase of its own, so one link's
# left the other silent for SLOW_TOUT, and that began a probe round: about
# one a second per idle peer, 4.1 extra frames a second a side, which it
# put at ~16,800 a second across 4,096 idle peers. The driver's heartbeat
# tick sends a peer's together (State::hb_tick); this checks that it does,
# by what each node sends.
set -u
. "$(dirname "$0")/lib.sh"
lab_up 2 2
ri2n_up n1 n2 || fail "ri2n_up"
on n1 ping -c 3 -i 0.2 -W 2 -q 10.0.0.2 >/dev/null
# Past the ping's data and the new peers' first probes.
sleep 3
hbspan=$(on n1 ri2n get ri2n0 param hbspan)
h1=$(on n1 ri2n get ri2n0 counter hb_sent) h2=$(on n2 ri2n get ri2n0 counter hb_sent)
secs=8
sleep $secs
d1=$(($(on n1 ri2n get ri2n0 counter hb_sent) - h1)) d2=$(($(on n2 ri2n get ri2n0 counter hb_sent) - h2))
# Two links, one heartbeat each per HBSPAN; a probe round would add two
# probes and two answers a side.
periodic=$((2 * secs * 1000 / hbspan))
most=$((periodic * 3 / 2 + 4))
pretty INFO "idle ${secs} s: heartbeats sent n1 $d1, n2 $d2 (periodic: $periodic each)"
check "idle ${secs} s: n1 sent no more than its periodic heartbeats and a few ($d1 <= $most)" test "$d1" -le "$most"
check "  ... n2 too ($d2 <= $most)" test "$d2" -le "$most"
finish
