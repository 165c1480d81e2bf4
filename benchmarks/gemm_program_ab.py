"""The tiled-GEMM program (examples/tiled_matmul.py) of two pypto packages against NumPy, in
interleaved rounds (benchmark, not a test).

    python benchmarks/gemm_program_ab.py --old /path/to/site-packages-copy [--rounds 21] [--calls 40]
                                         [--old-workers 2,1] [--new-workers default]

`--old` is a directory holding another `pypto` package (e.g. a copy of the installed one made
before a change: `cp -a $(python -c 'import pypto, os; print(os.path.dirname(pypto.__file__))') /tmp/old/`);
"new" is the package this interpreter imports. Three long-lived worker processes (old, new, and
NumPy with its BLAS on one thread per CPU, fixed when NumPy loads) each time `--calls` runs per
round (a, b and c 64-byte aligned in each: NumPy's 16-byte alignment differs between
processes and moved the pypto times by ~8 %); the driver runs them one after another in every round (old / new order alternating) and
pauses 0.5 s after each, so that OpenBLAS's idle threads (which spin ~0.1 s after a call) park
before the next measurement. Worker counts per package: `AIC,AIV` passed to every call, or
`default` (the call names none: CompiledProgram.default_workers, docs/running.md "Workers");
`--old-workers` defaults to the counts this benchmark used before that default existed (one AIC
worker per CPU + 1 AIV), `--new-workers` to `default`. `--old-example` runs the old package on
another copy of examples/tiled_matmul.py (its tiles before a change; default: this checkout's). Every pypto call has the orchestrating
thread too, which runs tasks while it waits for the run to end. The header prints the counts
each package ran with. Printed: min / q25 / median / q75 over the rounds of the best and the
median call of each round, and of the per-round ratios. Only ratios within one run count on a
shared machine; run it at real-time priority: chrt -f 50 python ...
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

_WORKER = r"""
import os, statistics, sys, time
kind, calls, example = sys.argv[1], int(sys.argv[2]), sys.argv[3]
import numpy as np
sys.path.insert(0, os.path.dirname(example))
rng = np.random.default_rng(0)
import tiled_matmul as tm
def aligned(x):   # 64-byte aligned (NumPy gives 16): the processes differ by nothing but the package
    raw = np.empty(x.size + 16, np.float32)
    start = ((-raw.ctypes.data) % 64) // 4
    out = raw[start:start + x.size].reshape(x.shape)
    out[...] = x
    return out
a = aligned(rng.standard_normal((tm.M, tm.K)).astype(np.float32))
b = aligned(rng.standard_normal((tm.K, tm.N)).astype(np.float32))
c = aligned(np.zeros((tm.M, tm.N), np.float32))
if kind == "numpy":
    def once():
        t0 = time.perf_counter()
        np.matmul(a, b)
        return time.perf_counter() - t0
else:
    import pypto
    prog = pypto.compile(tm.TiledMatmul)
    spec = sys.argv[4]
    counts = {} if spec == "default" else dict(zip(("aic_workers", "aiv_workers"), map(int, spec.split(","))))
    prog(a, b, c, **counts)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-4, atol=1e-4)
    def once():
        return prog(a, b, c, **counts).wall_seconds
for _ in range(5):
    once()
print("ready", "%d AIC + %d AIV workers" % prog._runtime.config[:2] if kind != "numpy" else "", flush=True)
for _ in sys.stdin:
    ts = sorted(once() for _ in range(calls))
    print(ts[0], statistics.median(ts), flush=True)
"""


def _spawn(kind, calls, example, pythonpath=None, blas_threads=1, workers="default"):
    env = dict(os.environ)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(blas_threads)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath + os.pathsep + env.get("PYTHONPATH", "")
    p = subprocess.Popen([sys.executable, "-c", _WORKER, kind, str(calls), example, workers], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, env=env, text=True)
    line = p.stdout.readline().strip()
    if not line.startswith("ready"):
        raise SystemExit("the %s worker failed to start (see its stderr above)" % kind)
    p.config = line[len("ready"):].strip()
    return p


def _quartiles(xs):
    xs = sorted(xs)
    q = statistics.quantiles(xs, n=4) if len(xs) > 1 else [xs[0]] * 3
    return "min %8.3f  q25 %8.3f  median %8.3f  q75 %8.3f" % (xs[0], q[0], statistics.median(xs), q[2])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True, help="directory containing the other pypto package")
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--calls", type=int, default=40)
    ap.add_argument("--old-workers", default="%d,1" % (os.cpu_count() or 1),
                    help="AIC,AIV workers of the old package's calls, or 'default' (default: CPUs,1)")
    ap.add_argument("--new-workers", default="default", help="AIC,AIV workers of the new package's calls, or 'default'")
    ap.add_argument("--old-example", default=None,
                    help="the old package's tiled_matmul.py (e.g. main's, when the example's tiles changed too); "
                         "default: this checkout's, for both")
    args = ap.parse_args(argv)
    if not os.path.isdir(os.path.join(args.old, "pypto")):
        raise SystemExit("--old %s: no pypto package in that directory" % args.old)
    example = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "tiled_matmul.py")
    cpus = os.cpu_count() or 1
    old_example = os.path.abspath(args.old_example) if args.old_example else example
    workers = {"old": _spawn("old", args.calls, old_example, pythonpath=args.old, workers=args.old_workers),
               "new": _spawn("new", args.calls, example, workers=args.new_workers),
               "numpy": _spawn("numpy", args.calls, example, blas_threads=cpus)}
    res = {k: [] for k in workers}
    for r in range(args.rounds):
        order = ["old", "new"] if r % 2 == 0 else ["new", "old"]
        for k in order + ["numpy"]:
            p = workers[k]
            p.stdin.write("go\n")
            p.stdin.flush()
            res[k].append(tuple(map(float, p.stdout.readline().split())))
            time.sleep(0.5)
    for p in workers.values():
        p.stdin.close()
        p.wait()
    print("tiled GEMM program, %d rounds of %d calls; pypto old: %s (%s), new: %s (%s), each + the orchestrating "
          "thread; NumPy: %d BLAS threads (fresh process); %d CPUs"
          % (args.rounds, args.calls, workers["old"].config, args.old_workers, workers["new"].config,
             args.new_workers, cpus, cpus))
    for stat, i in (("best call of a round", 0), ("median call of a round", 1)):
        print("== %s (us)" % stat)
        for k in workers:
            print("  %-9s %s" % (k, _quartiles([1e6 * x[i] for x in res[k]])))
        for k in ("old", "new"):
            print("  %-9s %s" % (k + "/numpy", _quartiles([x[i] / y[i] for x, y in zip(res[k], res["numpy"])])))
        print("  %-9s %s" % ("new/old", _quartiles([x[i] / y[i] for x, y in zip(res["new"], res["old"])])))


if __name__ == "__main__":
    main()
