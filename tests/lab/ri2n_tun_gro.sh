#!/usr/bin/env bash
# The shim's GRO (net/offload.rs) is called for every frame of the RI2N
# ethertype that any device's GRO sees, ours or not: the offload list is
# global. A tun device with IFF_NAPI (a local user with CAP_NET_ADMIN, in a
# user namespace say) hands GRO frames of any ethertype (the packet
# information header names it). Checked: 2000 RI2N data frames written
# into one while ri2n0 carries traffic are left alone (none reaches ri2n),
# ri2n0 keeps working, no kernel splat (`finish` fails on any; with
# `--debug`, KASAN and lockdep).
# Such frames might be taken to have no MAC header (a read at head +
# 0xffff). On 7.3.4 they have one, at the
# network header (mac_header = data, as a probe in gro_receive shows),
# so that read stays in bounds and this test passes with it
# on the debug kernel too: it guards the path, not that fault.
set -u
. "$(dirname "$0")/lib.sh"
lab_up 2 2
ri2n_up n1 n2 || fail "ri2n_up"
on n1 modprobe tun
on n2 iperf3 -s -D
sleep 0.3
on n1 sh -c "iperf3 -c 10.0.0.2 -t 3 >/dev/null 2>&1 &"
before=$(proc_counter n1 rx_dropped)/$(proc_counter n1 rx_malformed)
out=$(on n1 ri2n-forge tun9 tun --count 2000)
check "2000 RI2N frames written into a tun device with IFF_NAPI ($out)" test "$out" = "sent 2000"
after=$(proc_counter n1 rx_dropped)/$(proc_counter n1 rx_malformed)
check "  ... none reached ri2n (dropped/malformed $before -> $after)" test "$before" = "$after"
check "ri2n0 still works" on n1 ping -c 3 -i 0.2 -W 2 -q 10.0.0.2
finish
