# Sourced by scripts/pair-lab.sh and scripts/rtt-counts-lab.sh (after
# tests/lab/lib.sh): two guests, and between them the paths they compare.
#
#   n1 eth0, eth1 -- ri2n0 10.0.0.x -- eth0, eth1 n2
#   n1 eth2 ------- one link 10.3.0.x ------- eth2 n2
#   n1 eth3, eth4 -- bond0 10.4.0.x -- eth3, eth4 n2   (BOND=0: none)
# shellcheck shell=bash

# paths_up BOND TSO: the lab up with the paths above; ri2n with
# RI2N_PARAMS; TSO on|off on the plain link (bonding's slaves: off).
paths_up() {
	local bond=$1 tso=$2 n l
	lab_up 2 $((bond ? 5 : 3))
	for n in n1 n2; do
		on $n modprobe ri2n slaves=eth0,eth1 ${RI2N_PARAMS:-}
		on $n ip link set ri2n0 up
		on $n ip addr add 10.0.0.${n#n}/24 dev ri2n0
		on $n ip addr add 10.3.0.${n#n}/24 dev eth2
		on $n ethtool -K eth2 tso "$tso" >/dev/null 2>&1 || true
		[ "$bond" = 1 ] || continue
		on $n modprobe bonding max_bonds=0
		on $n ip link add bond0 type bond mode balance-rr miimon 100
		for l in 3 4; do
			on $n ip link set eth$l down
			on $n ethtool -K eth$l tso off
			on $n ip link set eth$l master bond0
		done
		on $n ip link set bond0 up
		on $n ip addr add 10.4.0.${n#n}/24 dev bond0
	done
}
