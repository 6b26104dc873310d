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
    """The runs' meta-PARTS.txt files (a part may be rerun alone), merged; a
    key whose value differs between them lists each, with its parts."""
    out = {}
    for path in sorted(glob.glob(os.path.join(RAW, "meta-*.txt"))):
        parts = os.path.basename(path)[5:-4]
        with open(path) as f:
            for line in f:
                k, _, v = line.rstrip("\n").partition(" ")
                out.setdefault(k, {}).setdefault(v, []).append(parts)
    return {k: v if len(vs) == 1 else "; ".join(f"{x} ({', '.join(p)})" for x, p in vs.items())
            for k, vs in out.items() for v in [next(iter(vs))]}


def fnum(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def median(xs):
    xs = sorted(x for x in xs if x is not None)
    n = len(xs)
    if not n:
        return None
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def spread(rs):
    """' (rounds: min–max)' of the rounds' ratios, or nothing for one."""
    rs = [r for r in rs if r is not None]
    return f" (rounds {min(rs):.2f}–{max(rs):.2f})" if len(rs) > 1 else ""


def lammps_runs():
    """(nodes, cfg, run) -> dict(loop, comm, steps); run is none-rROUND for
    the uncut rounds, carrier or blackhole for the cuts."""
    runs = {}
    for row in read_tsv("lammps.tsv"):
        nodes, cfg, run, loop, comm, steps = (row + [""] * 6)[:6]
        runs[(int(nodes), cfg, run)] = {
            "loop": fnum(loop),
            "comm": fnum(comm),
            "steps": int(fnum(steps) or 0),
            "compute": compute_time(int(nodes), cfg, run),
        }
    return runs


def compute_time(nodes, cfg, run):
    """The run's own compute time: LAMMPS's Pair, Neigh and Modify rows
    (rank mean, s). The host's steal time slows compute and communication
    alike, so loop time over it compares configurations across rounds that
    drew a different host speed."""
    path = os.path.join(RAW, f"lammps-{nodes}-{cfg}-{run}.txt")
    if not os.path.exists(path):
        return None
    total = 0.0
    seen = False
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) >= 6 and p[1] in ("Pair", "Neigh", "Modify") and p[2] == "|":
                total += float(p[5])
                seen = True
    return total if seen else None


def timeline(nodes, cfg, run):
    """Steps against seconds since the loop started (host clock), and the
    cut and heal times on the same axis."""
    path = os.path.join(RAW, f"lammps-{nodes}-{cfg}-{run}.txt")
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


