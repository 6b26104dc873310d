#!/usr/bin/env bash
# A failure in one direction only: n2's frames on link 1 are lost, n1's
# arrive. n1's detector sees it; its heartbeats tell n2, which stops sending
# on link 1 as well. A transfer n2 -> n1 completes.
set -u
. "$(dirname "$0")/lib.sh"
ri2n_pair 100mbit

transfer_start n2 n1 60
sleep 1
on n2 modprobe sch_netem
measure n2 n1 eth1 peer-failed 20 on n2 tc qdisc replace dev eth1 root netem loss 100%
pretty INFO "one-way loss n2 -> n1 on eth1: n2 stopped sending on it after $WATCHED ms"
check "n2 stopped sending on eth1 within 1 s ($WATCHED ms)" lt "$WATCHED" 1000
check "n1 failed (n2, eth1) by its own detector" test "$(ep_state n1 n2 eth1)" = failed
check "transfer n2 -> n1 completed, checksums equal" transfer_wait 120
measure n2 n1 eth1 up 20 on n2 tc qdisc del dev eth1 root
check "after the loss ends, n2 uses eth1 again within HBSPAN / 8 + 750 ms ($WATCHED ms)" lt "$WATCHED" 1000
finish
