#!/usr/bin/env bash
# Three nodes on the same two networks: every pair talks on every network
# (the bridges are real L2 segments, not point-to-point wires).
set -u
. "$(dirname "$0")/lib.sh"
lab_up 3 2
for i in 1 2 3; do
	for k in 0 1; do on n$i ip addr add 10.1.$k.$i/24 dev eth$k; done
done
for k in 0 1; do
	for a in 1 2 3; do
		for b in 1 2 3; do
			[ $a = $b ] && continue
			check "network $k: n$a -> n$b" on n$a ping -c 2 -i 0.2 -W 2 -q 10.1.$k.$b
		done
	done
done
finish
