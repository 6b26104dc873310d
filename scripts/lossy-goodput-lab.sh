#!/usr/bin/env bash
# scripts/lab run scripts/lossy-goodput-lab.sh: what TCP over ri2n0 carries
# with one of two links lossy, against the targets (links shaped to
# 100 Mbit/s):
#   20 % loss on one link: goodput >= 0.9 x one clean link;
#   1 % loss: >= 0.9 x one clean link;
#   once the loss ends: >= 0.95 x two links within 3 s.
# Per run (RUNS, 1): each figure and whether it met its target. They vary
# from run to run on a busy TCG host, which is why they are a benchmark's
# and not ri2n_lossy's, which checks the states behind them.
set -u
. "$RI2N_ROOT/tests/lab/lib.sh"
ri2n_pair 100mbit
on n2 iperf3 -s -D
target() { # DESCRIPTION GOT WANT
	if ge "$2" "$3"; then echo "target met: $1"; else echo "target MISSED: $1"; fi
}
times() { awk -v a="$1" -v f="$2" 'BEGIN { printf "%.1f", a * f }'; }

# One clean link, outside ri2n: eth0 with addresses of its own.
on n1 ip addr add 10.9.0.1/24 dev eth0
on n2 ip addr add 10.9.0.2/24 dev eth0
for ((r = 1; r <= ${RUNS:-1}; r++)); do
	one=$(goodput n1 10.9.0.2 3)
	two=$(goodput n1 10.0.0.2 3)
	echo "run $r: one clean link $one Mbit/s; ri2n over two clean links $two Mbit/s"

	# The link is lossy before the measured transfer: a first one (2 s)
	# lets both sides find out.
	link_netem n1 1 loss 20%
	goodput n1 10.0.0.2 2 >/dev/null
	got=$(goodput n1 10.0.0.2 6)
	target "20 % loss: goodput $got >= 0.9 x one clean link ($one)" "$got" "$(times "$one" 0.9)"

	link_netem n1 1 off
	on n1 iperf3 -c 10.0.0.2 -t 5 -i 0.5 -J >"$LAB_DIR/heal.json"
	back=$(awk -F'[:,]' '/"end":/ {e = $2} /"bits_per_second"/ && e != "" {print e, $2 / 1e6; e = ""}' "$LAB_DIR/heal.json" |
		awk -v want="$(times "$two" 0.95)" '$2 >= want && !f {print $1; f = 1}')
	target "loss ended: two links' goodput ($(times "$two" 0.95)) again within 3 s (at ${back:-never} s)" 3 "${back:-99}"

	link_netem n1 1 loss 1%
	goodput n1 10.0.0.2 2 >/dev/null
	got=$(goodput n1 10.0.0.2 6)
	target "1 % loss: goodput $got >= 0.9 x one clean link ($one); eth1 $(ep_state n1 n2 eth1)" "$got" "$(times "$one" 0.9)"
	link_netem n1 1 off
	sleep 3
done
