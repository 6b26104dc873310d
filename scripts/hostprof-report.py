#!/usr/bin/env python3
"""The report of scripts/hostprof-lab.sh: the host's CPU time per 64 B
round trip, per path, by where it went: guest code (by guest function,
from QEMU's perf map), QEMU's dispatch between translated blocks, the rest
of QEMU, its libraries, and the host kernel; then what ri2n0 adds over one
link and over bonding.

    hostprof-report.py DIR [TOP] [INSNS_REPORT]

DIR holds `runs` ("PATH ROUND ROUNDTRIPS SECS" lines), `pids` ("PID
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

HZ = 4000  # perf record -F
SAMPLE_US = 1e6 / HZ

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
    line_re = re.compile(r"\s*(\d+)/\d+\s+([0-9a-f]+)\s+(.*?)\s*\((.*)\)\s*$")
    qsym = dict(zip(qnames, qaddrs))
    for run in open(os.path.join(d, "runs")):
        path, rnd, rt, sec = run.split()
        rts[path] += int(rt)
        secs[path] += float(sec)
        c = samples[path]
        lines = [m.groups() for m in map(line_re.match, gzip.open(os.path.join(d, f"{path}-{rnd}.txt.gz"), "rt")) if m]
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
                i = bisect.bisect_right(addrs, int(g.group(1), 16)) - 1
                c["guest " + (names[i] if i >= 0 else "[unknown]")] += 1
            elif pm:
                c["guest [tcg]"] += 1  # the prologue, or a block the map has not named
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
    per = {p: collections.Counter({k: v * SAMPLE_US / rts[p] for k, v in c.items()}) for p, c in samples.items()}
    return per, rts, secs


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
    per, rts, secs = charge(d)
    paths = [p for p in ("one", "bond", "ri2n") if p in per]
    kinds = ("guest", "dispatch", "qemu", "lib", "host")
    print("## Host CPU time per 64 B round trip (both QEMUs; perf at 4 kHz)")
    print(f"{'path':6} {'rt µs':>7} {'sampled':>8} " + " ".join(f"{k:>8}" for k in kinds))
    for p in paths:
        by = collections.Counter()
        for k, v in per[p].items():
            by[category(k)] += v
        wall = secs[p] * 1e6 / rts[p]
        print(f"{p:6} {wall:7.1f} {sum(by.values()):8.1f} " + " ".join(f"{by[k]:8.1f}" for k in kinds))
    print("(rt µs: the stretch over its round trips; sampled: CPU time charged per round trip,"
          " both QEMUs' threads; guest: translated code, by the guest function it runs;"
          " dispatch: finding the next translated block; host: the host kernel)")
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
        common = [f for f in ins.get("one", {})
                  if not f.endswith("]") and all(ins[p].get(f, 0) >= 100 and per[p].get("guest " + f, 0) > 0 for p in paths)]
        common.sort(key=lambda f: -ins["one"][f])
        print("\n## The same kernel functions, ns per guest instruction (instructions from the insns report)")
        print(f"  {'instr/rt':>8}  " + "  ".join(f"{p:>6}" for p in paths) + "  function")
        for f in common[:top]:
            print(f"  {ins['one'][f]:8,d}  " + "  ".join(f"{per[p]['guest ' + f] * 1000 / ins[p][f]:6.2f}" for p in paths) + f"  {f}")
        tot = {p: (sum(per[p]["guest " + f] for f in common) * 1000, sum(ins[p][f] for f in common)) for p in paths}
        print(f"  {'all':>8}  " + "  ".join(f"{t / n:6.2f}" for t, n in tot.values())
              + f"  ({len(common)} functions, {tot[paths[0]][1]:,} instructions per round trip over one link)")


main()
