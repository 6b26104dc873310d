#!/usr/bin/env bash
# ri2n_smp's keyed round, repeated: n1 (2 vCPUs, as every node) streams UDP
# to n2 from CPU 0 and to n3 from CPU 1 while the key rotates, ROUNDS times
# SECS seconds. After each round: packets each receiver's loss rule gave up
# and then saw arrive (late_loss), packets late after FAST_TOUT (late), and
# endpoint failures on every side; at the end, each node's failure and
# recovery log lines. A late loss (a false failure on the loaded sender,
# then the receiver giving up what was still on the link) that one run of
# the suite in 15 shows, it shows in its first two rounds.
#
#   scripts/lab run scripts/smp-stress.sh      ROUNDS=12 SECS=6 NOKEY=1 NOROT=1
set -u
. "$RI2N_ROOT/tests/lab/lib.sh"
LAB_SMP=2 lab_up 3 2
ri2n_up n1 n2 n3 || fail "ri2n_up"
ROUNDS=${ROUNDS:-12}
SECS=${SECS:-6}
keys() { local n; for n in n1 n2 n3; do on $n sh -c "echo $2 > /sys/class/net/ri2n0/ri2n/$1"; done; }
k1=000102030405060708090a0b0c0d0e0f k2=f0e0d0c0b0a090807060504030201000
[ "${NOKEY:-0}" = 1 ] || keys key $k1
sleep 0.5
for n in n2 n3; do on n1 ping -c 2 -i 0.2 -W 2 -q 10.0.0.${n#n} >/dev/null; done
cur=$k1 nxt=$k2
for ((r = 1; r <= ROUNDS; r++)); do
	for n in n2 n3; do on $n iperf3 -s -D -1; done
	sleep 0.3
	rot=
	if [ "${NOKEY:-0}" != 1 ] && [ "${NOROT:-0}" != 1 ]; then
		(sleep 1; keys key_accept $nxt; keys key $nxt; keys key_accept none) &
		rot=$!
	fi
	on n1 sh -c "iperf3 -u -c 10.0.0.2 -b 20M -l 1400 -t $SECS -A 0 >/dev/null &
		iperf3 -u -c 10.0.0.3 -b 20M -l 1400 -t $SECS -A 1 >/dev/null; wait"
	[ -z "$rot" ] || { wait $rot; t=$cur cur=$nxt nxt=$t; }
	line="round $r (totals):"
	for n in n2 n3; do
		line+=" $n late_loss=$(peer_counter $n n1 late_loss) late=$(peer_counter $n n1 late) fails=$(peer_counter $n n1 fails);"
	done
	pretty INFO "$line n1 fails toward n2 $(peer_counter n1 n2 fails), toward n3 $(peer_counter n1 n3 fails)"
done
for i in 1 2 3; do
	pretty INFO "n$i's failures and recoveries:"
	grep -E "ri2n0: (peer|link)" "$LAB_DIR/n$i.console" | grep -v enslaved | tail -20 >&2
done
check "no packet given up then late on n2 or n3 ($(peer_counter n2 n1 late_loss), $(peer_counter n3 n1 late_loss))" \
	test "$(peer_counter n2 n1 late_loss)" = 0 -a "$(peer_counter n3 n1 late_loss)" = 0
finish