def lammps_section(m, runs, targets, plots, bars):
    lines = []
    if not runs:
        return lines
    lines += [
        "## LAMMPS, LJ melt",
        "",
        f"`lmp -in tools/apps/in.lj`, a cube of {m.get('lj_box', '?')} fcc cells a side "
        f"({int(m['lj_box']) ** 3 * 4 if m.get('lj_box', '').isdigit() else '?'} atoms), "
        f"{m.get('lj_steps', '?')} steps, one rank per node, OpenMPI's TCP BTL over the "
        "configuration's interfaces. Loop time is LAMMPS's own (\"Loop time of\"): the "
        "median of the uncut rounds, with their range; comm is the share of the loop spent "
        "in communication (LAMMPS's \"Comm\" row, rank mean; median of the rounds). Loop / "
        "compute divides each run's loop time by its own compute time (the Pair, Neigh and "
        "Modify rows): the host's steal time slows both alike, so this compares rounds that "
        "drew different host speeds (1 would be communication for free). A cut "
        "run takes n2's link 1 of the configuration down a third of the way through its "
        "median uncut loop time and back at two thirds; slowdown is its loop time over that "
        "median, and in brackets its loop / compute over the uncut rounds' median (what the "
        "targets judge: one cut run against rounds that drew other host speeds). One link is not cut (a cut of another link does not touch it).",
        "",
    ]
    for nodes in sorted({k[0] for k in runs}):
        rounds = sorted({int(k[2][6:]) for k in runs if k[0] == nodes and k[2].startswith("none-r")})
        cfgs = [c for c in CFG_NAMES if any((nodes, c, f"none-r{r}") in runs for r in rounds)]

        def loops(c):
            return [runs.get((nodes, c, f"none-r{r}"), {}).get("loop") for r in rounds]

        uncut = {c: median(loops(c)) for c in cfgs}

        def norms(c):
            out = []
            for r in rounds:
                x = runs.get((nodes, c, f"none-r{r}"), {})
                out.append(x["loop"] / x["compute"] if x.get("loop") and x.get("compute") else None)
            return out

        norm = {c: median(norms(c)) for c in cfgs}

        def nslow(c, fault):
            """A cut run's loop over its compute time, over the uncut rounds'."""
            x = runs.get((nodes, c, fault)) or {}
            if x.get("loop") and x.get("compute") and norm.get(c):
                return x["loop"] / x["compute"] / norm[c]
            return None
        lines += [
            f"### {nodes} nodes, {len(rounds)} rounds",
            "",
            "| configuration | loop (s) | steps/s | comm | loop / compute | carrier cut: loop (s) | slowdown | blackhole cut: loop (s) | slowdown |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for c in cfgs:
            ls = [x for x in loops(c) if x is not None]
            row = [CFG_NAMES[c]]
            if uncut[c]:
                row += [f"{uncut[c]:.1f} ({min(ls):.1f}–{max(ls):.1f})" + ("" if len(ls) == len(rounds) else f", {len(rounds) - len(ls)} did not finish"),
                        f"{int(m.get('lj_steps', '0') or 0) / uncut[c]:.2f}" if m.get("lj_steps", "").isdigit() else "–",
                        pct(median([runs.get((nodes, c, f"none-r{r}"), {}).get("comm") for r in rounds])),
                        (f"{norm[c]:.3f} ({min(x for x in norms(c) if x):.3f}–{max(x for x in norms(c) if x):.3f})"
                         if norm.get(c) else "–")]
            else:
                row += ["did not finish", "–", "–", "–"]
            for fault in ("carrier", "blackhole"):
                r = runs.get((nodes, c, fault))
                if r is None:
                    row += ["–", "–"]
                elif r["loop"] is None:
                    row += [f"did not finish (step {r['steps']})", "–"]
                else:
                    sn = nslow(c, fault)
                    row += [f"{r['loop']:.1f}", (f"{r['loop'] / uncut[c]:.2f} ×" if uncut[c] else "–") +
                            (f" ({sn:.2f} ×)" if sn else "")]
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")
        bars.append((nodes, [(c, uncut[c], (runs.get((nodes, c, "carrier")) or {}).get("loop"),
                              (runs.get((nodes, c, "blackhole")) or {}).get("loop")) for c in cfgs]))
        lines += [f"![LAMMPS loop time, {nodes} nodes](lammps-{nodes}-loop.png)", ""]
        # Uncut: ri2n at least as fast as the best baseline, round by round,
        # by loop time and by each run's loop over its own compute time.
        for per_round, medians, what, unit in (
                (loops, uncut, "", " s"),
                (norms, norm, ", loop over the run's own compute time", "")):
            base = [(medians[c], c) for c in BASELINES if medians.get(c)]
            if not base or not medians.get("ri2n"):
                continue
            _, bc = min(base)
            rs = [b / a for a, b in zip(per_round("ri2n"), per_round(bc)) if a and b]
            q = median(rs)
            if q:
                fmt = ".1f" if unit else ".3f"
                targets.append((f"LAMMPS {nodes} nodes uncut{what}: ri2n's speed ≥ the best baseline's ({CFG_NAMES[bc]}); median of the rounds' ratios",
                                f"{q:.3f} ×{spread(rs)}; {'loop ' if unit else ''}{medians['ri2n']:{fmt}}{unit} against {medians[bc]:{fmt}}{unit}, medians", q >= 1.0))
        for fault in ("carrier", "blackhole"):
            # Judged on loop over compute: one cut run against the uncut
            # rounds, so the host's speed must not decide it.
            slow = {c: nslow(c, fault) for c in cfgs if nslow(c, fault)}
            if "ri2n" in slow:
                others = {c: x for c, x in slow.items() if c not in ("ri2n", "ri2n-keyed")}
                ok = all(slow["ri2n"] <= x for x in others.values())
                desc = ", ".join(f"{CFG_NAMES[c]} {x:.2f}" for c, x in sorted(others.items(), key=lambda x: x[1]))
                targets.append((f"LAMMPS {nodes} nodes, {fault} cut: ri2n's slowdown (loop over compute, against uncut) the smallest of those that finish",
                                f"ri2n {slow['ri2n']:.2f} × (others: {desc or 'none finished'})", ok))
            elif (nodes, "ri2n", fault) in runs:
                targets.append((f"LAMMPS {nodes} nodes, {fault} cut: ri2n finishes", "did not finish", False))
        for fault in ("carrier", "blackhole"):
            name = f"lammps-{nodes}-{fault}.png"
            series = []
            for c in cfgs:
                tl = timeline(nodes, c, fault if c != "single" else f"none-r{rounds[0]}")
                if tl and tl["points"] and uncut[c]:
                    series.append((c, uncut[c], tl))
            if series:
                plots.append((name, nodes, fault, series))
                lines += [f"![LAMMPS progress, {nodes} nodes, {fault} cut]({name})", ""]
    return lines


def clients_section(targets):
    """clients.tsv: round, path, test, bytes, value; every path measured by
    turns in each round, so a ratio is taken within a round and the rounds'
    ratios give their median."""
    rows = read_tsv("clients.tsv")
    if not rows:
        return []
    val = {}
    for r, path, test, size, v in rows:
        val[(int(r), path, test, size)] = fnum(v)
    rounds = sorted({k[0] for k in val})
    paths = [p for p in CFG_NAMES if any(k[1] == p for k in val)]

    def med(path, test, size):
        return median([val[(r, path, test, size)] for r in rounds if val.get((r, path, test, size))])

    def ratios(a, b, test, size):
        """a's figure over b's, round by round."""
        return [val[(r, a, test, size)] / val[(r, b, test, size)] for r in rounds
                if val.get((r, a, test, size)) and val.get((r, b, test, size))]

    sizes = ["1", "64", "1024", "4096"]
    lines = [
        "## netperf, sockperf and tools/pingpong, 2 nodes",
        "",
        f"Every path in the same lab, measured by turns, {len(rounds)} rounds, each in "
        "another order; each figure is the median of the rounds, each ratio the median of "
        "the rounds' ratios. TCP_RR: transactions per second, one request and one response of "
        "the size at a time; pingpong: tools/pingpong's round trips per second (1 / its "
        "mean round trip) at the same size. TCP_STREAM: 10⁶ bits/s.",
        "",
        "| path | " + " | ".join(f"TCP_RR {s} B | pingpong {s} B" for s in sizes) + " | TCP_STREAM |",
        "|---|" + "---:|" * (2 * len(sizes) + 1),
    ]
    for p in paths:
        cells = []
        for sz in sizes:
            for test in ("netperf_rr", "pingpong_rr"):
                v = med(p, test, sz)
                cells.append(f"{v:.0f}" if v else "–")
        v = med(p, "netperf_stream", "-")
        cells.append(f"{v:.1f}" if v else "–")
        lines.append(f"| {CFG_NAMES[p]} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "netperf TCP_RR against tools/pingpong over the same path and size, median of the "
        "rounds' ratios (above 1: netperf counts more round trips per second).",
        "",
        "| path | " + " | ".join(f"{s} B" for s in sizes) + " |",
        "|---|" + "---:|" * len(sizes),
    ]
    for p in paths:
        cells = []
        for sz in sizes:
            rs = [val[(r, p, "netperf_rr", sz)] / val[(r, p, "pingpong_rr", sz)] for r in rounds
                  if val.get((r, p, "netperf_rr", sz)) and val.get((r, p, "pingpong_rr", sz))]
            q = median(rs)
            cells.append(f"{q:.3f}{spread(rs)}" if q else "–")
        lines.append(f"| {CFG_NAMES[p]} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "sockperf ping-pong, 64 B, full round trip (µs), medians of the rounds: p50 / p99 / p99.9.",
        "",
        "| path | UDP | TCP |",
        "|---|---:|---:|",
    ]
    for p in paths:
        cells = []
        for proto in ("udp", "tcp"):
            qs = [med(p, f"sockperf_{proto}_p{q}", "64") for q in ("50", "99", "99.900")]
            cells.append(" / ".join(f"{q:.0f}" if q else "–" for q in qs))
        lines.append(f"| {CFG_NAMES[p]} | " + " | ".join(cells) + " |")
    lines.append("")
    if "ri2n" in paths and "bond" in paths:
        for sz in sizes:
            rs = ratios("ri2n", "bond", "netperf_rr", sz)
            q = median(rs)
            if q:
                targets.append((f"netperf TCP_RR {sz} B: ri2n within 5 % of bonding (median of {len(rounds)} rounds' ratios)",
                                f"{q:.3f} × bonding's transactions/s{spread(rs)}", q >= 0.95))
        for proto in ("udp", "tcp"):
            rs = ratios("ri2n", "bond", f"sockperf_{proto}_p50", "64")
            q = median(rs)
            if q:
                targets.append((f"sockperf {proto.upper()} 64 B p50: ri2n within 5 % of bonding (median of {len(rounds)} rounds' ratios)",
                                f"{q:.3f} × bonding's round trip{spread(rs)}", q <= 1.05))
    return lines


def coll(path):
    out = {}
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) == 6 and p[0] in ("alltoall", "allreduce"):
                out[(p[0], int(p[1]))] = float(p[3])
    return out


