"""`make fuzz` part: differential fuzzing of generated arithmetic against Python and NumPy.

    python scripts/fuzz_exprs.py [--kind scalar|typed|float|tile|matmul|valid|index|flow|orch|at|both] [--count N] [--seed S]

scalar: random integer scalar expressions compiled into a kernel and into an orchestration, run
on edge values and compared with Python's integers wrapped to int64
(tests/python/scalar_expr_fuzz.py); typed: the same over every integer dtype (narrowing casts,
mixed signedness, BOOL), against Python's integers promoted and wrapped to the dtype
(tests/python/typed_scalar_fuzz.py); float: FP32 scalar expressions, bit for bit against NumPy
float32 and Python's float // % min max (tests/python/float_scalar_fuzz.py); tile: random chains of exactly rounded FP32 tile ops in a
kernel, compared bit for bit with NumPy float32 on inputs with edge values
(tests/python/tile_expr_fuzz.py); matmul: the matmul family on random shapes and offsets, exactly
against NumPy on small integers (tests/python/matmul_fuzz.py); valid: chains of tile ops on tiles
with literal and run-time valid shapes, against a NumPy model of which elements are specified
(tests/python/valid_region_fuzz.py); index: chains of gather / scatter / scatter_update / mscatter /
gather_row, bit for bit against a NumPy model, and bad indices that must fail the run at the op's
line without writing outside a tensor (tests/python/index_op_fuzz.py); flow: kernels of nested loops
and branches carrying tiles and scalars, bit for bit against the same statements run as Python on
NumPy arrays (tests/python/kernel_flow_fuzz.py); orch: the same statement trees in an orchestration,
tile ops as kernel calls on tensors, loads as views, stores as assembles, against the same model
(tests/python/orch_flow_fuzz.py); at: the same statement trees on tensors with every compute op
inside a `with pl.at(level=pl.Level.CORE_GROUP):` scope (runs of statements, loops and branches cut
into scopes at random), against the same model (tests/python/at_flow_fuzz.py). Any disagreement, or a program that does not compile, is a
finding. The test suite checks the first seeds of each; the default here starts at seed 1000.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "python"))

import at_flow_fuzz  # noqa: E402
import scalar_expr_fuzz  # noqa: E402
import float_scalar_fuzz  # noqa: E402
import index_op_fuzz  # noqa: E402
import kernel_flow_fuzz  # noqa: E402
import orch_flow_fuzz  # noqa: E402
import matmul_fuzz  # noqa: E402
import tile_expr_fuzz  # noqa: E402
import typed_scalar_fuzz  # noqa: E402
import valid_region_fuzz  # noqa: E402

CHECKS = {
    "scalar": [("kernel", lambda s: scalar_expr_fuzz.check(s, "kernel")),
               ("orchestration", lambda s: scalar_expr_fuzz.check(s, "orchestration"))],
    "typed": [("typed kernel", lambda s: typed_scalar_fuzz.check(s, "kernel")),
              ("typed orchestration", lambda s: typed_scalar_fuzz.check(s, "orchestration"))],
    "float": [("float kernel", lambda s: float_scalar_fuzz.check(s, "kernel")),
              ("float orchestration", lambda s: float_scalar_fuzz.check(s, "orchestration")),
              ("FP16 kernel", lambda s: float_scalar_fuzz.check(s, "kernel", dtype="FP16")),
              ("FP16 orchestration", lambda s: float_scalar_fuzz.check(s, "orchestration", dtype="FP16")),
              ("BF16 kernel", lambda s: float_scalar_fuzz.check(s, "kernel", dtype="BF16")),
              ("BF16 orchestration", lambda s: float_scalar_fuzz.check(s, "orchestration", dtype="BF16"))],
    "tile": [("tile", tile_expr_fuzz.check)],
    "matmul": [("matmul", matmul_fuzz.check)],
    "valid": [("valid", valid_region_fuzz.check)],
    "index": [("index", index_op_fuzz.check)],
    "flow": [("flow", kernel_flow_fuzz.check)],
    "orch": [("orch", orch_flow_fuzz.check)],
    "at": [("at", at_flow_fuzz.check)],
}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kind", choices=["scalar", "typed", "float", "tile", "matmul", "valid", "index", "flow", "orch", "at",
                                                   "both"],
                    default="both", help="both: all ten")
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1000)
    args = ap.parse_args(argv)
    if args.count < 1:
        ap.error("--count must be at least 1, got %d" % args.count)
    checks = sum(CHECKS.values(), []) if args.kind == "both" else CHECKS[args.kind]
    t0 = time.time()
    findings = []
    for seed in range(args.seed, args.seed + args.count):
        for label, check in checks:
            try:
                found = check(seed)
            except Exception as e:   # noqa: BLE001 - a compile or build failure is a finding too
                found = ["seed %d (%s): %s: %s" % (seed, label, type(e).__name__, str(e).splitlines()[0])]
            for f in found:
                print("finding: %s" % f, flush=True)
            findings += found
        if (seed - args.seed + 1) % 10 == 0:
            print("fuzz_exprs: %d/%d seeds, %.0f s, %d finding(s)"
                  % (seed - args.seed + 1, args.count, time.time() - t0, len(findings)), flush=True)
    print("fuzz_exprs (%s): %d seeds (%d..%d) in %.1f s: %d finding(s)"
          % (args.kind, args.count, args.seed, args.seed + args.count - 1, time.time() - t0, len(findings)))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
