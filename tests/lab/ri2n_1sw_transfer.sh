#!/usr/bin/env bash
# One-switch mode, every link through one switch: 100 MiB of random data
# each way over ri2n0, checksummed at both ends, through the origin
# header's GSO and GRO paths. (Two switches: ri2n_gso.)
set -u
export LAB_TOPO=one-switch
RI2N_PARAMS="one_switch=1 ${RI2N_PARAMS:-}"
. "$(dirname "$0")/lib.sh"
lab_up 2 2
ri2n_up n1 n2 || fail "ri2n_up"
on n1 ping -c 2 -q 10.0.0.2 >/dev/null
on n2 iperf3 -s -D
await 5 "iperf3 -s on n2" out_has n2 ':5201 ' ss -ltn
ri2n=$(goodput n1 10.0.0.2 3)
pretty INFO "TCP 3 s, unshaped, one switch: ri2n0 ${ri2n} Mbit/s"
# The debug kernel (KASAN, lockdep) moves about 10 Mbit/s under TCG: there
# the transfers are a fifth of the size. The rate is the benchmarks' to
# judge (make bench), as it follows the host's load; here TCP must move.
mb=100
[ "$LAB_TIME_SCALE" = 1 ] || mb=40
check "TCP over ri2n0 runs (${ri2n:-0} Mbit/s > 0)" ge "${ri2n:-0}" 0.1

transfer_start n1 n2 $mb
check "$mb MiB n1 -> n2, checksums equal" transfer_wait 180
transfer_start n2 n1 $mb 5002
check "$mb MiB n2 -> n1, checksums equal" transfer_wait 180
# A link never reorders its own packets, so the loss rule never gives up a
# packet that still arrives (late_loss), unless a link was failed while it
# still carried some.
for pair in "n1 n2" "n2 n1"; do
	set -- $pair
	late_loss=$(peer_counter $1 $2 late_loss) fails=$(peer_counter $1 $2 fails)
	pretty INFO "$1 from $2: late $(peer_counter $1 $2 late) (after the loss rule $late_loss), FAST_TOUT releases $(peer_counter $1 $2 timeout), loss releases $(peer_counter $1 $2 loss), endpoint failures $fails"
	check "$1: the loss rule gave up no packet that then arrived (late_loss $late_loss, endpoint failures $fails)" \
		test "$late_loss" = 0 -o "$fails" -gt 0 || on $1 cat /proc/net/ri2n/ri2n0 >&2
done
finish
