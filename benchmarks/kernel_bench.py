"""CPU tile kernels against NumPy on the same shapes (benchmark, not a test).

Each case is a one-task program whose kernel repeats an op REPS times on a loop-carried tile
(so nothing can be optimised away); NumPy does the same number of in-place ops on arrays of
the same shape. Reported: microseconds per op for both and the ratio pypto / NumPy (lower is
better; < 1 means the generated kernel is faster). The runtime's per-task overhead is
included once per REPS ops.

    python benchmarks/kernel_bench.py            # full table
    python benchmarks/kernel_bench.py --quick    # fewer repetitions

A kernel runs on one worker thread, so NumPy's BLAS is limited to one thread here too
(OPENBLAS_NUM_THREADS / OMP_NUM_THREADS / MKL_NUM_THREADS default to 1) for a per-core comparison.
The last case is the whole tiled-GEMM program of examples/tiled_matmul.py (256x192 @ 192x128 in
its tiles) with the call's default workers (CPUs - 1 AIC workers, at least 1) and the
orchestrating thread (which runs tasks while it waits), against one NumPy matmul with its BLAS on as many threads as CPUs
(measured in a fresh process) and on one thread, whichever is faster; a line under the table
gives the thread counts of both sides and the other NumPy time. The summary line is the
geometric mean of pypto / NumPy over all cases (goal <= 0.8) and the worst case (goal <= 1.5).

For stable figures on a shared machine run it at real-time priority: chrt -f 50 python ...
"""
import argparse
import importlib.util
import math
import os
import subprocess
import sys
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np

import pypto
import pypto.language as pl


def _program(shape_a, shape_b, step, reps, init="ta"):
    (m, n), (k0, k1) = shape_a, shape_b
    text = f"""
import pypto.language as pl

@pl.program
class Bench:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[{m}, {n}], pl.FP32], b: pl.Tensor[[{k0}, {k1}], pl.FP32],
          c: pl.Out[pl.Tensor[[{m}, {n}], pl.FP32]]) -> pl.Tensor[[{m}, {n}], pl.FP32]:
        ta = pl.load(a, [0, 0], [{m}, {n}])
        tb = pl.load(b, [0, 0], [{k0}, {k1}])
        acc = {init}
        for r in pl.range({reps}):
            acc = {step}
        c = pl.store(acc, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[{m}, {n}], pl.FP32], b: pl.Tensor[[{k0}, {k1}], pl.FP32],
             c: pl.Out[pl.Tensor[[{m}, {n}], pl.FP32]]) -> pl.Tensor[[{m}, {n}], pl.FP32]:
        c = self.k(a, b, c)
        return c
"""
    return pypto.compile(pl.parse_program(text))


def _numpy_time(fn, reps, reset=None):
    fn()  # warm up
    if reset:
        reset()  # the timed ops start from the data pypto's kernel starts from
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    return time.perf_counter() - t0


def bench_case(name, shape_a, shape_b, step, np_step, reps, ops_per_step=1):
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, shape_a).astype(np.float32)
    b = rng.uniform(-1, 1, shape_b).astype(np.float32) * 0.01
    c = np.zeros(shape_a, np.float32)
    prog = _program(shape_a, shape_b, step, reps)
    prog(a, b, c, aiv_workers=1)   # warm up (threads, page faults)
    best = min(prog(a, b, c, aiv_workers=1).wall_seconds for _ in range(3))
    acc = a.copy()
    tmp = np.empty_like(acc)
    # Every timing starts from `a`, as every pypto call does (its kernel loads `a`): an
    # accumulator left from the previous timing has decayed (mul by |b| <= 0.01 reaches
    # subnormals, then zeros), and NumPy on zeros is faster than on the same data.
    t_np = min(_numpy_time(lambda: np_step(acc, b, tmp), reps, reset=lambda: np.copyto(acc, a)) for _ in range(3))
    us, us_np = best / reps * 1e6, t_np / reps * 1e6
    return name, "x".join(map(str, shape_a)) + ("" if shape_b == shape_a else " @ " + "x".join(map(str, shape_b))), \
        us, us_np, us / us_np


def cases(quick):
    r = 50 if quick else 400
    rm = 10 if quick else 50
    out = []
    for s in (64, 128, 256):
        out.append(("add", (s, s), (s, s), "pl.add(acc, tb)", lambda x, y, t: np.add(x, y, out=x), r))
        out.append(("mul", (s, s), (s, s), "pl.mul(acc, tb)", lambda x, y, t: np.multiply(x, y, out=x), r))
        out.append(("exp(-x)", (s, s), (s, s), "pl.exp(pl.neg(acc))",
                    lambda x, y, t: np.exp(np.negative(x, out=x), out=x), r))
        out.append(("row_max+sub", (s, s), (s, s), "pl.row_expand_sub(acc, pl.row_max(acc))",
                    lambda x, y, t: np.subtract(x, x.max(axis=1, keepdims=True), out=x), r))
    for s in (64, 128, 256):
        out.append(("row_sum+div", (s, s), (s, s), "pl.row_expand_div(acc, pl.row_sum(pl.abs(acc)))",
                    lambda x, y, t: np.divide(x, np.abs(x, out=t).sum(axis=1, keepdims=True), out=x), r))
        out.append(("col_max+sub", (s, s), (s, s), "pl.col_expand_sub(acc, pl.col_max(acc))",
                    lambda x, y, t: np.subtract(x, x.max(axis=0, keepdims=True), out=x), r))
    for s in (64, 100, 128, 256):   # 100: ragged rows and columns (no multiple of the 4 x 32 block)
        out.append(("matmul_acc", (s, s), (s, s), "pl.matmul_acc(acc, ta, tb)",
                    lambda x, y, t: np.add(x, np.matmul(x, y, out=t), out=x), rm))
    return out