def coll_section(targets):
    """coll-NODES-CONFIG-rROUND.txt: each round ran every configuration by
    turns; figures are medians of the rounds, ratios medians of the rounds'
    ratios."""
    files = glob.glob(os.path.join(RAW, "coll-*-r*.txt"))
    if not files:
        return []
    data = {}
    for f in files:
        mm = re.match(r"coll-(\d+)-(.+)-r(\d+)\.txt$", os.path.basename(f))
        if mm:
            data[(int(mm.group(1)), mm.group(2), int(mm.group(3)))] = coll(f)
    lines = []
    sizes = (8, 1024, 65536, 1048576)
    for nodes in sorted({k[0] for k in data}):
        rounds = sorted({k[2] for k in data if k[0] == nodes})
        cfgs = [c for c in CFG_NAMES if any(k[:2] == (nodes, c) for k in data)]

        def fig(c, op, sz):
            return [data.get((nodes, c, r), {}).get((op, sz)) for r in rounds]

        lines += [
            f"## MPI collectives, {nodes} nodes, {len(rounds)} rounds",
            "",
            "tools/mpi-coll (OSU-style): mean latency per call (µs), mean over ranks; "
            "median of the rounds.",
            "",
            "| configuration | " + " | ".join(f"{op} {sz}" for op in ("alltoall", "allreduce") for sz in ("8 B", "1 KiB", "64 KiB", "1 MiB")) + " |",
            "|---|" + "---:|" * 8,
        ]
        for c in cfgs:
            cells = []
            for op in ("alltoall", "allreduce"):
                for sz in sizes:
                    v = median(fig(c, op, sz))
                    cells.append(f"{v:.0f}" if v else "failed")
            lines.append(f"| {CFG_NAMES[c]} | " + " | ".join(cells) + " |")
        lines.append("")
        if "ri2n" in cfgs and "bond" in cfgs:
            for sz in sizes:
                rs = [b / a for a, b in zip(fig("ri2n", "alltoall", sz), fig("bond", "alltoall", sz)) if a and b]
                q = median(rs)
                if q:
                    targets.append((f"all-to-all {nodes} nodes {sz} B: ri2n at least bonding's speed (median of the rounds' ratios)",
                                    f"{q:.3f} × (bonding's latency over ri2n's){spread(rs)}", q >= 1.0))
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


