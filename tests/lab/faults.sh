#!/usr/bin/env bash
# Every fault primitive does what it says, seen from inside the guests.
set -u
. "$(dirname "$0")/lib.sh"
lab_up 2 2
on n1 ip addr add 10.1.0.1/24 dev eth0
on n2 ip addr add 10.1.0.2/24 dev eth0
on n1 ip addr add 10.1.1.1/24 dev eth1
on n2 ip addr add 10.1.1.2/24 dev eth1

ping_ok() { on n1 ping -c 3 -i 0.2 -W 1 -q "$1"; }
ping_dead() { not on n1 ping -c 3 -i 0.2 -W 1 -q "$1"; }
both_links_ok() { ping_ok 10.1.0.2 && ping_ok 10.1.1.2; }
carrier() { on "$1" cat /sys/class/net/"$2"/carrier; }
loss_pct() { on n1 ping -c "$2" -i 0.1 -W 1 -q "$1" | sed -n 's/.* \([0-9.]*\)% packet loss.*/\1/p'; }

check "baseline: both links work" both_links_ok

# Carrier: the guest sees it go and come back.
link_carrier n2 0 down
sleep 0.5
check "carrier down: n2 eth0 carrier is 0" test "$(carrier n2 eth0)" = 0
check "carrier down: ip link shows NO-CARRIER" out_has n2 NO-CARRIER ip link show eth0
check "carrier down: ping over link 0 fails" ping_dead 10.1.0.2
check "carrier down: link 1 unaffected" ping_ok 10.1.1.2
link_carrier n2 0 up
sleep 0.5
check "carrier up: n2 eth0 carrier is 1" test "$(carrier n2 eth0)" = 1
check "carrier up: ping over link 0 works again" ping_ok 10.1.0.2

# Blackhole: 100% loss both ways, carrier stays up in the guest.
link_blackhole n2 0 on
check "blackhole: exactly 100% loss" test "$(loss_pct 10.1.0.2 10)" = 100
check "blackhole: n2 eth0 still has carrier" test "$(carrier n2 eth0)" = 1
check "blackhole: n1 eth0 still has carrier" test "$(carrier n1 eth0)" = 1
check "blackhole: ip link shows LOWER_UP" out_has n2 LOWER_UP ip link show eth0
check "blackhole: link 1 unaffected" ping_ok 10.1.1.2
link_blackhole n2 0 off
check "blackhole off: ping over link 0 works again" ping_ok 10.1.0.2

# netem: delay both ways on one port; loss.
link_netem n2 1 delay 40ms
rtt=$(on n1 ping -c 4 -i 0.2 -q 10.1.1.2 | sed -n 's|.* = [0-9.]*/\([0-9.]*\)/.*|\1|p')
check "netem delay 40ms both ways on n2 eth1: avg rtt ${rtt} ms >= 80" awk -v r="$rtt" 'BEGIN { exit !(r >= 80) }'
rtt0=$(on n1 ping -c 4 -i 0.2 -q 10.1.0.2 | sed -n 's|.* = [0-9.]*/\([0-9.]*\)/.*|\1|p')
check "netem: link 0 not delayed (avg rtt ${rtt0} ms < 40)" awk -v r="$rtt0" 'BEGIN { exit !(r < 40) }'
link_netem n2 1 loss 100%
check "netem loss 100%: exactly 100% loss" test "$(loss_pct 10.1.1.2 10)" = 100
link_netem n2 1 off
check "netem off: link 1 works again" ping_ok 10.1.1.2

# Shaping on the host side: the rate into the guest is capped.
on n2 iperf3 -s -D -1 >/dev/null
sleep 0.5
# 10 Mbit/s: well below what the guests receive; on the debug kernel,
# which itself takes about 10 Mbit/s under TCG, a fifth of it. The first
# second (slow start, and a KASAN guest's first connection) is left out.
rate=$((10 / LAB_TIME_SCALE))
link_shape n2 0 ${rate}mbit 64kb
mbps=$(on n1 iperf3 -c 10.1.0.2 -t 3 -O 1 -J | awk -F'[:,]' '/"bits_per_second"/ {b=$2} END {printf "%.1f", b/1e6}')
check "shape ${rate}mbit into n2 eth0: iperf3 ${mbps} Mbit/s in [0.75, 1.05] x $rate" awk -v m="$mbps" -v r="$rate" 'BEGIN { exit !(m >= 0.75 * r && m <= 1.05 * r) }'
link_shape n2 0 off
finish
