#!/usr/bin/env python3
"""make bench-apps's report: bench/results/apps/README.md and its plots from
the raw results of scripts/apps-lab.sh (RAW, default bench/results/apps/raw).

Every target is a ratio within one run of the lab, and each is printed as
met or missed with its figure.
"""
import glob
import os
import re
import shutil
import subprocess
import sys

RAW = sys.argv[1] if len(sys.argv) > 1 else "bench/results/apps/raw"
OUT = os.path.dirname(os.path.abspath(RAW))
BASELINES = ["single", "bond", "bond-arp", "mpi-2nic"]
CFG_NAMES = {
    "single": "one link",
    "bond": "bonding rr, miimon",
    "bond-arp": "bonding rr, ARP monitor",
    "mpi-2nic": "OpenMPI TCP over both NICs",
    "ri2n": "ri2n",
    "ri2n-keyed": "ri2n, keyed",
}


def read_tsv(name):
    path = os.path.join(RAW, name)
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [l.rstrip("\n").split("\t") for l in f if l.strip() and not l.startswith("#")]


def meta():
    path = os.path.join(RAW, "meta.txt")
    if not os.path.exists(path):
        return {}
    out = {}
    with open(path) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition(" ")
            out[k] = v
    return out


def fnum(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def lammps_runs():
    """(nodes, cfg, fault) -> dict(loop, comm, steps)."""
    runs = {}
    for row in read_tsv("lammps.tsv"):
        nodes, cfg, fault, loop, comm, steps = (row + [""] * 6)[:6]
        runs[(int(nodes), cfg, fault)] = {
            "loop": fnum(loop),
            "comm": fnum(comm),
            "steps": int(fnum(steps) or 0),
        }
    return runs


def timeline(nodes, cfg, fault):
    """Steps against seconds since the loop started (host clock), and the
    cut and heal times on the same axis."""
    path = os.path.join(RAW, f"lammps-{nodes}-{cfg}-{fault}.txt")
    if not os.path.exists(path):
        return None
    t0, cut, heal, pts, header = None, None, None, [], False
    with open(path) as f:
        for line in f:
            if line.startswith("# cut_ms"):
                cut = int(line.split()[2])
                continue
            if line.startswith("# heal_ms"):
                heal = int(line.split()[2])
                continue
            parts = line.split()
            if len(parts) < 2 or line.startswith("#"):
                continue
            if parts[1] == "Step" and len(parts) > 2 and parts[2] == "CPU":
                t0, header = int(parts[0]), True
                continue
            if header and len(parts) == 5 and parts[1].isdigit():
                pts.append(((int(parts[0]) - t0) / 1000, int(parts[1])))
            elif header and parts[1] == "Loop":
                header = False
    if t0 is None:
        return None
    rel = lambda t: None if t is None else (t - t0) / 1000
    return {"points": pts, "cut": rel(cut), "heal": rel(heal)}


def pct(x):
    return f"{x:.0f} %" if x is not None else "–"


def lammps_section(m, runs, targets, plots):
    lines = []
    if not runs:
        return lines
    lines += [
        "## LAMMPS, LJ melt",
        "",
        f"`lmp -in tools/apps/in.lj`, a cube of {m.get('lj_box', '?')} fcc cells a side "
        f"({int(m.get('lj_box', '0')) ** 3 * 4} atoms), {m.get('lj_steps', '?')} steps, one rank per node, "
        "OpenMPI's TCP BTL over the configuration's interfaces. Loop time is LAMMPS's "
        "own (\"Loop time of\"); comm is its share of the loop spent in communication "
        "(the \"Comm\" row, rank mean). A cut run takes n2's link 1 down a third of the "
        "way through the uncut run's loop time and back at two thirds; slowdown is its "
        "loop time over the uncut run's. One link uses eth0 only: a cut of link 1 does "
        "not touch it, so it is not cut.",
        "",
    ]
    for nodes in sorted({k[0] for k in runs}):
        cfgs = [c for c in CFG_NAMES if (nodes, c, "none") in runs]
        lines += [
            f"### {nodes} nodes",
            "",
            "| configuration | loop (s) | steps/s | comm | carrier cut: loop (s) | slowdown | blackhole: loop (s) | slowdown |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for c in cfgs:
            u = runs[(nodes, c, "none")]
            row = [CFG_NAMES[c]]
            if u["loop"]:
                row += [f"{u['loop']:.1f}", f"{u['steps'] / u['loop']:.2f}", pct(u["comm"])]
            else:
                row += [f"did not finish (step {u['steps']})", "–", "–"]
            for fault in ("carrier", "blackhole"):
                r = runs.get((nodes, c, fault))
                if r is None:
                    row += ["–", "–"]
                elif r["loop"] is None:
                    row += [f"did not finish (step {r['steps']})", "–"]
                else:
                    row += [f"{r['loop']:.1f}", f"{r['loop'] / u['loop']:.2f} ×" if u["loop"] else "–"]
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")
        # Targets: uncut, ri2n at least as fast as the best baseline.
        base = [(runs[(nodes, c, "none")]["loop"], c) for c in BASELINES
                if (nodes, c, "none") in runs and runs[(nodes, c, "none")]["loop"]]
        r = runs.get((nodes, "ri2n", "none"))
        if base and r and r["loop"]:
            best, bc = min(base)
            ratio = best / r["loop"]
            targets.append((f"LAMMPS {nodes} nodes uncut: ri2n's speed ≥ the best baseline's ({CFG_NAMES[bc]})",
                            f"{ratio:.3f} × ({r['loop']:.1f} s against {best:.1f} s)", ratio >= 1.0))
        for fault in ("carrier", "blackhole"):
            slow = {}
            for c in cfgs:
                u, cut = runs[(nodes, c, "none")], runs.get((nodes, c, fault))
                if cut and cut["loop"] and u["loop"]:
                    slow[c] = cut["loop"] / u["loop"]
            if "ri2n" in slow:
                others = {c: s for c, s in slow.items() if c not in ("ri2n", "ri2n-keyed")}
                ok = all(slow["ri2n"] <= s for s in others.values())
                desc = ", ".join(f"{CFG_NAMES[c]} {s:.2f}" for c, s in sorted(others.items(), key=lambda x: x[1]))
                targets.append((f"LAMMPS {nodes} nodes, {fault} cut: ri2n's slowdown the smallest of those that finish",
                                f"ri2n {slow['ri2n']:.2f} × (others: {desc or 'none finished'})", ok))
            elif (nodes, "ri2n", fault) in runs:
                targets.append((f"LAMMPS {nodes} nodes, {fault} cut: ri2n finishes", "did not finish", False))
        for fault in ("carrier", "blackhole"):
            name = f"lammps-{nodes}-{fault}.png"
            series = []
            for c in cfgs:
                u = runs[(nodes, c, "none")]
                tl = timeline(nodes, c, fault if c != "single" else "none")
                if tl and tl["points"] and u["loop"]:
                    series.append((c, u["loop"], tl))
            if series:
                plots.append((name, nodes, fault, series))
                lines += [f"![LAMMPS progress, {nodes} nodes, {fault} cut]({name})", ""]
    return lines


def sockperf(cfg, proto, size):
    path = os.path.join(RAW, f"sockperf-{cfg}-{proto}-{size}.txt")
    if not os.path.exists(path):
        return None
    out = {}
    with open(path) as f:
        for line in f:
            mm = re.search(r"percentile (\d+\.\d+) = +([\d.]+)", line)
            if mm:
                out[mm.group(1)] = float(mm.group(2))
    return out or None


def pingpong(cfg):
    path = os.path.join(RAW, f"pingpong-{cfg}.txt")
    out = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) >= 3 and not line.startswith("#"):
                    out[int(p[0])] = float(p[2])
    return out


def clients_section(targets):
    rows = read_tsv("netperf.tsv")
    if not rows:
        return []
    rr = {(r[0], int(r[2])): fnum(r[3]) for r in rows if r[1] == "TCP_RR"}
    st = {r[0]: fnum(r[3]) for r in rows if r[1] == "TCP_STREAM"}
    cfgs = [c for c in CFG_NAMES if any(k[0] == c for k in rr)]
    lines = [
        "## netperf, sockperf and tools/pingpong, 2 nodes",
        "",
        "TCP_RR: transactions per second (one request and one response of the size, one "
        "at a time), and tools/pingpong's round trips per second at the same size "
        "(1 / its mean round trip) in the same lab. TCP_STREAM: 10⁶ bits/s.",
        "",
        "| configuration | " + " | ".join(f"TCP_RR {s} B (pingpong)" for s in (1, 64, 1024, 4096)) + " | TCP_STREAM |",
        "|---|" + "---:|" * 5,
    ]
    for c in cfgs:
        pp = pingpong(c)
        cells = []
        for s in (1, 64, 1024, 4096):
            v = rr.get((c, s))
            p = f" ({1e6 / pp[s]:.0f})" if s in pp else ""
            cells.append((f"{v:.0f}" if v else "–") + p)
        cells.append(f"{st[c]:.1f}" if st.get(c) else "–")
        lines.append(f"| {CFG_NAMES[c]} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "sockperf ping-pong, full round trip (µs): p50 / p99 / p99.9.",
        "",
        "| configuration | UDP 64 B | UDP 1024 B | TCP 64 B | TCP 1024 B |",
        "|---|---:|---:|---:|---:|",
    ]
    for c in cfgs:
        cells = []
        for proto, size in (("udp", 64), ("udp", 1024), ("tcp", 64), ("tcp", 1024)):
            sp = sockperf(c, proto, size)
            cells.append(" / ".join(f"{sp.get(k, 0):.0f}" for k in ("50.000", "99.000", "99.900")) if sp else "–")
        lines.append(f"| {CFG_NAMES[c]} | " + " | ".join(cells) + " |")
    lines.append("")
    for s in (1, 64, 1024, 4096):
        a, b = rr.get(("ri2n", s)), rr.get(("bond", s))
        if a and b:
            targets.append((f"netperf TCP_RR {s} B: ri2n within 5 % of bonding", f"{a / b:.3f} × ({a:.0f} against {b:.0f} /s)", a / b >= 0.95))
    for proto, size in (("udp", 64), ("tcp", 64)):
        a, b = sockperf("ri2n", proto, size), sockperf("bond", proto, size)
        if a and b:
            r = a["50.000"] / b["50.000"]
            targets.append((f"sockperf {proto.upper()} {size} B p50: ri2n within 5 % of bonding",
                            f"{r:.3f} × ({a['50.000']:.0f} against {b['50.000']:.0f} µs)", r <= 1.05))
    return lines


def coll(nodes, cfg):
    path = os.path.join(RAW, f"coll-{nodes}-{cfg}.txt")
    out = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) == 6 and p[0] in ("alltoall", "allreduce"):
                    out[(p[0], int(p[1]))] = float(p[3])
    return out


