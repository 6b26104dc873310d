#!/usr/bin/env bash
# Reflection without a key: frames forged from made-up source MACs must
# not make a node send more frames than it received. n1 is a host on the
# segment that is not in the cluster (no ri2n): it forges 2,000 data
# frames, each from a MAC of its own, to n2's ri2n0. Each is a new peer to
# n2, which answers it with one heartbeat on the link it was heard on and
# sends it nothing periodic (it never answered), until it ages out.
# Then, with a table of 15 peers, the same flood makes no more peers than
# the table turns over: 15 at once, then 15 per HBSPAN.
set -u
. "$(dirname "$0")/lib.sh"
lab_up 2 2
# HBSPAN 500 ms: the forged peers age out (8 HBSPANs) within the window,
# after as many periodic heartbeats as 16 s at the default would send.
RI2N_PARAMS="hbspan=500" ri2n_up n2 || fail "ri2n_up n2"
on n1 ip link set eth0 up
to=$(ri2n_mac n2)
# Frames n2's slaves sent so far.
sent() { on n2 cat /sys/class/net/eth0/statistics/tx_packets /sys/class/net/eth1/statistics/tx_packets | awk '{s += $1} END {print s}'; }
# What n2 sends on its own (IPv6 on ri2n0, say), over 3 s.
a=$(sent)
sleep 3
idle=$(($(sent) - a))
a=$(sent)
forged=$(on n1 ri2n-forge eth0 forge data --from 02:66:00:00:00:00 --to "$to" --peers 2000 --rate 500 --duration 4 | awk '{print $2}')
# The forged peers age out 8 HBSPANs (4 s) after their frame: 9 s in all.
sleep 5
out=$(($(sent) - a - 3 * idle))
peers=$(proc_counter n2 peers_new)
pretty INFO "n1 forged ${forged:-0} frames from 2,000 MACs; n2 admitted $peers peers and sent $out frames over 9 s beyond its own ($idle per 3 s)"
check "the forged frames were sent (${forged:-0})" test "${forged:-0}" -ge 1900
check "n2 took them for new peers ($peers)" test "${peers:-0}" -ge 1000
# One answer per forged frame, and n2's own frames estimated from 3 s of
# them: what they add beyond the estimate (IPv6, ARP) is allowed 2 %; a
# reflection is several frames out per frame in.
check "n2 sent no more than it was sent ($out for ${forged:-0}, 2 % for its own)" test "$out" -le $((${forged:-0} + ${forged:-0} / 50))

on n2 rmmod ri2n
RI2N_PARAMS="peer_mem=36000" ri2n_up n2 || fail "ri2n_up n2 with a table of 15"
check "n2's table holds 15 peers" out_has n2 "^Peers: [0-9]+ of 15 " cat /proc/net/ri2n/ri2n0
forged=$(on n1 ri2n-forge eth0 forge data --from 02:77:00:00:00:00 --to "$to" --peers 2000 --rate 500 --duration 4 | awk '{print $2}')
peers=$(proc_counter n2 peers_new) refused=$(proc_counter n2 peers_refused)
pretty INFO "n1 forged ${forged:-0} frames from 2,000 MACs in 4 s; n2 admitted $peers peers and refused $refused"
# 15 at once, 15 per 2 s HBSPAN over the 4 s, with a second's slack.
check "n2 made no more peers than its table turns over ($peers <= 60)" test "${peers:-0}" -le 60
check "  ... and counted the rest refused ($refused)" test "${refused:-0}" -ge $((${forged:-0} / 2))
finish
