"""Time, breakdown and peak memory of ``pypto trace summary`` (pypto.trace_summary) on real traces.

    python benchmarks/trace_summary_bench.py [--tasks 10000,100000,1000000] [--rounds 3]
                                             [--python-max 100000] [--profile 100000] [--cache DIR]

The traces come from the runtime: a compiled program (TraceBench below: per iteration a
producer, two accumulators fed by it and two steps joining them, 4 AIV workers) run with
``trace=``. They are cached in DIR (default: $TMPDIR/pypto-trace-summary-bench; a 1,000,000-task
trace is ~740 MB) and rewritten when missing. Each measurement runs in a fresh process (so the
peak RSS is the summary's own; the trace file mapped by libpto2 counts in it) and the minimum of
the rounds is printed:

- ``summarize`` + ``format``: what ``pypto trace summary`` costs, and libpto2's phases (parse and
  group the events, order the tasks and kernels, the critical path) and the Python objects;
- the Python readers (the fallback for other layouts, and all of it before libpto2 read traces;
  up to --python-max tasks, one run per round interleaved with libpto2's): the line reader
  (parse and group), the order and per-kernel / per-worker tables, the critical path, format,
  and the median over rounds of their time over libpto2's.

Then a cProfile of the Python readers on the --profile trace (0: none). Prints figures, asserts nothing.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

S = 16
TASKS_PER_ITERATION = 5

_CHILD = r"""
import json, resource, sys, time
import pypto.trace_summary as ts
from pypto._core import trace_reader
from pypto.runtime import library_path
path, which = sys.argv[1], sys.argv[2]
out = {}
if which == "native":
    t0 = time.perf_counter()
    result, why = trace_reader.read(library_path(), path.encode(), ts.TaskSpan)
    out["read"] = time.perf_counter() - t0
    assert result is not None, why
    out.update(result[6])
    del result
    t0 = time.perf_counter()
    s = ts.summarize(path)
    t1 = time.perf_counter()
    text = s.format()
    out["summarize"], out["format"] = t1 - t0, time.perf_counter() - t1
else:
    t0 = time.perf_counter()
    acc = ts._Accumulator(path)
    ts._read_libpto2_layout(path, acc)
    t1 = time.perf_counter()
    cp = ts._critical_path(acc.tasks, acc.edges)
    t2 = time.perf_counter()
    ts._critical_path = lambda tasks, edges: cp   # the rest of acc.summary() alone
    s = acc.summary()
    t3 = time.perf_counter()
    text = s.format()
    out.update(parse=t1 - t0, critical_path=t2 - t1, order=t3 - t2, format=time.perf_counter() - t3)
    out["summarize"] = t3 - t0
