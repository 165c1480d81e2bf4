#!/usr/bin/env python3
"""Interleaved before/after comparison of two bench_pypto binaries (per-task cost, no METG).

    benchmarks/runtime/compare_builds.py OLD/bench_pypto NEW/bench_pypto [rounds] [--queued-only] [--all-rounds]

Runs the binaries alternately, the order swapped every round (old, new; new, old; ...), so that
a busy spell of a shared machine hits both, once with the short path on (default) and once off
(BENCH_INLINE_BELOW_NS=0, the queued path). Per pattern it prints the best and the median
ns/task of each binary and the median of the per-round ratios after/before (< 1: faster).

Slow phases: some shared machines run everything ~3x slower for minutes at a time, and a
round half in such a phase says nothing about the change. A round counts only if both of its
runs were in the fast phase: the median over the patterns of (ns/task / that binary's best for
the pattern) below 1.3 (a median, so that a pattern switching between its two regimes does not
drop the round; docs/dev/queued_path.md). --all-rounds keeps every round. The BENCH_*
environment (e.g. BENCH_PATTERNS, BENCH_MODES, BENCH_TASKS) is passed through to both binaries.
"""
import json
import os
import statistics
import subprocess
import sys

FAST_PHASE = 1.3  # a run whose median pattern is this much slower than its best is in a slow phase


def run(binary, env_extra):
    env = dict(os.environ, **env_extra)
    out = subprocess.run([binary, "--no-metg"], env=env, capture_output=True, text=True, check=True).stdout
    recs = [json.loads(l) for l in out.splitlines() if l.strip().startswith("{")]
    return {(r["mode"], r["pattern"]): (r["ns_per_task"], r.get("serial_fraction") or 0.0) for r in recs}


def fast_rounds(rounds, names):
    """The rounds in which every binary's run was in the machine's fast phase (see the docstring)."""
    best = {n: {k: min(r[n][k][0] for r in rounds) for k in rounds[0][n]} for n in names}
    def fast(r, n):
        return statistics.median(r[n][k][0] / best[n][k] for k in r[n]) < FAST_PHASE
    return [r for r in rounds if all(fast(r, n) for n in names)]


def table(label, old, new, rounds, extra, all_rounds):
    recs = []
    for i in range(rounds):
        order = (("before", old), ("after", new)) if i % 2 == 0 else (("after", new), ("before", old))
        recs.append({name: run(b, extra) for name, b in order})
    used = recs if all_rounds else fast_rounds(recs, ("before", "after"))
    dropped = "" if len(used) == rounds else " (the others had a run in a slow phase)"
    print("%s: ns/task, %d of %d interleaved rounds%s" % (label, len(used), rounds, dropped))
    if not used:
        print("  no round had both runs in the fast phase: rerun, or pass --all-rounds")
        return
    print("  (ratio: median of the per-round after/before ratios; serial b/a: the median fraction of a run's")
    print("   tasks executed on the submitting thread)")
    print("  %-8s %-11s %8s %8s %8s %8s %7s %11s" % ("mode", "pattern", "best b", "best a", "median b", "median a",
                                                    "ratio", "serial b/a"))
    for key in used[0]["before"]:
        b = [r["before"][key][0] for r in used]
        a = [r["after"][key][0] for r in used]
        sb = statistics.median(r["before"][key][1] for r in used)
        sa = statistics.median(r["after"][key][1] for r in used)
        ratio = statistics.median(y / x for x, y in zip(b, a))
        print("  %-8s %-11s %8.1f %8.1f %8.1f %8.1f %7.3f %5.2f/%4.2f" % (
            key[0], key[1], min(b), min(a), statistics.median(b), statistics.median(a), ratio, sb, sa))
    sys.stdout.flush()


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    flags = {a for a in sys.argv[1:] if a.startswith("--")}
    if len(args) < 2:
        sys.exit(__doc__)
    old, new = args[0], args[1]
    rounds = int(args[2]) if len(args) > 2 else 7
    tables = [("short path on (default)", {}), ("queued path (BENCH_INLINE_BELOW_NS=0)", {"BENCH_INLINE_BELOW_NS": "0"})]
    if "--queued-only" in flags:
        tables = tables[1:]
    for label, extra in tables:
        table(label, old, new, rounds, extra, "--all-rounds" in flags)


if __name__ == "__main__":
    main()
