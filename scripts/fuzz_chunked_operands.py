"""`make fuzz` part: random straight-line programs whose calls the L2 generator chunks together
with the values between them (StampCallOperands), each built with -Werror, run, and compared
with its NumPy model (tests/python/chunk_fuzz.py).

    python scripts/fuzz_chunked_operands.py [--count N] [--seed S]

The test suite checks programs 0..3; the default here starts at seed 1000.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "python"))

import chunk_fuzz  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1000)
    args = ap.parse_args(argv)
    os.environ["PYPTO_CXXFLAGS"] = (os.environ.get("PYPTO_CXXFLAGS", "") + " -Werror").strip()
    t0 = time.time()
    for seed in range(args.seed, args.seed + args.count):
        print("fuzz_chunked_operands: %s (%.0f s)" % (chunk_fuzz.check(seed), time.time() - t0), flush=True)
    print("fuzz_chunked_operands: OK: %d programs" % args.count)
    return 0


if __name__ == "__main__":
    sys.exit(main())
