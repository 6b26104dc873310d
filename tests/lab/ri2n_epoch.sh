#!/usr/bin/env bash
# Keyed: recordings of a peer's last incarnation stay refused once the
# peer falls quiet, and once it is forgotten. n3, a host on both segments
# without the key, captures n2's sealed data to n1; n2 restarts (a new
# epoch, as after a reboot) and falls quiet; n3 replays what it captured,
# first while n1 still lists n2 (silent for over three HBSPANs), then once n1
# has aged n2 out (eight HBSPANs) and keeps only its record. n1 takes none
# of it, and the real n2 is taken back when it speaks again.
set -u
. "$(dirname "$0")/lib.sh"
lab_up 3 2
hb=$((1000 * LAB_TIME_SCALE))
key=00112233445566778899aabbccddeeff
keyed_up() {
	local n
	for n in "$@"; do
		RI2N_PARAMS="hbspan=$hb" ri2n_up "$n" &&
			on "$n" sh -c "echo $key > /sys/class/net/ri2n0/ri2n/key" || return 1
	done
}
keyed_up n1 n2 || fail "ri2n_up"
m2=$(ri2n_mac n2)
rx() { on n1 cat /sys/class/net/ri2n0/statistics/rx_packets; }
secs() { awk -v a="$1" -v s="$LAB_TIME_SCALE" 'BEGIN { printf "%.1f", a * s }'; }
check "the keyed pair talks" on n2 ping -c 3 -i 0.2 -W 2 -q 10.0.0.1

# n3 listens as an eavesdropper on a shared segment: the bridges flood
# unicast (no learning), n3's port is promiscuous.
eavesdrop on
on n3 ri2n-forge eth0 capture /tmp/data --src "$m2" --kind data --count 20 --timeout 5 >/dev/null &
capture=$!
sleep 0.5
on n2 ping -c 40 -i 0.05 -W 2 -q 10.0.0.1 >/dev/null
wait $capture
eavesdrop off
captured=$(on n3 sh -c 'wc -l </tmp/data')
check "n3 captured n2's sealed data ($captured frames)" test "${captured:-0}" -ge 10

# n2 restarts: a new epoch, which n1 takes from its first frames.
on n2 rmmod ri2n
keyed_up n2 || fail "ri2n_up n2 again"
check "n2 talks again after its restart" on n2 ping -c 3 -i 0.2 -W 2 -q 10.0.0.1
e2=$(on n2 ri2n get ri2n0 device epoch)
check "n1 holds n2's new epoch" test "$(on n1 ri2n get ri2n0 peer "$m2" epoch)" = "$e2"

# replay NAME: n3 replays the capture to n1; n1 must hand none of it up.
# Sets `epoch`: n1's epoch for n2 right after (empty if not listed).
replay() {
	local r0 rep0 sent up reps
	r0=$(rx) rep0=$(proc_counter n1 rx_replays)
	sent=$(on n3 ri2n-forge eth0 replay /tmp/data --rate 50 --duration "$(secs 1)" | awk '{print $2}')
	epoch=$(on n1 ri2n get ri2n0 peer "$m2" epoch 2>/dev/null)
	up=$(($(rx) - r0)) reps=$(($(proc_counter n1 rx_replays) - rep0))
	pretty INFO "$1: n3 replayed ${sent:-0} frames of n2's last incarnation; n1 handed up $up, refused $reps as replays"
	check "$1: n1 hands up none of the replayed frames ($up)" test "$up" -eq 0
	check "$1: n1 refuses them as replays ($reps of ${sent:-0})" test "$reps" -ge $((${sent:-0} * 9 / 10)) -a "${sent:-0}" -gt 0
}

# n2 falls quiet. After three HBSPANs and a half n1 still lists it.
on n2 ip link set ri2n0 down
sleep "$(secs 3.5)"
check "n1 still lists the silent n2" on n1 ri2n get ri2n0 peer "$m2" epoch
replay "silent peer"
check "  ... and keeps n2's epoch" test "$epoch" = "$e2"

# Eight HBSPANs after the last frame n1 took, n1 forgets n2, keeping its
# record; the replays make n2 a new peer, which the record still binds.
await 10 "n1 to age n2 out" not on n1 ri2n get ri2n0 peer "$m2" epoch
aged=$(proc_counter n1 peers_aged)
check "n1 aged n2 out ($aged)" test "${aged:-0}" -gt 0
replay "forgotten peer"

# The real n2 speaks again: the record does not shut it out.
on n2 ip link set ri2n0 up
check "n2 is taken back when it speaks again" on n2 ping -c 3 -i 0.2 -W 2 -q 10.0.0.1
check "  ... with its epoch" test "$(on n1 ri2n get ri2n0 peer "$m2" epoch)" = "$e2"
finish
