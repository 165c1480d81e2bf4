"""The single-kernel matmul_acc cases of kernel_bench (s x s, acc += a @ b, 50 per call) of two
pypto packages, in interleaved rounds (benchmark, not a test).

    python benchmarks/matmul_acc_ab.py --old /path/to/site-packages-copy [--rounds 15] [--sizes 64,100,128,256]

`--old` is a directory holding another `pypto` package (a copy of the installed one made before a
change, as for benchmarks/gemm_program_ab.py); "new" is the package this interpreter imports. Two
long-lived worker processes (old, new) each time one call per size per round (best of 3 calls of
the kernel_bench program: microseconds per matmul_acc); the driver alternates which goes first.
Printed per size: the median over rounds of each side and the median / quartiles of the per-round
ratios new / old. Run it at real-time priority on a shared machine: chrt -f 50 python ...
"""
import argparse
import os
import statistics
import subprocess
import sys

_WORKER = r"""
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import kernel_bench as kb
sizes = [int(s) for s in sys.argv[2].split(",")]
reps = 50
progs = []
for s in sizes:
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (s, s)).astype(np.float32)
    b = rng.uniform(-1, 1, (s, s)).astype(np.float32) * 0.01
    c = np.zeros((s, s), np.float32)
    p = kb._program((s, s), (s, s), "pl.matmul_acc(acc, ta, tb)", reps)
    p(a, b, c, aiv_workers=1)
    progs.append((p, a, b, c))
print("ready", flush=True)
for _ in sys.stdin:
    print(" ".join("%.4f" % (min(p(a, b, c, aiv_workers=1).wall_seconds for _ in range(3)) / reps * 1e6)
                   for p, a, b, c in progs), flush=True)
"""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--sizes", default="64,100,128,256")
    args = ap.parse_args(argv)
    here = os.path.dirname(os.path.abspath(__file__))
    procs = {}
    for side, path in (("old", args.old), ("new", None)):
        env = dict(os.environ)
        if path:
            env["PYTHONPATH"] = path + os.pathsep + env.get("PYTHONPATH", "")
        p = subprocess.Popen([sys.executable, "-c", _WORKER, here, args.sizes], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, env=env, text=True)
        if p.stdout.readline().strip() != "ready":
            raise SystemExit("the %s worker failed to start" % side)
        procs[side] = p
    sizes = args.sizes.split(",")
    times = {"old": [], "new": []}
    for r in range(args.rounds):
        for side in (("old", "new") if r % 2 == 0 else ("new", "old")):
            procs[side].stdin.write("go\n")
            procs[side].stdin.flush()
            times[side].append([float(x) for x in procs[side].stdout.readline().split()])
    for p in procs.values():
        p.stdin.close()
        p.wait()
    print("%-6s %12s %12s %10s %18s   (%d rounds)" % ("size", "old us med", "new us med", "ratio med", "ratio q25..q75",
                                                     args.rounds))
    for i, s in enumerate(sizes):
        old = [t[i] for t in times["old"]]
        new = [t[i] for t in times["new"]]
        ratios = sorted(n / o for n, o in zip(new, old))
        q = statistics.quantiles(ratios, n=4)
        print("%-6s %12.2f %12.2f %10.3f %8.3f..%.3f" % (s, statistics.median(old), statistics.median(new),
                                                      statistics.median(ratios), q[0], q[2]))


if __name__ == "__main__":
    main()