def plot_bars(bars):
    """Loop time per configuration: uncut, carrier cut, blackhole cut (a run
    that did not finish has no bar)."""
    if not shutil.which("gnuplot"):
        return
    for nodes, rows in bars:
        cmds = [
            "set terminal pngcairo size 900,450",
            f"set output '{os.path.join(OUT, f'lammps-{nodes}-loop.png')}'",
            f"set title 'LAMMPS LJ melt loop time, {nodes} nodes (lower is faster)'",
            "set style data histogram",
            "set style histogram clustered gap 1",
            "set style fill solid 0.8 border -1",
            "set ylabel 'seconds'",
            "set yrange [0:*]",
            "set grid ytics",
            "set key top left",
            "set xtics rotate by -20",
            "plot '-' using 2:xtic(1) title 'uncut', '-' using 3 title 'carrier cut', '-' using 4 title 'blackhole cut'",
        ]
        data = "\n".join(
            f"\"{CFG_NAMES[c]}\" {u or 0} {cr or 0} {bh or 0}" for c, u, cr, bh in rows) + "\ne\n"
        subprocess.run(["gnuplot"], input="\n".join(cmds) + "\n" + data * 3, text=True, check=True)


def main():
    m = meta()
    targets, plots = [], []
    body = []
    bars = []
    body += lammps_section(m, lammps_runs(), targets, plots, bars)
    body += clients_section(targets)
    body += coll_section(targets)
    head = [
        "# make bench-apps: LAMMPS, netperf, sockperf and MPI collectives",
        "",
        "Made by `make bench-apps` (scripts/apps-lab.sh, scripts/apps-report.py) from "
        "raw/. Guests run under TCG, one vCPU each; every link is shaped to "
        f"{m.get('rate', '?')} on the host side. Every configuration has links of its own "
        "in the same lab, and they run by turns, each round in another order, so that the "
        "host's drift (tens of percent over minutes) falls on all alike. Absolute figures "
        "are this host's; the targets compare configurations within the lab.",
        "",
    ]
    head += [f"- {k}: {v}" for k, v in m.items()]
    head += ["", "## Targets", "", "| target | figure | |", "|---|---|---|"]
    head += [f"| {t} | {f} | {'met' if ok else '**missed**'} |" for t, f, ok in targets]
    head.append("")
    with open(os.path.join(OUT, "README.md"), "w") as f:
        f.write("\n".join(head + body) + "\n")
    plot(plots)
    plot_bars(bars)
    print("\n".join(head))


if __name__ == "__main__":
    main()
