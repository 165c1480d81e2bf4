"""The same stripe program in AUTO and MANUAL dependency form, on libpto2.

    python benchmarks/manual_vs_auto.py [--quick] [--phases P] [--branches B] [--width W]

Program: P phases x B branches; each task reads a 16-row stripe of `data` and writes the same
stripe of `out` (exp(t) + t). Every task names the whole `out` tensor as InOut, so:

  AUTO    automatic tracking sees every task write `out`: one chain of P*B tasks (each waits
          for the previous writer), no explicit edges.
  MANUAL  `with pl.manual_scope()` + a TaskId carried through `pl.range(P)` x `pl.parallel(B)`
          (the case1 fence of the spec): the B branches of a phase run in parallel, each phase
          waits for all B tasks of the previous one through one dummy barrier
          (ExpandManualPhaseFence): B + B explicit edges per phase instead of B * B.

Reports, per form: tasks (kernel + dummy), wall time of the run and per task, mean kernel
time per task (from a traced run), automatic and explicit dependency edges (libpto2
RunStats), and checks the result against NumPy.
`main(argv)` returns the rows (benchmarks/run_all.py calls it).
"""
import argparse
import statistics
import sys
import time

import numpy as np

AUTO = '''
import pypto.language as pl

@pl.program
class StripesAuto:
    @pl.function(type=pl.FunctionType.InCore)
    def stripe(self, data: pl.Tensor[[{rows}, {w}], pl.FP32], row: pl.Scalar[pl.INDEX],
               out: pl.InOut[pl.Tensor[[{rows}, {w}], pl.FP32]]) -> pl.Tensor[[{rows}, {w}], pl.FP32]:
        t = pl.load(data, [row, 0], [16, {w}])
        out = pl.store(pl.add(pl.exp(t), t), [row, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, data: pl.Tensor[[{rows}, {w}], pl.FP32],
             out: pl.InOut[pl.Tensor[[{rows}, {w}], pl.FP32]]) -> pl.Tensor[[{rows}, {w}], pl.FP32]:
        for phase in pl.range({p}):
            for branch in pl.parallel({b}):
                row = (phase * {b} + branch) * 16
                out = self.stripe(data, row, out)
        return out
'''

MANUAL = '''
import pypto.language as pl

@pl.program
class StripesManual:
    @pl.function(type=pl.FunctionType.InCore)
    def stripe(self, data: pl.Tensor[[{rows}, {w}], pl.FP32], row: pl.Scalar[pl.INDEX],
               out: pl.InOut[pl.Tensor[[{rows}, {w}], pl.FP32]]) -> pl.Tensor[[{rows}, {w}], pl.FP32]:
        t = pl.load(data, [row, 0], [16, {w}])
        out = pl.store(pl.add(pl.exp(t), t), [row, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, data: pl.Tensor[[{rows}, {w}], pl.FP32],
             out: pl.InOut[pl.Tensor[[{rows}, {w}], pl.FP32]]) -> pl.Tensor[[{rows}, {w}], pl.FP32]:
        with pl.manual_scope():
            prev_tid = None
            for phase in pl.range({p}):
                for branch in pl.parallel({b}):
                    row = (phase * {b} + branch) * 16
                    out, prev_tid = pl.submit(self.stripe, data, row, out, deps=[prev_tid])
        return out
'''


def run_form(name, template, p, b, w, repeats, workers):
    import pypto
    import pypto.language as pl
    rows = p * b * 16
    prog = pl.parse_program(template.format(rows=rows, w=w, p=p, b=b), f"<{name}>")
    t0 = time.perf_counter()
    compiled = pypto.compile(prog)
    compile_s = time.perf_counter() - t0
    data = np.random.default_rng(0).random((rows, w), dtype=np.float32)
    want = np.exp(data) + data
    walls, stats = [], None
    for _ in range(repeats):
        out = np.zeros((rows, w), np.float32)
        stats = compiled(data, out, aiv_workers=workers)
        walls.append(stats.wall_seconds)
        np.testing.assert_allclose(out, want, rtol=1e-5)
    wall = statistics.median(walls)
    # mean kernel time per task, from a traced run
    import json
    import os
    import tempfile
    fd, trace = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    compiled(data, np.zeros((rows, w), np.float32), aiv_workers=workers, trace=trace)
    with open(trace) as f:
        ev = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "task"]
    os.unlink(trace)
    kernel_us = statistics.mean(e["dur"] for e in ev) if ev else 0.0
    return {
        "form": name, "tasks": stats.tasks, "dummy": stats.tasks_dummy, "wall_ms": wall * 1e3,
        "us_per_task": wall * 1e6 / max(1, stats.tasks), "kernel_us": kernel_us, "auto_edges": stats.auto_edges,
        "explicit_edges": stats.explicit_edges, "compile_s": compile_s,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--phases", type=int, default=8)
    ap.add_argument("--branches", type=int, default=4)
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--workers", type=int, default=4, help="AIV worker threads")
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    repeats = 3 if args.quick else 15
    p = 4 if args.quick else args.phases
    rows = [run_form("AUTO", AUTO, p, args.branches, args.width, repeats, args.workers),
            run_form("MANUAL", MANUAL, p, args.branches, args.width, repeats, args.workers)]
    print("manual_vs_auto: %d phases x %d branches, stripe 16x%d, %d AIV workers, median of %d runs"
          % (p, args.branches, args.width, args.workers, repeats))
    print("%-7s %6s %6s %10s %12s %14s %11s %15s" % ("form", "tasks", "dummy", "wall ms", "wall us/task",
                                                      "kernel us/task", "auto edges", "explicit edges"))
    for r in rows:
        print("%-7s %6d %6d %10.3f %12.2f %14.2f %11d %15d" % (
            r["form"], r["tasks"], r["dummy"], r["wall_ms"], r["us_per_task"], r["kernel_us"], r["auto_edges"],
            r["explicit_edges"]))
    a, m = rows
    print("MANUAL / AUTO wall time: %.2f" % (m["wall_ms"] / a["wall_ms"] if a["wall_ms"] else float("nan")))
    return rows


if __name__ == "__main__":
    main()