def coll_section(targets):
    files = glob.glob(os.path.join(RAW, "coll-*-*.txt"))
    if not files:
        return []
    lines = []
    for nodes in sorted({int(os.path.basename(f).split("-")[1]) for f in files}):
        cfgs = [c for c in CFG_NAMES if os.path.exists(os.path.join(RAW, f"coll-{nodes}-{c}.txt"))]
        data = {c: coll(nodes, c) for c in cfgs}
        lines += [
            f"## MPI collectives, {nodes} nodes",
            "",
            "tools/mpi-coll (OSU-style): mean latency per call (µs), mean over ranks.",
            "",
            "| configuration | " + " | ".join(f"{op} {sz}" for op in ("alltoall", "allreduce") for sz in ("8 B", "1 KiB", "64 KiB", "1 MiB")) + " |",
            "|---|" + "---:|" * 8,
        ]
        for c in cfgs:
            cells = [f"{data[c][(op, s)]:.0f}" if (op, s) in data[c] else "failed"
                     for op in ("alltoall", "allreduce") for s in (8, 1024, 65536, 1048576)]
            lines.append(f"| {CFG_NAMES[c]} | " + " | ".join(cells) + " |")
        lines.append("")
        if "ri2n" in data and "bond" in data:
            for s in (8, 1024, 65536, 1048576):
                a, b = data["ri2n"].get(("alltoall", s)), data["bond"].get(("alltoall", s))
                if a and b:
                    targets.append((f"all-to-all {nodes} nodes {s} B: ri2n at least bonding's speed",
                                    f"{b / a:.3f} × ({a:.0f} against {b:.0f} µs)", a <= b))
    return lines


