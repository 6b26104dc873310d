#!/usr/bin/env bash
# A link silently drops everything while both guests keep carrier (what
# bonding's miimon cannot see): under load the counters or a probe round
# find it, idle the heartbeats and a probe round do; a heartbeat brings it
# back.
set -u
# Times the driver's events from host actions: the guests' clocks.
export LAB_CLOCKS=1
. "$(dirname "$0")/lib.sh"
ri2n_pair 100mbit
# ip monitor sees a port go bad and come back, with no ri2n tool: its
# lower state follows its endpoints (rtnetlink, as a bond's port's).
on n1 sh -c 'ip -o -d monitor link >/tmp/mon.txt 2>&1 &'

# Under load.
transfer_start n1 n2 "$(mib 100)"
sleep 1.5
measure n1 n2 eth1 'failed|peer-failed' 20 link_blackhole n2 1 on
det=$WATCHED
pretty INFO "blackhole under load: sender stopped using the link after $det ms"
check "detected under load within 1 s ($det ms)" lt "$det" 1000
check "carrier still up in n2" test "$(on n2 cat /sys/class/net/eth1/carrier)" = 1
sleep 1
measure n1 n2 eth1 up 20 link_blackhole n2 1 off
rec=$WATCHED
pretty INFO "blackhole lifted: link in use again after $rec ms (failed links probed every HBSPAN / 8 = 250 ms)"
check "recovered within HBSPAN / 8 + 750 ms ($rec ms)" lt "$rec" 1000
check "$(mib 100) MiB transfer across the blackhole completed, checksums equal" transfer_wait 120
check "ip monitor link: eth1 out of use toward the peer" out_has n1 "eth1: .* ri2n_slave link 1 carrier 1 peers_up 0 peers_down 1 " cat /tmp/mon.txt
check "  ... and in use again" out_has n1 "eth1: .* ri2n_slave link 1 carrier 1 peers_up 1 peers_down 0 " cat /tmp/mon.txt

# Idle: only heartbeats. The first one after the cut arrives on link 0
# alone; link 1 has been silent since the one before, so a probe round
# follows and fails it FAST_TOUT later: at most HBSPAN (2 s) + a little.
sleep 3
measure n1 n2 eth1 'failed|peer-failed' 30 link_blackhole n2 1 on
idle=$WATCHED
pretty INFO "blackhole while idle: detected by heartbeats and a probe round after $idle ms"
check "idle blackhole detected within HBSPAN + 1 s ($idle ms)" lt "$idle" 3000
check "ping works meanwhile (link 0)" on n1 ping -c 3 -i 0.2 -W 2 -q 10.0.0.2
measure n1 n2 eth1 up 20 link_blackhole n2 1 off
pretty INFO "idle blackhole lifted: recovered after $WATCHED ms"
check "idle link recovered within HBSPAN / 8 + 750 ms ($WATCHED ms)" lt "$WATCHED" 1000
check "fail and recovery logged with peer and slave" out_has n1 "peer $(ri2n_mac n2) link eth1: (failed|recovered)" dmesg
finish
