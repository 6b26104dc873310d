#!/usr/bin/env bash
# The `ri2n` command in the guests, every subcommand, across a failover:
# show, show --json (valid JSON, schema 1), get, watch (refreshes, ends
# on SIGTERM and when the device goes, writes no terminal escapes into a
# file), events (sees the fail and the recovery soon after the driver's
# own log line), and its bad input: no device (exit 2), a device that goes
# away.
set -u
. "$(dirname "$0")/lib.sh"
ri2n_pair 100mbit
mac2=$(ri2n_mac n2)

check "show names device, slaves, peer and endpoints" out_has n1 "endpoint eth1: " ri2n show
on n1 ri2n show ri2n0 >&2
on n1 ri2n show --json >"$LAB_DIR/show.json"
check "show --json is valid JSON, schema 1, with the peer's endpoints" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == 1, d["schema"]
dev = d["devices"][0]
assert dev["device"]["name"] == "ri2n0"
assert [s["name"] for s in dev["slaves"]] == ["eth0", "eth1"]
p = [p for p in dev["peers"] if p["mac"] == sys.argv[2]][0]
assert [e["state"] for e in p["endpoints"]] == ["up", "up"], p
assert isinstance(dev["counters"]["tx_packets"], int)
' "$LAB_DIR/show.json" "$mac2"
check "get reads one value" test "$(on n1 ri2n get ri2n0 endpoint "$mac2" eth0 state)" = up
check "get of a missing value exits 1" not on n1 ri2n get ri2n0 counter no_such_counter
check "show says whether frames are sealed" out_has n1 "keys: off" ri2n show ri2n0
check "get reads the keys' state" test "$(on n1 ri2n get ri2n0 auth state)" = off

# Across a failover: events and watch run while n2's eth1 loses carrier
# under a transfer and gets it back.
on n1 sh -c "ri2n events ri2n0 --timeout 60 >/tmp/events 2>&1 &"
on n1 sh -c "ri2n watch ri2n0 --interval 200 >/tmp/watch 2>&1 & echo \$! >/tmp/watch.pid"
transfer_start n1 n2 "$(mib 40)"
sleep 1.5
link_carrier n2 1 down
sleep 2
link_carrier n2 1 up
check "transfer across the failover intact" transfer_wait 120
sleep 1
on n1 sh -c 'kill $(cat /tmp/watch.pid)'
watch_ended() { on n1 sh -c '! kill -0 "$(cat /tmp/watch.pid)" 2>/dev/null'; }
await 10 "watch to end" watch_ended
on n1 cat /tmp/events >&2
check "events: eth1 fails" out_has n1 "ri2n0 peer $mac2 eth1 up -> (failed|peer-failed)" cat /tmp/events
check "events: eth1 recovers" out_has n1 "ri2n0 peer $mac2 eth1 (failed|peer-failed) -> up" cat /tmp/events
check "watch drew frames with rates" out_has n1 "now tx [0-9]+/s" cat /tmp/watch
check "watch ended on SIGTERM" watch_ended
check "watch wrote no terminal escapes into a file" not on n1 grep -q "$(printf '\033')" /tmp/watch

# Time from the log line: the kernel log's time (monotonic), mapped
# to the wall clock by one reading of both (the state's clock record).
read -r wall mono < <(on n1 ri2n show ri2n0 --format records | awk '$1 == "clock" {split($2, a, "="); split($3, b, "="); print a[2], b[2]}')
lag() { # EVENT_REGEX LOG_REGEX: ms from the log line to events seeing it
	local seen logged
	seen=$(on n1 cat /tmp/events | grep -E "$1" | head -1 | sed -n 's/.* seen=\([0-9]*\)$/\1/p')
	logged=$(on n1 dmesg | grep -E "$2" | head -1 | sed -n 's/^\[ *\([0-9.]*\)\].*/\1/p')
	[ -n "$seen" ] && [ -n "$logged" ] || { echo never; return; }
	awk -v s="$seen" -v l="$logged" -v w="$wall" -v m="$mono" 'BEGIN {printf "%d", s - (w - m + l * 1000)}'
}
fail_lag=$(lag "eth1 up -> (failed|peer-failed)" "peer $mac2 link eth1: (failed|peer receives nothing)")
back_lag=$(lag "eth1 (failed|peer-failed) -> up" "peer $mac2 link eth1: (recovered|peer receives again)")
pretty INFO "ri2n events saw the fail $fail_lag ms and the recovery $back_lag ms after the driver's log line"
# A bound on following, not a latency figure (the INFO line has that;
# ri2n_netlink.sh bounds the kernel-to-listener lag).
# On the guest kernel only: on the debug kernel the mapping above put the
# lag at 34-36 s, which no event's own time shows (ri2n_netlink times
# events from the kernel's transition, on one clock).
if [ "${LAB_VARIANT:-guest}" = guest ]; then
	check "events saw the fail within 1 s of the log line ($fail_lag ms)" lt "$fail_lag" 1000
	check "events saw the recovery within 1 s of the log line ($back_lag ms)" lt "$back_lag" 1000
fi

# Bad input.
status() { "$@" >/dev/null 2>&1; echo $?; }
check "no such device: exit 2" test "$(status on n1 ri2n show nosuch)" = 2
check "  ... with a clear message" out_has n1 "no ri2n device nosuch" sh -c 'ri2n show nosuch 2>&1'
check "saved records read back as the kernel's" on n1 sh -c '
	mkdir -p /tmp/s; ri2n show ri2n0 --format records >/tmp/s/ri2n0
	ri2n --dir /tmp/s show ri2n0 --format records | cmp - /tmp/s/ri2n0'
check "a newer format: the tool says which versions it speaks" out_has n1 "newer than this tool, which speaks version 1" sh -c '
	mkdir -p /tmp/p; ri2n show ri2n0 --format records | sed "s/version=1/version=7/" >/tmp/p/ri2n0; ri2n --dir /tmp/p show 2>&1'
check "one unreadable device: the others shown, it named, exit 2" on n1 sh -c '
	mkdir -p /tmp/q; ri2n show ri2n0 --format records >/tmp/q/ri2n0; head -3 /tmp/q/ri2n0 >/tmp/q/ri2n9
	ri2n --dir /tmp/q show >/tmp/q.out 2>/tmp/q.err; rc=$?
	[ $rc = 2 ] && grep -q "endpoint eth1: " /tmp/q.out && grep -q "ri2n9: state cut short" /tmp/q.err'
on n1 sh -c "ri2n events ri2n0 >/tmp/gone 2>&1 & ri2n watch ri2n0 >/tmp/gone-watch 2>&1 &"
# Both past finding the device, reading its state in their loops: events
# says so, watch has drawn.
following() { out_has n1 "following ri2n0" cat /tmp/gone && on n1 test -s /tmp/gone-watch; }
check "events and watch follow the device" await 10 "events and watch to follow ri2n0" following
on n1 rmmod ri2n
check "events: the device going away is said" await 10 "events to say so" out_has n1 "ri2n0 went away" cat /tmp/gone ||
	on n1 tail -3 /tmp/gone >&2
check "watch: the device going away is said" await 10 "watch to say so" out_has n1 "ri2n0 went away" cat /tmp/gone-watch ||
	on n1 tail -c 300 /tmp/gone-watch >&2
# The family's alias loads the module again, as `wg` does WireGuard's: no
# device then.
check "no ri2n device: exit 2" test "$(status on n1 ri2n show)" = 2
check "  ... with a clear message" out_has n1 "no ri2n device" sh -c 'ri2n show 2>&1'
finish
