"""`make fuzz` part: many random AUTO programs through AutoDeriveTaskDependencies, each compiled
with analyze_auto_scopes_for_deps off and on, run on a few input sets, compared bit for bit and
race-checked (tests/python/auto_deps_fuzz.py; batches of --batch programs share one library).

    python scripts/fuzz_auto_deps.py [--count N] [--seed S] [--runs R] [--batch B]

The test suite checks programs 0..299; the default here starts at seed 1000.
"""
import argparse
import collections
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "python"))

import auto_deps_fuzz  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--batch", type=int, default=50)
    args = ap.parse_args(argv)
    verdicts = collections.Counter()
    t0 = time.time()
    end = args.seed + args.count
    for first in range(args.seed, end, args.batch):
        batch = auto_deps_fuzz.check_batch(range(first, min(first + args.batch, end)), runs=args.runs)
        verdicts.update(v.split(":")[0] for v in batch.values())
        print("fuzz_auto_deps: %d programs, %s, %.0f s" % (min(first + args.batch, end) - args.seed, dict(verdicts),
                                                           time.time() - t0), flush=True)
    print("fuzz_auto_deps: OK: %d programs x %d runs, verdicts %s" % (args.count, args.runs, dict(verdicts)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