def plot(plots):
    """Each cut run's progress, time as a fraction of the configuration's own
    uncut loop time: every cut falls at 1/3 and every heal at 2/3, and a
    run's slowdown is where its line ends."""
    if not shutil.which("gnuplot"):
        print("gnuplot missing: no plots (scripts/setup-host.sh --apps installs it)", file=sys.stderr)
        return
    terms = subprocess.run(["gnuplot", "-e", "set terminal"], capture_output=True, text=True).stderr
    term = "pngcairo" if "pngcairo" in terms else "png"
    for name, nodes, fault, series in plots:
        cmds = [
            f"set terminal {term} size 900,500",
            f"set output '{os.path.join(OUT, name)}'",
            f"set title 'LAMMPS LJ melt, {nodes} nodes: n2 link 1 cut ({fault}) at 1/3, healed at 2/3'",
            "set xlabel 'time since the loop started / the same configuration uncut loop time'",
            "set ylabel 'timestep'",
            "set key right bottom",
            "set grid",
        ]
        for t, label in ((1 / 3, "cut"), (2 / 3, "heal")):
            cmds.append(f"set arrow from {t},graph 0 to {t},graph 1 nohead dt 2 lc rgb 'red'")
            cmds.append(f"set label '{label}' at {t},graph 0.97 offset 0.5,0")
        data = []
        for c, loop, tl in series:
            data.append("\n".join(f"{x / loop:.4f} {y}" for x, y in tl["points"]) + "\ne")
        cmds.append("plot " + ", ".join(
            f"'-' using 1:2 with linespoints title '{CFG_NAMES[c]}{' (not cut)' if c == 'single' else ''}'"
            for c, _, _ in series))
        subprocess.run(["gnuplot"], input="\n".join(cmds) + "\n" + "\n".join(data) + "\n", text=True, check=True)


def main():
    m = meta()
    targets, plots = [], []
    body = []
    body += lammps_section(m, lammps_runs(), targets, plots)
    body += clients_section(targets)
    body += coll_section(targets)
    head = [
        "# make bench-apps: LAMMPS, netperf, sockperf and MPI collectives",
        "",
        "Made by `make bench-apps` (scripts/apps-lab.sh, scripts/apps-report.py) from "
        "raw/. Guests run under TCG, one vCPU each; every link is shaped to "
        f"{m.get('rate', '?')} on the host side. Absolute figures are this host's; the "
        "targets compare configurations within one run.",
        "",
    ]
    head += [f"- {k}: {v}" for k, v in m.items()]
    head += ["", "## Targets", "", "| target | figure | |", "|---|---|---|"]
    head += [f"| {t} | {f} | {'met' if ok else '**missed**'} |" for t, f, ok in targets]
    head.append("")
    with open(os.path.join(OUT, "README.md"), "w") as f:
        f.write("\n".join(head + body) + "\n")
    plot(plots)
    print("\n".join(head))


if __name__ == "__main__":
    main()