out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
print(json.dumps(out))
"""


def _program():
    import pypto.language as pl

    @pl.program
    class TraceBench:
        @pl.function(type=pl.FunctionType.InCore)
        def produce(self, x: pl.Tensor[[S, S], pl.FP32],
                    tmp: pl.Out[pl.Tensor[[S, S], pl.FP32]]) -> pl.Tensor[[S, S], pl.FP32]:
            tmp = pl.store(pl.add(pl.load(x, [0, 0], [S, S]), pl.load(x, [0, 0], [S, S])), [0, 0], tmp)
            return tmp

        @pl.function(type=pl.FunctionType.InCore)
        def step(self, tmp: pl.Tensor[[S, S], pl.FP32],
                 acc: pl.InOut[pl.Tensor[[S, S], pl.FP32]]) -> pl.Tensor[[S, S], pl.FP32]:
            acc = pl.store(pl.add(pl.load(acc, [0, 0], [S, S]), pl.load(tmp, [0, 0], [S, S])), [0, 0], acc)
            return acc

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[S, S], pl.FP32], a: pl.InOut[pl.Tensor[[S, S], pl.FP32]],
                 b: pl.InOut[pl.Tensor[[S, S], pl.FP32]], c: pl.InOut[pl.Tensor[[S, S], pl.FP32]],
                 n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[S, S], pl.FP32]:
            for i in pl.range(n):
                tmp = pl.create_tensor([S, S], dtype=pl.FP32)
                tmp = self.produce(x, tmp)
                a = self.step(tmp, a)
                b = self.step(tmp, b)
                c = self.step(a, c)
                c = self.step(b, c)
            return c
    return TraceBench


def make_trace(path: str, tasks: int) -> None:
    """Runs TraceBench for `tasks` tasks (a multiple of 5) with trace=`path`."""
    import pypto
    z = lambda: np.zeros((S, S), np.float32)  # noqa: E731
    stats = pypto.compile(_program())(np.ones((S, S), np.float32), z(), z(), z(), tasks // TASKS_PER_ITERATION,
                                      trace=path, aiv_workers=4)
    assert stats.tasks == tasks, stats


def _run(path: str, which: str) -> dict:
    import json
    return json.loads(subprocess.run([sys.executable, "-c", _CHILD, path, which], capture_output=True, text=True,
                                     check=True).stdout)


def _measure(path: str, rounds: int, python: bool):
    """Per-key minima of `rounds` fresh processes of libpto2's reader and, interleaved with them
    (one of each per round), of the Python readers; and the median per-round time ratio."""
    import statistics
    nat, py = [], []
    for _ in range(rounds):
        nat.append(_run(path, "native"))
        if python:
            py.append(_run(path, "python"))
    best = lambda runs: {k: min(r[k] for r in runs) for k in runs[0]}  # noqa: E731
    ratio = statistics.median((a["summarize"] + a["format"]) / (b["summarize"] + b["format"])
                              for a, b in zip(py, nat)) if py else None
    return best(nat), (best(py) if py else None), ratio


def _profile(path: str) -> None:
    """cProfile of the Python readers (libpto2's is one call) on the trace at `path`."""
    import cProfile
    import pstats
    import pypto.trace_summary as ts

    def python_readers():
        acc = ts._Accumulator(path)
        ts._read_libpto2_layout(path, acc)
        acc.summary().format()
    prof = cProfile.Profile()
    prof.runcall(python_readers)
    print("cProfile of the Python readers on %s:" % os.path.basename(path))
    pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(12)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", default="10000,100000,1000000", help="comma-separated trace sizes (tasks, multiples of 5)")
    ap.add_argument("--rounds", type=int, default=3, help="runs per size (the minimum is reported)")
    ap.add_argument("--python-max", type=int, default=100000, help="largest trace the Python readers are timed on")
    ap.add_argument("--profile", type=int, default=100000, help="cProfile summarize() on this size (0: none)")
    ap.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "pypto-trace-summary-bench"),
                    help="where the traces are kept")
    args = ap.parse_args(argv)
    os.makedirs(args.cache, exist_ok=True)
    rows = []
    for n in (int(s) for s in args.tasks.split(",")):
        path = os.path.join(args.cache, "trace_%d.json" % n)
        if not os.path.exists(path):
            make_trace(path + ".tmp", n)
            os.replace(path + ".tmp", path)
        mb = os.path.getsize(path) / 1e6
        nat, py, ratio = _measure(path, args.rounds, n <= args.python_max)
        objects = nat["read"] - nat["parse"] - nat["order"] - nat["critical_path"]
        print("trace summary: %7d tasks (%5.0f MB): %6.3f s summarize + %5.3f s format, %5.0f MB peak RSS | libpto2: "
              "parse+group %.3f s, order %.3f s, critical path %.3f s; Python objects %.3f s (min of %d)"
              % (n, mb, nat["summarize"], nat["format"], nat["rss_mb"], nat["parse"], nat["order"],
                 nat["critical_path"], objects, args.rounds), flush=True)
        row = {"tasks": n, "mb": mb, "seconds": nat["summarize"] + nat["format"], "rss_mb": nat["rss_mb"]}
        if py:
            row["python_seconds"] = py["summarize"] + py["format"]
            print("  Python readers (the fallback):  %6.3f s summarize + %5.3f s format, %5.0f MB peak RSS | "
                  "parse+group %.3f s, order %.3f s, critical path %.3f s: median per-round ratio %.1fx"
                  % (py["summarize"], py["format"], py["rss_mb"], py["parse"], py["order"], py["critical_path"],
                     ratio), flush=True)
        rows.append(row)
        if n == args.profile:
            _profile(path)
    return rows


if __name__ == "__main__":
    main()
