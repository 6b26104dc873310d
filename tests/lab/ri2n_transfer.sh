#!/usr/bin/env bash
# 200 MiB of random data each way over ri2n0, checksummed at both ends;
# TCP throughput next to one slave alone in the same lab.
set -u
. "$(dirname "$0")/lib.sh"
lab_up 2 2
on n1 ip addr add 10.1.0.1/24 dev eth0
on n2 ip addr add 10.1.0.2/24 dev eth0
on n2 iperf3 -s -D
sleep 0.3
single=$(on n1 iperf3 -c 10.1.0.2 -t 5 -J | awk -F'[:,]' '/"sum_received"/ {r = 1} r && /"bits_per_second"/ {printf "%.0f", $2 / 1e6; exit}')
on n1 ip addr flush dev eth0
on n2 ip addr flush dev eth0
ri2n_up n1 n2 || fail "ri2n_up"
on n1 ping -c 2 -q 10.0.0.2 >/dev/null
ri2n=$(on n1 iperf3 -c 10.0.0.2 -t 5 -J | awk -F'[:,]' '/"sum_received"/ {r = 1} r && /"bits_per_second"/ {printf "%.0f", $2 / 1e6; exit}')
pretty INFO "TCP 5 s, unshaped: one slave (TSO) ${single} Mbit/s, ri2n0 ${ri2n} Mbit/s"
check "TCP over ri2n0 runs (${ri2n} Mbit/s)" test "${ri2n:-0}" -gt 50

transfer_start n1 n2 200
check "200 MiB n1 -> n2, checksums equal" transfer_wait 180
transfer_start n2 n1 200 5002
check "200 MiB n2 -> n1, checksums equal" transfer_wait 180
late=$(on n2 cat /proc/net/ri2n/ri2n0 | awk '/released/ {print $15}')
check "no packet given up without loss (late $late)" test "${late:-x}" = 0
finish
