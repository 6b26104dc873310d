#!/usr/bin/env bash
# ri2n.ko loads and unloads cleanly in both guests, twice in a row, and
# creates ri2n0 each time.
set -u
. "$(dirname "$0")/lib.sh"
lab_up 2 2
for n in n1 n2; do
	for round in 1 2; do
		check "$n: load ri2n (round $round)" on $n modprobe ri2n slaves=eth0,eth1
		check "$n: ri2n listed" out_has $n '^ri2n ' lsmod
		check "$n: ri2n0 exists" on $n ip link show ri2n0
		check "$n: unload ri2n (round $round)" on $n rmmod ri2n
		check "$n: ri2n gone" not out_has $n '^ri2n ' lsmod
	done
done
finish
