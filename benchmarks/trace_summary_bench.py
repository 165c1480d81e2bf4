"""Time and peak memory of ``pypto trace summary`` (pypto.trace_summary) on traces of N tasks.

    python benchmarks/trace_summary_bench.py [--tasks 1000,10000,100000] [--rounds 3]

Each trace is written the way libpto2's trace.cpp writes one (thread names, a submit span and a
task span per task with its source line, two dependency flows per task: a `s` event with
from/to and an `f` event), 8 workers, then summarised in a fresh process (so the peak RSS is
the summary's own) by `summarize(path).format()`. Prints wall seconds and peak RSS per size:
the cost must grow linearly with the number of tasks.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

WORKERS = 8


def write_trace(path: str, tasks: int) -> None:
    """A chip-level trace of `tasks` tasks: task i depends on i - 1 and i - WORKERS (when > 0)."""
    with open(path, "w") as f:
        f.write('{"traceEvents": [\n{"name":"process_name","ph":"M","pid":0,"tid":0,"args":{"name":"pto2"}}')
        for w in range(WORKERS):
            f.write(',\n{"name":"thread_name","ph":"M","pid":0,"tid":%d,"args":{"name":"AIV%d"}}' % (w, w))
        f.write(',\n{"name":"thread_name","ph":"M","pid":0,"tid":%d,"args":{"name":"orchestrator"}}' % WORKERS)
        kernels = ("add", "mul", "exp_row", "matmul")
        for i in range(1, tasks + 1):
            k = kernels[i % len(kernels)]
            ts = i * 1.25
            f.write(',\n{"name":"%s","cat":"task","ph":"X","pid":0,"tid":%d,"ts":%.3f,"dur":%.3f,'
                    '"args":{"task_id":%d,"kernel_id":%d,"block_idx":0,"source":"prog.py:%d"}}'
                    % (k, i % WORKERS, ts, 1.0 + (i % 7) * 0.1, i, i % len(kernels), 10 + i % 50))
        for i in range(1, tasks + 1):
            f.write(',\n{"name":"submit %s","cat":"submit","ph":"X","pid":0,"tid":%d,"ts":%.3f,"dur":0.200,'
                    '"args":{"task_id":%d,"source":"prog.py:%d"}}' % (kernels[i % 4], WORKERS, i * 0.5, i, 10 + i % 50))
        flow = 0
        for i in range(1, tasks + 1):
            for p in (i - 1, i - WORKERS):
                if p < 1:
                    continue
                flow += 1
                f.write(',\n{"name":"dep","cat":"dep","ph":"s","id":%d,"pid":0,"tid":%d,"ts":%.3f,'
                        '"args":{"from":%d,"to":%d}},\n{"name":"dep","cat":"dep","ph":"f","bp":"e","id":%d,'
                        '"pid":0,"tid":%d,"ts":%.3f}' % (flow, p % WORKERS, p * 1.25 + 1, p, i, flow, i % WORKERS, i * 1.25))
        f.write('\n]}\n')


_CHILD = r"""
import resource, sys, time
from pypto.trace_summary import summarize
t0 = time.perf_counter()
text = summarize(sys.argv[1]).format()
t1 = time.perf_counter()
print("%.4f %d %d" % (t1 - t0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, len(text)))
"""

_BASELINE = r"""
import resource, sys
import pypto.trace_summary
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def measure(path: str):
    """(seconds, peak RSS MB above the interpreter with pypto.trace_summary imported) in a fresh process."""
    out = subprocess.run([sys.executable, "-c", _CHILD, path], capture_output=True, text=True, check=True).stdout.split()
    base = int(subprocess.run([sys.executable, "-c", _BASELINE], capture_output=True, text=True, check=True).stdout)
    return float(out[0]), (int(out[1]) - base) / 1024.0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", default="1000,10000,100000", help="comma-separated trace sizes (tasks)")
    ap.add_argument("--rounds", type=int, default=3, help="runs per size (the minimum is reported)")
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for n in (int(s) for s in args.tasks.split(",")):
            path = os.path.join(d, "trace_%d.json" % n)
            write_trace(path, n)
            runs = [measure(path) for _ in range(args.rounds)]
            secs, mb = min(r[0] for r in runs), min(r[1] for r in runs)
            rows.append((n, secs, mb, os.path.getsize(path) / 1e6))
            print("trace summary: %7d tasks (%6.1f MB of JSON): %6.3f s, %6.1f MB peak RSS above the interpreter "
                  "(min of %d)" % (n, rows[-1][3], secs, mb, args.rounds), flush=True)
    return rows


if __name__ == "__main__":
    main()
