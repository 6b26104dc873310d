#!/usr/bin/env bash
# A slave loses carrier in the middle of a transfer and gets it back: the
# transfer completes intact; the link leaves and rejoins service.
#
# Links shaped to 100 Mbit/s into each guest (host-side tbf), so the
# transfer lasts long enough to cut a link in its middle.
set -u
# Times the driver's events from host actions: the guests' clocks.
export LAB_CLOCKS=1
. "$(dirname "$0")/lib.sh"
ri2n_pair 100mbit

transfer_start n1 n2 "$(mib 100)"
sleep 1.5
# The receiver's own carrier: its side stops using eth1 at once; the sender
# learns from what stops arriving on eth1.
measure n1 n2 eth1 'failed|peer-failed' 20 link_carrier n2 1 down
det=$WATCHED
check "n2 sees no carrier on eth1" test "$(ep_state n2 n1 eth1)" = no-carrier
pretty INFO "carrier loss on n2 eth1: sender n1 stopped using it after $det ms"
check "sender detected the dead link within 1 s ($det ms)" lt "$det" 1000
sleep 1
measure n1 n2 eth1 up 20 link_carrier n2 1 up
rec=$WATCHED
pretty INFO "carrier back on n2 eth1: n1 uses it again after $rec ms"
check "link back in use within 1 s of carrier ($rec ms)" lt "$rec" 1000
check "$(mib 100) MiB transfer across the cut completed, checksums equal" transfer_wait 120

# Carrier loss on the sender's own slave takes effect at once.
transfer_start n1 n2 "$(mib 100)" 5002
sleep 1.5
link_carrier n1 0 down
check "n1 eth0 shows no-carrier for peer n2" test "$(ep_state n1 n2 eth0)" = no-carrier
sleep 1
link_carrier n1 0 up
check "transfer across a sender-side cut completed, checksums equal" transfer_wait 120
check "n1 eth0 back up" test "$(ep_state n1 n2 eth0)" = up
on n1 dmesg | grep -E 'ri2n0: (link|peer)' >&2
finish
