#!/usr/bin/env bash
# rmmod while traffic flows at full speed, on the receiver and on the
# sender, three times, and once on a receiver whose slaves' GRO holds
# packets for seconds; load -> unload -> load works; no splat (and, on the
# debug kernel, no kmemleak report).
set -u
. "$(dirname "$0")/lib.sh"
lab_up 2 2
ri2n_up n1 n2 || fail "ri2n_up"
on n2 iperf3 -s -D
kmemleak() { on "$1" test -e /sys/kernel/debug/kmemleak; }
# On a lab that earlier tests shared, what they left is theirs: scanned
# and set aside before this test's rounds.
for n in n1 n2; do
	! kmemleak $n || on $n sh -c 'echo scan > /sys/kernel/debug/kmemleak; echo clear > /sys/kernel/debug/kmemleak'
done
for round in 1 2 3; do
	on n1 ping -c 2 -q -W 2 10.0.0.2 >/dev/null
	# Bounded: once one side's ri2n0 is gone the client cannot finish.
	on n1 timeout 8 iperf3 -c 10.0.0.2 -t 4 --connect-timeout 2000 >/dev/null 2>&1 &
	ip=$!
	sleep 2
	victim=$([ $round = 2 ] && echo n1 || echo n2)
	check "round $round: rmmod on $victim under load" on $victim rmmod ri2n
	wait $ip
	check "round $round: ri2n0 gone on $victim" not on $victim ip link show ri2n0
	on $victim modprobe ri2n slaves=eth0,eth1 && on $victim ip link set ri2n0 up &&
		on $victim ip addr add 10.0.0.${victim#n}/24 dev ri2n0
	on n2 sh -c 'kill $(pidof iperf3)'
	on n2 iperf3 -s -D
	# The reloaded ri2n0 has a new random MAC: the other node's ARP entry
	# is stale until it is flushed (or the address is set by hand).
	other=$([ $victim = n1 ] && echo n2 || echo n1)
	on $other ip neigh flush dev ri2n0
	check "round $round: reloaded, ping works" on n1 ping -c 3 -i 0.2 -W 2 -q 10.0.0.2
done
# A former port's GRO may still hold a packet it merged as ours, for as
# long as its flush timeout keeps it once frames stop: the offload must
# outlive that packet. Without it, gro_complete finds no callback and
# warns, and the lab's guests panic on a warning. The frames stop at the
# host (both links blackholed) mid-transfer, so the last poll likely
# held one; the rmmod takes well under the timeout.
knobs() { # NODE TIMEOUT_NS: both slaves' GRO flush timeout
	on "$1" sh -c "for e in eth0 eth1; do echo $2 >/sys/class/net/\$e/gro_flush_timeout; done"
}
knobs n2 3000000000
on n1 timeout 8 iperf3 -c 10.0.0.2 -t 4 --connect-timeout 2000 >/dev/null 2>&1 &
ip=$!
sleep 2
link_blackhole n2 0 on
link_blackhole n2 1 on
merged=$(on n2 cat /proc/net/ri2n/ri2n0 | grep -o 'rx_merged [0-9]*' | cut -d' ' -f2)
check "3 s GRO flush timeout: n2's slaves merged frames (${merged:-none})" test "${merged:-0}" -gt 0
check "3 s GRO flush timeout: rmmod on n2, its links silent" on n2 rmmod ri2n
# The held packet goes up when the timer fires, 3 s after the poll that
# held it.
sleep 3
check "3 s GRO flush timeout: n2 up after its held packets went" on n2 true
link_blackhole n2 0 off
link_blackhole n2 1 off
wait $ip
knobs n2 0
on n2 modprobe ri2n slaves=eth0,eth1
for n in n1 n2; do
	on $n rmmod ri2n
	if kmemleak $n; then
		on $n sh -c 'echo scan > /sys/kernel/debug/kmemleak; sleep 6; echo scan > /sys/kernel/debug/kmemleak'
		leaks=$(on $n cat /sys/kernel/debug/kmemleak | grep -c 'unreferenced object')
		check "$n: kmemleak reports nothing ($leaks)" test "$leaks" = 0
	fi
done
finish
