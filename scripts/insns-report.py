#!/usr/bin/env python3
"""The report of scripts/insns-lab.sh: guest instructions per 64 B round
trip (rr64) or per MiB sent (bulk), per path and node, by function (with
its calls per unit and instructions per call), and where ri2n0's differ
from the other paths'.

    insns-report.py DIR [TOP]

DIR holds runs ("WORK PATH TAP..." lines), NODE.kallsyms, and for each run
the snapshots WORK-PATH-{a,b}.{n1,n2} and the taps' counters
WORK-PATH-{a,b}.taps ("tap rx_packets rx_bytes": a tap's rx is what its
guest sent)."""
import bisect
import collections
import os
import re
import subprocess
import sys

KERNEL = 0xFFFF800000000000


def demangle(names):
    """Rust symbols as paths, without crate hashes or generic arguments."""
    try:
        out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True).stdout.split("\n")
    except OSError:
        return names
    short = []
    for n, d in zip(names, out):
        d = re.sub(r"\[[0-9a-f]{16}\]", "", d)
        while True:  # generic arguments: <...> right after a name
            e = re.sub(r"(?<=[A-Za-z0-9_])<[^<>]*>", "", d)
            if e == d:
                break
            d = e
        d = re.sub(r"<([^<>]*)>", r"\1", d)  # <Type as Trait>::f
        short.append(d.replace("ri2n_drv::", "") if n.startswith("_R") else n)
    return short


def symbols(path):
    addrs, names, mods = [], [], []
    for line in open(path):
        f = line.split()
        if len(f) < 3 or f[1] not in "tTwW":
            continue
        a = int(f[0], 16)
        if a == 0:
            continue
        addrs.append(a)
        names.append(f[2])
        mods.append(" " + f[3] if len(f) > 3 else "")
    names = [n + m for n, m in zip(demangle(names), mods)]
    order = sorted(range(len(addrs)), key=addrs.__getitem__)
    return [addrs[i] for i in order], [names[i] for i in order]


def blocks(path):
    d = {}
    for line in open(path):
        v, n, e = line.split()
        d[(int(v, 16), int(n))] = int(e)
    return d


def taps(path):
    d = {}
    for line in open(path):
        t, p, b = line.split()
        d[t] = (int(p), int(b))
    return d


def by_function(before, after, syms):
    """Instructions by function, and calls: executions of the block at
    the function's first address (a loop back to it would count too)."""
    addrs, names = syms
    out, calls = collections.Counter(), collections.Counter()
    for k, e in after.items():
        e -= before.get(k, 0)
        if e <= 0:
            continue
        v, n = k
        if v < KERNEL:
            name = "[user]"
        else:
            i = bisect.bisect_right(addrs, v) - 1
            name = names[i] if i >= 0 else "[unknown]"
            if i >= 0 and addrs[i] == v:
                calls[name] += e
        out[name] += n * e
    return out, calls


def module_of(name):
    m = re.search(r" (\[[^]]+\])$", name)
    return m.group(1) if m else ("[user]" if name == "[user]" else "[vmlinux]")


def main():
    d = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    syms = {n: symbols(os.path.join(d, n + ".kallsyms")) for n in ("n1", "n2")}
    per = {}  # (work, path, node) -> Counter of instructions per unit
    for line in open(os.path.join(d, "runs")):
        work, path, *tp = line.split()
        base = os.path.join(d, f"{work}-{path}")
        ta, tb = taps(base + "-a.taps"), taps(base + "-b.taps")
        sent = {n: [tb[f"{n}{t}"][i] - ta[f"{n}{t}"][i] for t in tp for i in (0, 1)] for n in ("n1", "n2")}
        frames = {n: sum(sent[n][0::2]) for n in sent}
        if work == "rr64":
            units, unit = min(frames.values()), "round trip"
        elif work.startswith("rr"):
            # A message of several frames: n1 writes each with one
            # tcp_sendmsg (its calls, counted below), and waits for the
            # answer before the next.
            c, calls = by_function(blocks(f"{base}-a.n1"), blocks(f"{base}-b.n1"), syms["n1"])
            units, unit = calls["tcp_sendmsg"], "round trip"
        else:
            units, unit = sum(sent["n1"][1::2]) / 2**20, "MiB"
        print(f"## {work} over {path}: {units:.0f} {unit}s in the stretch"
              f" (frames sent n1 {frames['n1']}, n2 {frames['n2']})")
        for node in ("n1", "n2"):
            c, calls = by_function(blocks(f"{base}-a.{node}"), blocks(f"{base}-b.{node}"), syms[node])
            c = collections.Counter({k: v / units for k, v in c.items()})
            per[(work, path, node)] = c
            mods = collections.Counter()
            for k, v in c.items():
                mods[module_of(k)] += v
            total = sum(c.values())
            print(f"{node}: {total:,.0f} instructions per {unit}; "
                  + ", ".join(f"{m} {v:,.0f}" for m, v in mods.most_common(6)))
            print(f"  {'instr':>10}  {'calls':>7}  {'each':>6}  (per {unit})")
            for k, v in c.most_common(top):
                n = calls.get(k, 0)
                each = f"{v * units / n:6,.0f}" if n else f"{'':6}"
                print(f"  {v:>10,.0f}  {n / units:7.2f}  {each}  {k}")
        print()
    for work in sorted({w for w, _, _ in per}):
        for other in ("bond", "one"):
            if (work, "ri2n", "n1") not in per or (work, other, "n1") not in per:
                continue
            unit = "round trip" if work.startswith("rr") else "MiB"
            print(f"## {work}: ri2n0 minus {other}, instructions per {unit}")
            for node in ("n1", "n2"):
                r, o = per[(work, "ri2n", node)], per[(work, other, node)]
                diff = collections.Counter({k: r.get(k, 0) - o.get(k, 0) for k in set(r) | set(o)})
                print(f"{node}: {sum(r.values()):,.0f} against {sum(o.values()):,.0f}"
                      f" ({sum(diff.values()):+,.0f}); largest differences:")
                for k, v in sorted(diff.items(), key=lambda kv: -abs(kv[1]))[:top]:
                    print(f"  {v:>+10,.0f}  {k}")
            print()


main()
