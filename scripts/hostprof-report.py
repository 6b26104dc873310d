#!/usr/bin/env python3
"""The report of scripts/hostprof-lab.sh: the host's CPU time per 64 B
round trip, per path, by where it went: guest code (by guest function,
from QEMU's perf map, which names each guest instruction's
translated code), QEMU's dispatch between translated blocks, the rest
of QEMU, its libraries, and the host kernel; then what ri2n0 adds over one
link and over bonding.

    hostprof-report.py DIR [TOP] [INSNS_REPORT]

DIR holds `runs` ("PATH ROUND ROUNDTRIPS SECS PERIOD_US" lines), `pids` ("PID
NODE"), NODE.kallsyms, qemu.syms (`nm -D` of QEMU) and, per run,
PATH-ROUND.txt.gz (`perf script -F pid,tid,ip,sym,symoff,dso`). With INSNS_REPORT (a
`make insns` report.txt), also the nanoseconds per guest instruction of
the kernel functions every path runs."""
import bisect
import collections
import gzip
import importlib.util
import os
import re
import sys


# Where a sample in QEMU's own code is charged: finding the next block
# when a block ends in an indirect jump or a return, or in a jump to
# another page (helper_lookup_tb_ptr, and the hash table behind its
# per-vCPU cache).
DISPATCH = {"helper_lookup_tb_ptr", "qht_lookup_custom", "tb_htable_lookup", "curr_cflags"}


def insns_report_module():
    spec = importlib.util.spec_from_file_location(
        "insns_report_funcs", os.path.join(os.path.dirname(__file__), "insns-report.py"))
    src = open(spec.origin).read().replace("\nmain()\n", "\n")
    mod = importlib.util.module_from_spec(spec)
    exec(compile(src, spec.origin, "exec"), mod.__dict__)
    return mod


IR = insns_report_module()


def qemu_symbols(path):
    addrs, names = [], []
    if os.path.exists(path):
        for line in open(path):
            f = line.split()
            if len(f) >= 3 and f[1] in "tT":
                addrs.append(int(f[0], 16))
                names.append(f[2])
    order = sorted(range(len(addrs)), key=addrs.__getitem__)
    return [addrs[i] for i in order], [names[i] for i in order]


def category(key):
    return key.split(" ", 1)[0]


def charge(d):
    """Samples per path: Counter of 'KIND name' -> samples, and round trips."""
    pids = dict(line.split() for line in open(os.path.join(d, "pids")))
    syms = {n: IR.symbols(os.path.join(d, n + ".kallsyms")) for n in set(pids.values())}
    qaddrs, qnames = qemu_symbols(os.path.join(d, "qemu.syms"))
    samples, rts, secs = collections.defaultdict(collections.Counter), collections.Counter(), collections.Counter()
    rounds = []
    line_re = re.compile(r"\s*(\d+)(?:/\d+)?\s+([0-9a-f]+)\s+(.*?)\s*\((.*)\)\s*$")
    qsym = dict(zip(qnames, qaddrs))
    for run in open(os.path.join(d, "runs")):
        path, rnd, rt, sec, period = run.split()
        rts[path] += int(rt)
        secs[path] += float(sec)
        c = collections.Counter()
        text = gzip.open(os.path.join(d, f"{path}-{rnd}.txt.gz"), "rt").read().splitlines()
        lines = [m.groups() for m in map(line_re.match, text) if m]
        if len(lines) != len(text):
            sys.exit(f"{path}-{rnd}: {len(text) - len(lines)} of {len(text)} perf script lines not understood")
        # Where each QEMU is loaded (ASLR), from its samples in named
        # functions: its samples in unnamed ones are then named by the
        # exported function before them.
        base = {}
        for pid, ip, sym, dso in lines:
            f = re.match(r"([A-Za-z_][\w.]*)\+0x([0-9a-f]+)$", sym)
            if "qemu-system" in dso and f and f.group(1) in qsym:
                base.setdefault(pid, int(ip, 16) - qsym[f.group(1)] - int(f.group(2), 16))
        for pid, ip, sym, dso in lines:
            g = re.match(r"guest-0x([0-9a-f]+)", sym)
            pm = re.search(r"perf-(\d+)\.map", dso)
            if g and pm and pm.group(1) in pids:
                addrs, names = syms[pids[pm.group(1)]]
                a = int(g.group(1), 16)
                i = bisect.bisect_right(addrs, a) - 1
                c["guest " + ("[user]" if a < IR.KERNEL else names[i] if i >= 0 else "[unknown]")] += 1
            elif pm:
                # The prologue, and code after a block's last instruction
                # (its exits to other blocks, the soft TLB's slow paths):
                # the map names only the guest instructions' code.
                c["tcg glue"] += 1
            elif "qemu-system" in dso:
                name = sym.split("+")[0]
                if name.startswith("[unknown]") or name.startswith("0x"):
                    name = "?"
                    if pid in base and qaddrs:
                        i = bisect.bisect_right(qaddrs, int(ip, 16) - base[pid]) - 1
                        name = f"(after {qnames[i]})" if i >= 0 else "?"
                c[("dispatch " if name in DISPATCH else "qemu ") + name] += 1
            elif dso.startswith("[kernel") or dso.startswith("[vdso"):
                c["host " + sym.split("+")[0]] += 1
            else:
                c["lib " + os.path.basename(dso)] += 1
        jit = sum(v for k, v in c.items() if k.startswith("guest ") or k == "tcg glue")
        if jit and c["tcg glue"] > jit / 2:
            sys.exit(f"{path}-{rnd}: {c['tcg glue']} of {jit} samples in translated code name no guest"
                     " instruction: were QEMU's perf maps gone when perf script ran?")
        us = float(period)
        samples[path].update({k: v * us for k, v in c.items()})
        rounds.append((path, rnd, float(sec) * 1e6 / int(rt), sum(c.values()) * us / int(rt)))
    per = {p: collections.Counter({k: v / rts[p] for k, v in c.items()}) for p, c in samples.items()}
    return per, rts, secs, rounds


