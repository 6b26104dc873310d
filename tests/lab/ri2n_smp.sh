#!/usr/bin/env bash
# Two CPUs transmitting at once: n1, with 2 vCPUs, sends UDP to
# n2 from CPU 0 and to n3 from CPU 1 while both run. Checked: both streams
# arrive whole and in order (no packet the loss rule gave up arrives
# late), and that the senders do not meet: unicast to a known peer takes
# only that peer's lock, so the device's state lock is taken a small
# fraction of a round per packet (`lock_rounds`: all of n1's rounds, by
# receive and the timers too, over its packets), and a sender finds its
# peer's lock held only when receive or a timer has it
# (`tx_peer_contended`, at most 1 % of the packets). The same with a key:
# sealed unicast takes the same way. Reported: how often the state lock
# was found held (`lock_contended`).
set -u
. "$(dirname "$0")/lib.sh"
LAB_SMP=2 lab_up 3 2
ri2n_up n1 n2 n3 || fail "ri2n_up"
check "n1 has 2 CPUs" test "$(on n1 nproc)" = 2
for n in n2 n3; do
	check "n1 -> $n over ri2n0" on n1 ping -c 2 -i 0.2 -W 2 -q 10.0.0.${n#n}
done
sleep 0.3
counter() { proc_counter n1 "$1"; }
# Datagrams the receiving socket itself dropped (its buffer full: the
# receiver's one vCPU starved by the others on a busy host) are not ri2n's.
rcvbuf() { udp_rcvbuf_errors "$1"; }

# two_senders LABEL [CMD]: both streams at once (CMD, if any, on the host
# meanwhile), and the checks. A debug kernel sends some 5 times fewer
# datagrams (607 and 879 with a key, rotated): the streams
# must have run, at a fifth of the rate.
two_senders() {
	local what=$1 b2 b3 r0 c0 t0 p0 secs rounds contended sent peer_waits n j lost b full pk late fails during=
	for n in n2 n3; do on $n iperf3 -s -D -1; done
	sleep 0.3
	b2=$(rcvbuf n2) b3=$(rcvbuf n3)
	r0=$(counter lock_rounds) c0=$(counter lock_contended) t0=$(counter tx_packets) p0=$(counter tx_peer_contended)
	secs=$((3 * LAB_TIME_SCALE))
	if [ $# -gt 1 ]; then
		"$2" &
		during=$!
	fi
	on n1 sh -c "iperf3 -u -c 10.0.0.2 -b 20M -l 1400 -t $secs -A 0 -J >/tmp/to2.json &
		iperf3 -u -c 10.0.0.3 -b 20M -l 1400 -t $secs -A 1 -J >/tmp/to3.json; wait"
	[ -z "$during" ] || wait "$during"
	rounds=$(($(counter lock_rounds) - r0)) contended=$(($(counter lock_contended) - c0)) sent=$(($(counter tx_packets) - t0))
	peer_waits=$(($(counter tx_peer_contended) - p0))
	for n in n2 n3; do
		j=$(on n1 cat /tmp/to${n#n}.json)
		lost=$(echo "$j" | awk -F'[:,]' '/"lost_packets"/ {v = $2} END {print v + 0}')
		b=$([ $n = n2 ] && echo "$b2" || echo "$b3")
		full=$(($(rcvbuf $n) - b))
		lost=$((lost > full ? lost - full : 0))
		pk=$(echo "$j" | awk -F'[:,]' '/"packets"/ {v = $2} END {print v + 0}')
		late=$(peer_counter $n n1 late_loss) fails=$(peer_counter $n n1 fails)
		# As in ri2n_gso: a packet given up then late is a fault unless
		# a link was failed meanwhile (the rule then waits on fewer links).
		check "$what: n1 -> $n from its own CPU: $pk datagrams, $lost lost (<= 1%; $full more the receiving socket had no room for), none given up then late ($late; endpoint failures $fails)" \
			test "$pk" -gt $((1000 / LAB_TIME_SCALE)) -a $((lost * 100)) -le "$pk" -a \( "$late" = 0 -o "$fails" -gt 0 \) ||
			{ on $n sh -c 'cat /proc/net/ri2n/ri2n0; dmesg | grep ri2n0 | tail -12' >&2; on n1 sh -c 'dmesg | grep ri2n0 | tail -12' >&2; }
	done
	pretty INFO "$what: n1: $sent packets sent, $rounds rounds of the state lock, $contended of them contended; peer locks found held $peer_waits times"
	if [ "$LAB_TIME_SCALE" = 1 ]; then
		check "$what: n1: at most 0.25 rounds of the state lock per packet sent ($rounds for $sent)" \
			test "$sent" -gt 0 -a $((rounds * 4)) -le "$sent"
		check "$what: n1: a sender found its peer's lock held for at most 1 % of the packets ($peer_waits of $sent)" \
			test $((peer_waits * 100)) -le "$sent"
	else
		pretty INFO "$what: n1: $rounds rounds of the state lock for $sent packets (debug kernel: not checked)"
	fi
}
two_senders "no key"

# Sealed frames take the same way: the keys are read under RCU, not under
# the state lock (no global lock on the data path). The key is
# rotated while both CPUs send (every node accepts the new key, then seals
# with it, then stops accepting the old): no frame leaves unsealed or
# under a key its receiver refuses.
keys() { # FILE VALUE: on every node
	local n
	for n in n1 n2 n3; do on $n sh -c "echo $2 > /sys/class/net/ri2n0/ri2n/$1" || fail "setting $1 on $n"; done
}
k1=000102030405060708090a0b0c0d0e0f k2=f0e0d0c0b0a090807060504030201000
keys key $k1
sleep 0.5
for n in n2 n3; do
	check "with a key: n1 -> $n over ri2n0" on n1 ping -c 2 -i 0.2 -W 2 -q 10.0.0.${n#n}
done
rotate() {
	sleep "$LAB_TIME_SCALE"
	keys key_accept $k2
	keys key $k2
	keys key_accept none
}
declare -A fails0=([n2]="$(proc_counter n2 rx_auth_fail)" [n3]="$(proc_counter n3 rx_auth_fail)")
keys_line() { on n1 grep '^Keys:' /proc/net/ri2n/ri2n0; }
before=$(keys_line)
two_senders "with a key, rotated meanwhile" rotate
after=$(keys_line)
check "with a key: n1 rotated during the streams ($before -> $after)" \
	test "$before" != "$after" -a -n "$(echo "$after" | grep 'also accepted none')"
for n in n2 n3; do
	f=${fails0[$n]}
	check "with a key: $n refused no frame of n1's across the rotation ($(($(proc_counter $n rx_auth_fail) - f)) tag failures)" \
		test "$(($(proc_counter $n rx_auth_fail) - f))" = 0
done
finish
