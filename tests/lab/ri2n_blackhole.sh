#!/usr/bin/env bash
# A link silently drops everything while both guests keep carrier (what
# bonding's miimon cannot see): under load the counters find it, idle the
# weighted heartbeats do; a heartbeat brings it back.
set -u
. "$(dirname "$0")/lib.sh"
ri2n_pair 100mbit

# Under load.
transfer_start n1 n2 100
sleep 1.5
measure n1 n2 eth1 'failed|peer-failed' 20 link_blackhole n2 1 on
det=$WATCHED
pretty INFO "blackhole under load: sender stopped using the link after $det ms"
check "detected under load within 1 s ($det ms)" lt "$det" 1000
check "carrier still up in n2" test "$(on n2 cat /sys/class/net/eth1/carrier)" = 1
sleep 1
measure n1 n2 eth1 up 20 link_blackhole n2 1 off
rec=$WATCHED
pretty INFO "blackhole lifted: link in use again after $rec ms (HBSPAN 2000 ms)"
check "recovered within HBSPAN + 1 s ($rec ms)" lt "$rec" 3000
check "100 MiB transfer across the blackhole completed, checksums equal" transfer_wait 120

# Idle: only heartbeats. HBWEIGHT 3 each, FT_HTHRESH 10: the 4th heartbeat
# on the good link triggers a judgement (8 s at HBSPAN 2 s). The first one
# after the cut may spare the dead link, whose counter still holds weight
# from before the cut (> FT_LTHRESH); the next fails it: at most 16 s.
sleep 3
measure n1 n2 eth1 'failed|peer-failed' 30 link_blackhole n2 1 on
idle=$WATCHED
pretty INFO "blackhole while idle: detected by heartbeats after $idle ms"
check "idle blackhole detected by heartbeats within 2 judgements, 16 s + 1 s ($idle ms)" lt "$idle" 17000
check "ping works meanwhile (link 0)" on n1 ping -c 3 -i 0.2 -W 2 -q 10.0.0.2
measure n1 n2 eth1 up 20 link_blackhole n2 1 off
pretty INFO "idle blackhole lifted: recovered after $WATCHED ms"
check "idle link recovered within HBSPAN + 1 s ($WATCHED ms)" lt "$WATCHED" 3000
check "fail and recovery logged with peer and slave" out_has n1 "peer $(ri2n_mac n2) link eth1: (failed|recovered)" dmesg
finish
