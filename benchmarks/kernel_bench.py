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
(in a process of its own) and on one thread, whichever is faster, in interleaved rounds (the best
call of each side over all rounds; a shared machine drifts between minutes). Each side is timed
around its whole call (pypto's includes the Python call: marshalling, the run, RunStats) after
WARM_SECONDS of untimed calls; a line under the
table gives the thread counts of both sides, the other NumPy time and the median and range of the
per-round ratios. The summary line is the
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
    """examples/tiled_matmul.py as a whole program vs one NumPy matmul of the same shapes, in
    interleaved rounds (a shared machine's speed drifts between minutes; so do its two CPUs)."""
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
    rounds, per_round = (4, 10) if quick else (10, 20)
    # NumPy on its BLAS threads (one per CPU, as the runtime's workers; in a process of its own,
    # since the BLAS thread count is fixed when NumPy loads) and on one thread (this process);
    # the faster is the peer (a busy machine can make the threaded BLAS much slower).
    server = _NumpyGemmServer(mod.M, mod.K, mod.N, workers)
    best = {"pypto": [], workers: [], 1: []}
    try:
        for r in range(rounds):
            # Each side warms up first (WARM_SECONDS of untimed calls): a CPU that sat idle runs
            # slower for a while (this 2-CPU VM: a task alone 46 us, 122 us right after 0.3 s asleep).
            sides = [("pypto", lambda: _best_run(prog, (a, b, c), per_round)),
                     (workers, lambda: server.best(per_round)),
                     (1, lambda: _best_of(lambda: np.matmul(a, b), per_round))]
            for side, measure in (sides if r % 2 == 0 else sides[::-1]):
                best[side].append(measure())
    finally:
        server.close()
    t_np = {t: min(best[t]) for t in (workers, 1)}
    threads = min(t_np, key=t_np.get)
    t_pypto = min(best["pypto"])
    ratios = sorted(p / min(x, y) for p, x, y in zip(best["pypto"], best[workers], best[1]))
    name = "gemm program"
    shape = "%dx%d @ %dx%d" % (mod.M, mod.K, mod.K, mod.N)
    note = ("gemm program: pypto %d tasks of %dx%d on %d AIC + %d AIV workers (the call's default) + the "
            "orchestrating thread (it runs tasks while it waits); NumPy on %d BLAS thread(s) (%d thread(s): %.1f us); "
            "%d CPUs; %d interleaved rounds of %d calls a side, the best of each: per-round ratio median %.2f "
            "(range %.2f-%.2f)" % ((mod.M // mod.TM) * (mod.N // mod.TN), mod.TM, mod.TN, aic, aiv, threads,
                                   workers + 1 - threads, 1e6 * t_np[workers + 1 - threads], os.cpu_count() or 1,
                                   rounds, per_round, ratios[len(ratios) // 2], ratios[0], ratios[-1]))
    return name, shape, t_pypto * 1e6, t_np[threads] * 1e6, t_pypto / t_np[threads], note


# Each side of the GEMM comparison calls its matmul for this long, untimed, before its timed calls:
# a CPU that sat idle (the NumPy process sleeps 0.3 s before it replies) runs slower for a few
# ms (this 2-CPU VM: five calls of the program, 0.3 ms, were not enough: its per-round best was
# 1.6x its best in a warm loop).
WARM_SECONDS = 0.02


def _warm(fn, seconds=WARM_SECONDS, calls=5):
    """Calls fn() for `seconds` of wall time, at least `calls` times."""
    end = time.perf_counter() + seconds
    n = 0
    while n < calls or time.perf_counter() < end:
        fn()
        n += 1


def _best_run(prog, args, runs):
    """The best time of `runs` whole calls of `prog` (the Python call included, as NumPy's
    matmul is timed) after the warm-up."""
    return _best_of(lambda: prog(*args), runs)


def _best_of(fn, runs):
    _warm(fn)
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


_NUMPY_GEMM = r"""
import sys, time
import numpy as np
m, k, n = map(int, sys.argv[1:])
rng = np.random.default_rng(0)
a = rng.standard_normal((m, k)).astype(np.float32)
b = rng.standard_normal((k, n)).astype(np.float32)
np.matmul(a, b)
for line in sys.stdin:
    end = time.perf_counter() + WARM_SECONDS   # warm up first, as the other sides do
    n = 0
    while n < 5 or time.perf_counter() < end:
        np.matmul(a, b)
        n += 1
    best = float("inf")
    for _ in range(int(line)):
        t0 = time.perf_counter()
        np.matmul(a, b)
        best = min(best, time.perf_counter() - t0)
    time.sleep(0.3)   # OpenBLAS's threads spin ~0.1 s after a call: let them sleep before the other side runs
    print(best, flush=True)
"""


class _NumpyGemmServer:
    """A process timing one NumPy (m x k) @ (k x n) float32 matmul with its BLAS on `threads`
    threads, a batch per request: `best(runs)` is the best of `runs` calls, in seconds."""

    def __init__(self, m, k, n, threads):
        env = dict(os.environ)
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = str(threads)
        script = "WARM_SECONDS = %r\n" % WARM_SECONDS + _NUMPY_GEMM
        self._p = subprocess.Popen([sys.executable, "-c", script, str(m), str(k), str(n)], env=env,
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def best(self, runs):
        self._p.stdin.write("%d\n" % runs)
        self._p.stdin.flush()
        line = self._p.stdout.readline()
        if not line:
            raise RuntimeError("the NumPy timing process exited (code %s)" % self._p.wait())
        return float(line)

    def close(self):
        self._p.stdin.close()
        self._p.wait()


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
