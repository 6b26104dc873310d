#!/usr/bin/env bash
# scripts/lab run scripts/window-events-lab.sh: bulk TCP n1 -> n2, three
# runs of SECS (8) s, each with its goodput, the sender's retransmits,
# DSACKs and reorder events, and what n2's window for n1 gave up and got
# late (timeout, loss, flushes, jumps, late): which window events a
# spurious retransmission follows. LINKS (2), RATE (100mbit, or none),
# LAB_SMP (1: both slaves on one vCPU; 2: each on its own).
set -u
. "$RI2N_ROOT/tests/lab/lib.sh"
links=${LINKS:-2}
lab_up 2 "$links"
ri2n_up n1 n2 || fail "ri2n_up"
if [ "${RATE:-100mbit}" != none ]; then
	for n in n1 n2; do for ((l = 0; l < links; l++)); do link_shape $n $l "${RATE:-100mbit}"; done; done
fi
on n2 iperf3 -s -D
on n1 ping -c 2 -q 10.0.0.2 >/dev/null
events() { peer_counters n2 n1 timeout loss flushes jumps late late_loss unbuffered; }
for r in 1 2 3; do
	on n1 nstat -n
	e0=$(events)
	g=$(goodput n1 10.0.0.2 "${SECS:-8}")
	s=$(on n1 nstat -z TcpRetransSegs TcpExtTCPDSACKRecv TcpExtTCPSACKReorder | awk '!/^#/ {printf "%s=%s ", $1, $2}')
	echo "run $r: ${g:-0} Mbit/s; n1: $s"
	echo "  n2's window: $e0-> $(events)"
done
