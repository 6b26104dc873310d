#!/usr/bin/env bash
# scripts/lab run scripts/window-events-lab.sh: bulk TCP n1 -> n2, RUNS
# (3) runs of SECS (8) s, each with its goodput, the sender's retransmits,
# DSACKs and reorder events, and what n2's window for n1 gave up and got
# late (timeout, loss, flushes, jumps, late): which window events a
# spurious retransmission follows. LINKS (2), RATE (100mbit, or none),
# LAB_SMP (1: both slaves on one vCPU; 2: each on its own). BACKLOG=1:
# the host's shapers into n2 are sampled during each run (one `tc -s
# qdisc` dump at a time, about 45 a second here), and the largest
# difference between two links' queues is printed in ms at RATE (the
# samples kept in BACKLOG_DIR if given): a packet queued behind the longer
# one arrives that much after its neighbour on the shorter one. SINGLE=1: each run
# is followed by one over a plain link (one more NIC, shaped alike, TSO
# on: make bench's "single"), for the same counters from TCP alone.
set -u
. "$RI2N_ROOT/tests/lab/lib.sh"
links=${LINKS:-2}
single=${SINGLE:-0}
lab_up 2 $((links + single))
LAB_LINKS=$links ri2n_up n1 n2 || fail "ri2n_up"
if [ "${RATE:-100mbit}" != none ]; then
	for n in n1 n2; do for ((l = 0; l < links + single; l++)); do link_shape $n $l "${RATE:-100mbit}"; done; done
fi
if [ "$single" = 1 ]; then
	for n in n1 n2; do on $n ip addr add 10.0.9.${n#n}/24 dev eth$links; done
	on n1 ping -c 2 -q 10.0.9.2 >/dev/null || fail "no ping over eth$links"
fi
on n2 iperf3 -s -D
on n1 ping -c 2 -q 10.0.0.2 >/dev/null
# One line per sample: host ms, then each link's backlog into n2 in bytes.
sample_backlogs() {
	while :; do
		# One dump for all ports: the queues are read at the same moment.
		ns tc -s qdisc show | awk -v t="$(host_ms)" -v links="$links" '
			$1 == "qdisc" {dev = ""; for (i = 1; i < NF; i++) if ($i == "dev") dev = $(i + 1)}
			/backlog/ && dev ~ /^n2e[0-9]+$/ {v = $2; sub(/b$/, "", v); if (v ~ /K$/) {sub(/K$/, "", v); v *= 1024} if (v ~ /M$/) {sub(/M$/, "", v); v *= 1048576}; q[substr(dev, 4) + 0] = v}
			END {line = t; for (l = 0; l < links; l++) line = line " " (q[l] + 0); print line}'
		sleep 0.01
	done
}
# The samples' largest spread between links (max - min backlog), in bytes
# and in ms at RATE, and how many samples spread more than 20 ms (FAST_TOUT).
backlog_skew() {
	local bps
	bps=$(echo "${RATE:-100mbit}" | awk '{v = $1 + 0; if ($1 ~ /gbit/) v *= 1e9; else if ($1 ~ /mbit/) v *= 1e6; else if ($1 ~ /kbit/) v *= 1e3; print v / 8}')
	awk -v bps="$bps" '{lo = $2; hi = $2; for (i = 3; i <= NF; i++) {if ($i < lo) lo = $i; if ($i > hi) hi = $i}
		d = hi - lo; n++; if (d > max) {max = d; at = NR}; if (d / bps > 0.020) over++; if (hi > top) top = hi}
		END {printf "  host shapers into n2: %d samples; largest queue %.1f ms; largest spread %d B = %.1f ms (sample %d); spread > 20 ms in %d\n", n, top / bps * 1000, max, max / bps * 1000, at, over}' "$1"
}
# The sender's TCP counters since `nstat -n`: what it retransmitted, and
# what for (loss probes, timeouts), and what the receiver said was not
# needed (DSACKs) or came out of order.
tcp_counters() {
	on n1 nstat -z TcpRetransSegs TcpExtTCPDSACKRecv TcpExtTCPSACKReorder TcpExtTCPLossProbes TcpExtTCPTimeouts \
		| awk '!/^#/ {sub(/^Tcp(Ext(TCP)?)?/, "", $1); printf "%s=%s ", $1, $2}'
}
events() { peer_counters n2 n1 timeout loss flushes jumps late late_loss unbuffered; }
for ((r = 1; r <= ${RUNS:-3}; r++)); do
	on n1 nstat -n
	e0=$(events)
	[ "${BACKLOG:-0}" = 1 ] && { sample_backlogs >"${BACKLOG_DIR:-$LAB_DIR}/backlog.$r" & sampler=$!; }
	g=$(goodput n1 10.0.0.2 "${SECS:-8}")
	[ "${BACKLOG:-0}" = 1 ] && { kill "$sampler"; wait "$sampler" 2>/dev/null; backlog_skew "${BACKLOG_DIR:-$LAB_DIR}/backlog.$r"; }
	echo "run $r: ${g:-0} Mbit/s; n1: $(tcp_counters)"
	echo "  n2's window: $e0-> $(events)"
	if [ "$single" = 1 ]; then
		on n1 nstat -n
		g=$(goodput n1 10.0.9.2 "${SECS:-8}")
		echo "run $r, one link: ${g:-0} Mbit/s; n1: $(tcp_counters)"
	fi
done
