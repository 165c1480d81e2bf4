"""Runs the Python-side benchmarks and prints a summary (`make bench`, after bench-runtime).

    python benchmarks/run_all.py [--quick]

1. kernel_bench.py — CPU tile kernels vs NumPy (ratios).
2. codegen_bench.py — code generation throughput (parse, passes, codegen), if present.
3. manual_vs_auto.py — one program in AUTO and MANUAL form: per-task time and edge counts.
4. l3_dispatch.py — the L3 runtime's cost per next-level task and per run (in-process, MPI).
"""
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):   # before NumPy loads
    os.environ.setdefault(_var, "1")


def main():
    quick = "--quick" in sys.argv[1:]
    summary = []
    t0 = time.perf_counter()
    print("== kernel_bench: CPU tile kernels vs NumPy")
    import kernel_bench
    rows = kernel_bench.main(["--quick"] if quick else [])
    import numpy as np
    geo = float(np.exp(np.mean(np.log([r[4] for r in rows]))))
    summary.append("kernel_bench: %d cases, geometric-mean time ratio pypto/NumPy %.2f (%.1f s)"
                   % (len(rows), geo, time.perf_counter() - t0))
    cg = os.path.join(HERE, "codegen_bench.py")
    if os.path.isfile(cg):
        print("\n== codegen_bench")
        t1 = time.perf_counter()
        rc = subprocess.call([sys.executable, cg] + (["--quick"] if quick else []))
        summary.append("codegen_bench: exit %d (%.1f s)" % (rc, time.perf_counter() - t1))
    else:
        summary.append("codegen_bench: not present")
    print("\n== manual_vs_auto: the same program with AUTO and MANUAL dependencies")
    t2 = time.perf_counter()
    import manual_vs_auto
    auto, manual = manual_vs_auto.main(["--quick"] if quick else [])
    summary.append("manual_vs_auto: MANUAL/AUTO wall time %.2f, edges auto %d vs explicit %d (%.1f s)"
                   % (manual["wall_ms"] / auto["wall_ms"], auto["auto_edges"], manual["explicit_edges"],
                      time.perf_counter() - t2))
    print("\n== l3_dispatch: L3 (distributed HOST) runtime cost per next-level task and per run")
    t3 = time.perf_counter()
    import l3_dispatch
    l3_rows = l3_dispatch.main(["--quick"] if quick else [])
    sched = [r for r in l3_rows if r["mode"] == "scheduler"]
    summary.append("l3_dispatch: scheduler %s us/task at %s tasks (reference 8 us/task) (%.1f s)"
                   % ("/".join("%.2f" % r["us_per_task"] for r in sched),
                      "/".join("%d" % r["tasks"] for r in sched), time.perf_counter() - t3))
    print("\n== summary")
    for line in summary:
        print("  " + line)


if __name__ == "__main__":
    main()