def insns_per_rt(path):
    """Instructions per round trip by function and path (both nodes),
    from a `make insns` report."""
    per, cur = collections.defaultdict(collections.Counter), None
    for line in open(path):
        m = re.match(r"## rr64 over (\w+):", line)
        if line.startswith("## "):
            cur = m.group(1) if m else None
            continue
        m = re.match(r"\s+([\d,]+)\s+[\d.]+\s+[\d,]*\s+(\S.*?)\s*$", line)
        if cur and m:
            per[cur][m.group(2)] += int(m.group(1).replace(",", ""))
    return per


def main():
    d = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    per, rts, secs, rounds = charge(d)
    paths = [p for p in ("one", "bond", "ri2n") if p in per]
    kinds = ("guest", "tcg", "dispatch", "qemu", "lib", "host")
    print("## Host CPU time per 64 B round trip (both QEMUs; perf, cpu-clock)")
    print(f"{'path':6} {'rt µs':>7} {'sampled':>8} " + " ".join(f"{k:>8}" for k in kinds))
    for p in paths:
        by = collections.Counter()
        for k, v in per[p].items():
            by[category(k)] += v
        wall = secs[p] * 1e6 / rts[p]
        print(f"{p:6} {wall:7.1f} {sum(by.values()):8.1f} " + " ".join(f"{by[k]:8.1f}" for k in kinds))
    print("(rt µs: the stretch over its round trips; sampled: CPU time charged per round trip,"
          " both QEMUs' threads; guest: translated code, by the guest function it runs;"
          " tcg: translated code between guest instructions' (block exits, soft-TLB slow paths);"
          " dispatch: QEMU's functions that find the next block, those it exports (a lower bound);"
          " host: the host kernel, where samples wait for interrupts to be on)")
    print("\nBy round (rt µs / sampled µs):")
    for p in paths:
        print(f"  {p:6} " + "  ".join(f"{w:6.1f} / {c:6.1f}" for q, _, w, c in rounds if q == p))
    for other in ("one", "bond"):
        if "ri2n" not in per or other not in per:
            continue
        r, o = per["ri2n"], per[other]
        diff = {k: r.get(k, 0) - o.get(k, 0) for k in set(r) | set(o)}
        print(f"\n## ri2n0 minus {other}, µs per round trip: {sum(r.values()):.1f} against"
              f" {sum(o.values()):.1f} ({sum(diff.values()):+.1f}); largest differences:")
        for k, v in sorted(diff.items(), key=lambda kv: -abs(kv[1]))[:top]:
            print(f"  {v:+8.2f}  {o.get(k, 0):7.2f} -> {r.get(k, 0):7.2f}  {k}")
        mod = sum(v for k, v in r.items() if k.startswith("guest ") and k.endswith("[ri2n]"))
        print(f"  (ri2n's module code itself: {mod:.1f} µs per round trip)")
    if len(sys.argv) > 3:
        ins = insns_per_rt(sys.argv[3])
        if "one" not in paths or any(p not in ins for p in paths):
            sys.exit("ns per instruction: the insns report and this run need one link and the same paths")
        common = [f for f in ins["one"] if not f.endswith("]") and all(ins[p].get(f, 0) >= 100 for p in paths)]
        common.sort(key=lambda f: -ins["one"][f])
        ns = {p: {f: per[p].get("guest " + f, 0) * 1000 / ins[p][f] for f in common} for p in paths}
        print("\n## The same kernel functions, ns per guest instruction (instructions from the insns report,"
              " both nodes; only functions in each node's list there)")
        print(f"  {'instr/rt':>8}  " + "  ".join(f"{p:>6}" for p in paths) + "  function")
        for f in common[:top]:
            print(f"  {ins['one'][f]:8,d}  " + "  ".join(f"{ns[p][f]:6.2f}" for p in paths) + f"  {f}")
        # Each path's ns per instruction weighed by one link's mix, so that
        # a path running more of a dear function does not count as slower.
        mix = sum(ins["one"][f] for f in common)
        print(f"  {'all':>8}  " + "  ".join(f"{sum(ns[p][f] * ins['one'][f] for f in common) / mix:6.2f}" for p in paths)
              + f"  ({len(common)} functions, {mix:,} instructions per round trip over one link, weighed by its mix)")


main()
