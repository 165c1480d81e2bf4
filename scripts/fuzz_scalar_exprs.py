"""`make fuzz` part: random integer scalar expressions compiled into kernels and orchestrations,
run on edge values and compared with Python's integers wrapped to int64
(tests/python/scalar_expr_fuzz.py); any disagreement is a finding.

    python scripts/fuzz_scalar_exprs.py [--count N] [--seed S]

Each seed is one program of 16 expressions per side (kernel, orchestration), run on 12 pairs of
edge values. The test suite checks seeds 1 and 2; the default here starts at seed 1000.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "python"))

import scalar_expr_fuzz  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1000)
    args = ap.parse_args(argv)
    if args.count < 1:
        ap.error("--count must be at least 1, got %d" % args.count)
    t0 = time.time()
    findings = []
    for seed in range(args.seed, args.seed + args.count):
        for side in ("kernel", "orchestration"):
            try:
                found = scalar_expr_fuzz.check(seed, side)
            except Exception as e:   # noqa: BLE001 - a compile or build failure is a finding too
                found = ["seed %d (%s): %s: %s" % (seed, side, type(e).__name__, str(e).splitlines()[0])]
            for f in found:
                print("finding: %s" % f, flush=True)
            findings += found
        if (seed - args.seed + 1) % 10 == 0:
            print("fuzz_scalar_exprs: %d/%d programs a side, %.0f s, %d finding(s)"
                  % (seed - args.seed + 1, args.count, time.time() - t0, len(findings)), flush=True)
    print("fuzz_scalar_exprs: %d programs a side (seeds %d..%d) in %.1f s: %d finding(s)"
          % (args.count, args.seed, args.seed + args.count - 1, time.time() - t0, len(findings)))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
