"""Kernel files with and without -fwrapv, interleaved in one process (benchmark, not a test).

Every kernel_bench case (benchmarks/kernel_bench.py: a one-task program repeating one tile op on
a loop-carried tile) and the tiled-GEMM program are built twice, once with -fwrapv added to the
kernel files' flags and once without; then ROUNDS rounds time each pair back to back (the order
alternating per round), so both variants see the same machine spells. Reported per case:
quartiles of the per-round ratio wrapv / plain (best of REPS calls each) and the median times.

    chrt -f 50 python benchmarks/wrapv_ab.py [--rounds 9] [--quick]
"""
import argparse
import importlib.util
import os
import statistics
import sys

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np

import pypto
from pypto.runtime import build as _build

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernel_bench  # noqa: E402


def _compile_both(make):
    """make() compiles one program; returns (plain, wrapv) built with the kernel flags of each."""
    saved = list(_build.KERNEL_FLAGS)
    try:
        _build.KERNEL_FLAGS[:] = [f for f in saved if f != "-fwrapv"]
        plain = make()
        _build.KERNEL_FLAGS[:] = [f for f in saved if f != "-fwrapv"] + ["-fwrapv"]
        wrapv = make()
    finally:
        _build.KERNEL_FLAGS[:] = saved
    return plain, wrapv


def _quartiles(xs):
    q = statistics.quantiles(xs, n=4, method="inclusive")
    return min(xs), q[0], q[1], q[2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    pairs = []
    for name, sa, sb, step, _np_step, reps in kernel_bench.cases(args.quick):
        a = rng.uniform(-1, 1, sa).astype(np.float32)
        b = (rng.uniform(-1, 1, sb) * 0.01).astype(np.float32)
        c = np.zeros(sa, np.float32)
        progs = _compile_both(lambda: kernel_bench._program(sa, sb, step, reps))
        pairs.append(("%s %s" % (name, "x".join(map(str, sa))), progs, (a, b, c), dict(aiv_workers=1), reps))
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "tiled_matmul.py")
    spec = importlib.util.spec_from_file_location("ab_tiled_matmul", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    ga = rng.standard_normal((mod.M, mod.K)).astype(np.float32)
    gb = rng.standard_normal((mod.K, mod.N)).astype(np.float32)
    gc = np.zeros((mod.M, mod.N), np.float32)
    pairs.append(("gemm program", _compile_both(lambda: pypto.compile(mod.TiledMatmul)), (ga, gb, gc), {}, 1))
    calls = 3 if args.quick else 7
    ratios = {p[0]: [] for p in pairs}
    times = {p[0]: ([], []) for p in pairs}
    for r in range(args.rounds):
        for label, (plain, wrapv), argv, kw, reps in pairs:
            best = {}
            for which, prog in ((("plain", plain), ("wrapv", wrapv)) if r % 2 == 0 else (("wrapv", wrapv), ("plain", plain))):
                prog(*argv, **kw)   # warm up
                best[which] = min(prog(*argv, **kw).wall_seconds for _ in range(calls)) / reps * 1e6
            ratios[label].append(best["wrapv"] / best["plain"])
            times[label][0].append(best["plain"])
            times[label][1].append(best["wrapv"])
    print("%-22s %9s %9s   wrapv/plain: %6s %6s %6s %6s" % ("case", "plain us", "wrapv us", "min", "q25", "median", "q75"))
    all_medians = []
    for label, *_ in pairs:
        mn, q1, med, q3 = _quartiles(ratios[label])
        all_medians.append(med)
        print("%-22s %9.2f %9.2f   %18.3f %6.3f %6.3f %6.3f" % (label, statistics.median(times[label][0]),
                                                             statistics.median(times[label][1]), mn, q1, med, q3))
    geo = float(np.exp(np.mean(np.log(all_medians))))
    print("geometric mean of the per-case median ratios: %.3f (%d rounds, %d cases)" % (geo, args.rounds, len(pairs)))


if __name__ == "__main__":
    main()
