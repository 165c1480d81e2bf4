"""`make fuzz` part: the trace summary's three readers (libpto2's native reader, the Python line
reader, the whole-document reader) on many mutated traces; any disagreement, or an exception
other than TraceFormatError, is a finding (tests/python/trace_fuzz.py).

    python scripts/fuzz_trace_summary.py [--count N] [--seed S]

The test suite checks mutants 0..1499; the default here starts at seed 10000.
"""
import argparse
import collections
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "python"))

import trace_fuzz  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=200000)
    ap.add_argument("--seed", type=int, default=10000)
    args = ap.parse_args(argv)
    t0 = time.time()
    verdicts = collections.Counter()
    findings = []
    with tempfile.TemporaryDirectory() as d:
        real = trace_fuzz.real_traces(d)
        for seed in range(args.seed, args.seed + args.count):
            try:
                verdicts[trace_fuzz.check(seed, real, d)] += 1
            except trace_fuzz.Mismatch as e:
                findings.append(str(e))
                print("finding: %s" % e, flush=True)
            if (seed - args.seed + 1) % 20000 == 0:
                print("fuzz_trace_summary: %d/%d mutants, %.0f s, %d disagreement(s)"
                      % (seed - args.seed + 1, args.count, time.time() - t0, len(findings)), flush=True)
    print("fuzz_trace_summary: %d mutants (seed %d) in %.1f s: %s; %d disagreements"
          % (args.count, args.seed, time.time() - t0, ", ".join("%s %d" % kv for kv in sorted(verdicts.items())),
             len(findings)))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
