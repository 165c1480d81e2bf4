"""What the race checker costs: the same runs with race_check off and on.

    python benchmarks/race_overhead.py [--quick] [--width W] [--workers N]

Programs: the stripe programs of manual_vs_auto.py (each task reads a 16-row stripe of `data`
and writes the same stripe of `out`) in AUTO form (a chain of tracked tasks) and MANUAL form
(phases of parallel branches behind dummy barriers, explicit edges only), at several sizes, with
a narrow stripe (width 16: tiny kernels, so the checker's per-task cost shows) and a wide one.

Reports per program and size: tasks, best-of-N wall time per task with the checker off and on
(race_check="error"; a clean program, so the run succeeds), the difference per task and the
ratio. The check is the one of a user's run: recording at submission, kernels reporting their
load/store boxes, and the end-of-run happens-before analysis (included in the wall time).
`main(argv)` returns the rows (benchmarks/run_all.py calls it).
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from manual_vs_auto import AUTO, MANUAL  # noqa: E402


def measure(name, template, p, b, w, repeats, workers):
    import pypto
    import pypto.language as pl
    rows = p * b * 16
    prog = pl.parse_program(template.format(rows=rows, w=w, p=p, b=b), "<race_%s>" % name)
    compiled = pypto.compile(prog)
    data = np.random.default_rng(0).random((rows, w), dtype=np.float32)
    out = np.zeros((rows, w), np.float32)
    res = {}
    for mode in (False, True, False, True):  # interleaved: both see the same machine state
        walls = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            stats = compiled(data, out, aiv_workers=workers, race_check=mode)
            walls.append(time.perf_counter() - t0)
            assert stats.races == 0
        res.setdefault(mode, []).extend(walls)
    off, on = min(res[False]), min(res[True])  # the least disturbed call (a shared machine is noisy)
    n = stats.tasks
    return {"form": name, "phases": p, "width": w, "tasks": n, "off_us": off * 1e6 / n, "on_us": on * 1e6 / n,
            "extra_us": (on - off) * 1e6 / n, "ratio": on / off if off else float("nan")}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--branches", type=int, default=4)
    ap.add_argument("--workers", type=int, default=2, help="AIV worker threads")
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    repeats = 3 if args.quick else 10
    sizes = [4, 32] if args.quick else [8, 64, 256]
    rows = []
    for w in (16, 256):
        for p in sizes:
            for name, template in (("AUTO", AUTO), ("MANUAL", MANUAL)):
                rows.append(measure(name, template, p, args.branches, w, repeats, args.workers))
    print("race_overhead: stripe programs, %d branches, %d AIV workers, best of %d calls (compiled "
          "program call, wall time incl. the end-of-run check)" % (args.branches, args.workers, 2 * repeats))
    print("%-7s %6s %6s %7s %12s %12s %12s %7s" % ("form", "width", "phases", "tasks", "off us/task", "on us/task",
                                                    "extra us", "on/off"))
    for r in rows:
        print("%-7s %6d %6d %7d %12.2f %12.2f %12.2f %7.2f" % (r["form"], r["width"], r["phases"], r["tasks"],
                                                               r["off_us"], r["on_us"], r["extra_us"], r["ratio"]))
    return rows


if __name__ == "__main__":
    main()