def gemm_program_case(quick):
    """examples/tiled_matmul.py as a whole program vs one NumPy matmul of the same shapes."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "tiled_matmul.py")
    spec = importlib.util.spec_from_file_location("kb_tiled_matmul", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod   # @pl.program reads the class's source through its module
    spec.loader.exec_module(mod)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((mod.M, mod.K)).astype(np.float32)
    b = rng.standard_normal((mod.K, mod.N)).astype(np.float32)
    c = np.zeros((mod.M, mod.N), np.float32)
    prog = pypto.compile(mod.TiledMatmul)
    prog(a, b, c)   # the worker counts a user gets: CompiledProgram.default_workers (docs/running.md)
    aic, aiv = prog.default_workers
    workers = os.cpu_count() or 1
    runs = 20 if quick else 200
    best = min(prog(a, b, c).wall_seconds for _ in range(runs))
    # NumPy on its BLAS threads (one per CPU, as the runtime's workers) and on one thread; the
    # faster is the peer (a busy machine can make the threaded BLAS much slower).
    t_np = {workers: _numpy_gemm_seconds(mod.M, mod.K, mod.N, workers, runs // 10 + 3),
            1: min(_numpy_time(lambda: np.matmul(a, b), 10) / 10 for _ in range(runs // 10 + 3))}
    threads = min(t_np, key=t_np.get)
    name = "gemm program"
    shape = "%dx%d @ %dx%d" % (mod.M, mod.K, mod.K, mod.N)
    note = ("gemm program: pypto %d tasks of %dx%d on %d AIC + %d AIV workers (the call's default) + the "
            "orchestrating thread (it runs tasks while it waits); NumPy on %d BLAS thread(s) (%d thread(s): %.1f us); "
            "%d CPUs" % ((mod.M // mod.TM) * (mod.N // mod.TN), mod.TM, mod.TN, aic, aiv, threads, workers + 1 - threads,
                1e6 * t_np[workers + 1 - threads], os.cpu_count() or 1))
    return name, shape, best * 1e6, t_np[threads] * 1e6, best / t_np[threads], note


_NUMPY_GEMM = r"""
import sys, time
import numpy as np
m, k, n, rounds = map(int, sys.argv[1:])
rng = np.random.default_rng(0)
a = rng.standard_normal((m, k)).astype(np.float32)
b = rng.standard_normal((k, n)).astype(np.float32)
np.matmul(a, b)
best = float("inf")
for _ in range(rounds):
    t0 = time.perf_counter()
    for _ in range(10):
        np.matmul(a, b)
    best = min(best, (time.perf_counter() - t0) / 10)
print(best)
"""


def _numpy_gemm_seconds(m, k, n, threads, rounds):
    """Best time of one NumPy (m x k) @ (k x n) float32 matmul with its BLAS on `threads` threads:
    in a fresh process, since the BLAS thread count is fixed when NumPy loads (this process
    limits it to 1 for the per-core single-kernel cases)."""
    env = dict(os.environ)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(threads)
    out = subprocess.run([sys.executable, "-c", _NUMPY_GEMM, str(m), str(k), str(n), str(rounds)],
                         env=env, check=True, capture_output=True, text=True).stdout
    return float(out.split()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    rows = [bench_case(*c) for c in cases(args.quick)]
    *gemm, note = gemm_program_case(args.quick)
    rows.append(tuple(gemm))
    print("%-12s %-20s %12s %12s %8s" % ("op", "shape", "pypto us/op", "numpy us/op", "ratio"))
    for name, shape, us, us_np, ratio in rows:
        print("%-12s %-20s %12.2f %12.2f %8.2f" % (name, shape, us, us_np, ratio))
    print("single-kernel cases: one pypto worker thread, NumPy's BLAS on 1 thread (%s=%s)"
          % ("OPENBLAS_NUM_THREADS", os.environ.get("OPENBLAS_NUM_THREADS")))
    print(note)
    geo = math.exp(sum(math.log(r[4]) for r in rows) / len(rows))
    worst = max(rows, key=lambda r: r[4])
    print("geometric mean pypto/NumPy %.2f over %d cases (goal <= 0.8); worst %.2f (%s %s; goal <= 1.5)"
          % (geo, len(rows), worst[4], worst[0], worst[1]))
    mm = [r for r in rows if r[0] in ("matmul_acc", "gemm program")]
    slow = [r for r in mm if r[4] > 1.0]
    print("matmul cases at least as fast as NumPy (goal: all): %d of %d%s"
          % (len(mm) - len(slow), len(mm), "" if not slow else "; slower: " + ", ".join(
              "%s %s %.2fx" % (r[0], r[1].split(" (")[0], r[4]) for r in slow)))
    return rows


if __name__ == "__main__":
    main()
