#!/usr/bin/env python3
# demo-plot.py SAMPLES T0_MS DIR: from n1's `ri2n show --json` samples (one
# per line) and iperf3's JSON, writes DIR/links.dat (time, packets/s n1
# sent on eth0 and eth1, endpoint (n2, eth1) up 1 / out of use 0) and
# DIR/goodput.dat (time, Mbit/s), times in s from the transfer's start.
import json
import sys

samples, t0, d = sys.argv[1], int(sys.argv[2]), sys.argv[3]
prev = None
with open(f"{d}/links.dat", "w") as links:
    for line in open(samples):
        try:
            dev = json.loads(line)["devices"][0]
        except (ValueError, KeyError, IndexError):
            continue
        t = (dev["clock_ms"] - t0) / 1000
        tx = {s["name"]: s["tx_packets"] for s in dev["slaves"]}
        ep = [e for p in dev["peers"] for e in p["endpoints"] if e["slave"] == "eth1"]
        up = 1 if ep and ep[0]["state"] == "up" else 0
        if prev and t > prev[0]:
            dt = t - prev[0]
            rates = [(tx[k] - prev[1][k]) / dt for k in ("eth0", "eth1")]
            links.write(f"{t:.2f} {rates[0]:.0f} {rates[1]:.0f} {up}\n")
        prev = (t, tx)
with open(f"{d}/goodput.dat", "w") as g:
    for i in json.load(open(f"{d}/iperf.json"))["intervals"]:
        g.write(f"{i['sum']['end']:.2f} {i['sum']['bits_per_second'] / 1e6:.1f}\n")
