#!/usr/bin/env python3
"""Interleaved before/after comparison of two bench_pypto binaries (per-task cost, no METG).

    benchmarks/runtime/compare_builds.py OLD/bench_pypto NEW/bench_pypto [rounds] [--queued-only]

Runs the binaries alternately (old, new, old, new, ...) so that a busy spell of a shared
machine hits both, once with the short path on (default) and once off
(BENCH_INLINE_BELOW_NS=0, the queued path), and prints the best and the median ns/task of
each pattern. --queued-only skips the short-path table. The BENCH_* environment (e.g.
BENCH_PATTERNS, BENCH_MODES, BENCH_TASKS) is passed through to both binaries.
"""
import json
import os
import statistics
import subprocess
import sys


def run(binary, env_extra):
    env = dict(os.environ, **env_extra)
    out = subprocess.run([binary, "--no-metg"], env=env, capture_output=True, text=True, check=True).stdout
    return [json.loads(l) for l in out.splitlines() if l.strip().startswith("{")]


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    queued_only = "--queued-only" in sys.argv[1:]
    old, new = args[0], args[1]
    rounds = int(args[2]) if len(args) > 2 else 7
    tables = [("short path on (default)", {}), ("queued path (BENCH_INLINE_BELOW_NS=0)", {"BENCH_INLINE_BELOW_NS": "0"})]
    if queued_only:
        tables = tables[1:]
    for label, extra in tables:
        res = {}
        for _ in range(rounds):
            for name, b in (("before", old), ("after", new)):
                for r in run(b, extra):
                    res.setdefault((r["mode"], r["pattern"]), {}).setdefault(name, []).append(r["ns_per_task"])
                    res[(r["mode"], r["pattern"])].setdefault(name + " serial", []).append(r.get("serial_fraction", 0))
        print("%s: ns/task over %d interleaved rounds, best and median" % (label, rounds))
        print("  (serial b/a: the largest fraction of a run's tasks executed on the submitting thread)")
        print("  %-8s %-11s %8s %8s %8s %8s %7s %9s" % ("mode", "pattern", "best b", "best a", "median b", "median a",
                                                        "ratio", "serial b/a"))
        for (mode, pat), d in res.items():
            b, a = statistics.median(d["before"]), statistics.median(d["after"])
            print("  %-8s %-11s %8.1f %8.1f %8.1f %8.1f %7.2f %4.2f/%4.2f" % (
                mode, pat, min(d["before"]), min(d["after"]), b, a, a / b, max(d["before serial"]), max(d["after serial"])))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
