#!/usr/bin/env python3
"""Interleaved before/after comparison of two bench_pypto binaries (per-task cost, no METG).

    benchmarks/runtime/compare_builds.py OLD/bench_pypto NEW/bench_pypto [rounds]

Runs the binaries alternately (old, new, old, new, ...) so that a busy spell of a shared
machine hits both, once with the short path on (default) and once off
(BENCH_INLINE_BELOW_NS=0, the queued path), and prints the median ns/task of each pattern.
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
    old, new = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 7
    for label, extra in (("short path on (default)", {}), ("queued path (BENCH_INLINE_BELOW_NS=0)",
                                                           {"BENCH_INLINE_BELOW_NS": "0"})):
        res = {}
        for _ in range(rounds):
            for name, b in (("before", old), ("after", new)):
                for r in run(b, extra):
                    res.setdefault((r["mode"], r["pattern"]), {}).setdefault(name, []).append(r["ns_per_task"])
        print("%s: median ns/task of %d interleaved rounds" % (label, rounds))
        print("  %-8s %-11s %8s %8s %7s" % ("mode", "pattern", "before", "after", "ratio"))
        for (mode, pat), d in res.items():
            b, a = statistics.median(d["before"]), statistics.median(d["after"])
            print("  %-8s %-11s %8.1f %8.1f %7.2f" % (mode, pat, b, a, a / b))


if __name__ == "__main__":
    main()
