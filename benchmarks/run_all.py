"""Runs the Python-side benchmarks and prints a summary (`make bench`, after bench-runtime).

    python benchmarks/run_all.py [--quick]

1. kernel_bench.py — CPU tile kernels vs NumPy (ratios).
2. codegen_bench.py — code generation throughput (parse, passes, codegen), if present.
3. manual_vs_auto.py — one program in AUTO and MANUAL form: per-task time and edge counts.
4. first_call_bench.py — import, warm compile, first and second call, each in a fresh process.
5. compile_bench.py — cold and warm compile times of every example, first-call overhead.
6. runtime/fixed_cost.py — the fixed cost of calling an empty program; worker_wakeups.py — whether a
   parked worker takes part in the next run.
7. race_overhead.py — the race checker's cost per task (race_check off versus on).
8. l3_dispatch.py — the L3 runtime's cost per next-level task and per run (in-process, MPI).
9. orch_build_bench.py — build time and peak memory of a straight-line orchestration of N calls.
10. trace_summary_bench.py — `pypto trace summary` time, breakdown and peak memory at 10k / 100k / 1M tasks.
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
        res = subprocess.run([sys.executable, cg] + (["--quick"] if quick else ["--instructions"]), stdout=subprocess.PIPE,
                             text=True)
        print(res.stdout, end="")
        # The totals (cpu s of the 10,000-submission run), the goal, the linearity growth lines and checks.
        picked = [l.strip().replace("total", "total (wall s, cpu s, tasks/s of cpu):", 1) if l.strip().startswith("total")
                  else l.strip() for l in res.stdout.splitlines() if l.strip().startswith(("total", "goal", "growth", "instruction growth"))]
        summary.append("codegen_bench: exit %d (%.1f s)%s" % (res.returncode, time.perf_counter() - t1,
                                                          "".join("\n    " + l for l in picked)))
    else:
        summary.append("codegen_bench: not present")
    print("\n== manual_vs_auto: the same program with AUTO and MANUAL dependencies")
    t2 = time.perf_counter()
    import manual_vs_auto
    auto, manual = manual_vs_auto.main(["--quick"] if quick else [])
    summary.append("manual_vs_auto: MANUAL/AUTO wall time %.2f, edges auto %d vs explicit %d (%.1f s)"
                   % (manual["wall_ms"] / auto["wall_ms"], auto["auto_edges"], manual["explicit_edges"],
                      time.perf_counter() - t2))
    print("\n== auto_deps_bench: analyze_auto_scopes_for_deps off vs on (stencil, chain, tree, neighbour, reduce)")
    t3 = time.perf_counter()
    import auto_deps_bench
    ad = auto_deps_bench.main(["--quick"] if quick else [])
    st = [r for r in ad if r["program"] == "stencil"]
    summary.append("auto_deps_bench: stencil per-task cost off/on %.2fx (%.1f s)"
                   % (st[0]["us_per_task"] / st[1]["us_per_task"], time.perf_counter() - t3))
    print("\n== first_call_bench: a fresh process, vector_add")
    import first_call_bench
    fc = first_call_bench.main(["--rounds", "3" if quick else "5"])
    summary.append("first_call_bench: import %.1f ms, warm compile %.1f ms, 1st call %.2f ms, 2nd call %.2f ms, "
                   "torch imported: %s" % (fc["import"], fc["compile"], fc["call1"], fc["call2"],
                                           "yes" if fc["torch"] else "no"))
    fc = os.path.join(HERE, "runtime", "fixed_cost.py")
    if os.path.isfile(fc):
        print("\n== fixed cost of calling an empty program")
        out = subprocess.run([sys.executable, fc], capture_output=True, text=True).stdout
        print(out, end="")
        summary += [l for l in out.splitlines() if l.startswith("fixed cost")]
    print("\n== worker_wakeups: does a parked worker take part in the next run?")
    import worker_wakeups
    ww = worker_wakeups.main([])
    summary.append("worker_wakeups: the worker ran no task in %d of %d calls that found it parked; tiled_matmul "
                   "median %.1f us back to back, %.1f us 1 ms apart" % (ww["none"], ww["calls"], ww["back to back"],
                                                                     ww["1 ms apart"]))
    print("\n== compile_bench: cold and warm compile times of every example")
    t3 = time.perf_counter()
    import compile_bench
    cres = compile_bench.main(["--quick"] if quick else [])
    ok = [r for r in cres.values() if isinstance(r.get("cold"), float)]
    if ok:
        summary.append("compile_bench: %d programs, mean cold %.2f s (empty cache %.2f s), warm %.1f ms (%.1f s)"
                       % (len(ok), sum(r["cold"] for r in ok) / len(ok), sum(r["cold_empty"] for r in ok) / len(ok),
                          1e3 * sum(r["warm"] for r in ok) / len(ok), time.perf_counter() - t3))
    print("\n== race_overhead: the race checker's cost per task")
    t3 = time.perf_counter()
    import race_overhead
    rrows = race_overhead.main(["--quick"] if quick else [])
    big = max(rrows, key=lambda r: r["tasks"])
    summary.append("race_overhead: race_check on/off wall time %.2f at %d tasks (%s), +%.2f us/task (%.1f s)"
                   % (big["ratio"], big["tasks"], big["form"], big["extra_us"], time.perf_counter() - t3))
    print("\n== l3_dispatch: L3 (distributed HOST) runtime cost per next-level task and per run")
    t3 = time.perf_counter()
    import l3_dispatch
    l3_rows = l3_dispatch.main(["--quick"] if quick else [])
    sched = [r for r in l3_rows if r["mode"] == "scheduler"]
    inproc = [r for r in l3_rows if r["mode"] == "inprocess"]
    mpi = [r for r in l3_rows if r["mode"] == "mpi"]
    summary.append("l3_dispatch: scheduler %s us/task at %s tasks; in-process min %s us/task, CPU %s us/task; MPI min %s "
                   "us/task (reference 8 us/task) (%.1f s)"
                   % ("/".join("%.2f" % r["us_per_task"] for r in sched),
                      "/".join("%d" % r["tasks"] for r in sched),
                      "/".join("%.2f" % r.get("min_us_per_task", r["us_per_task"]) for r in inproc),
                      "/".join("%.2f" % r.get("cpu_us_per_task", 0.0) for r in inproc),
                      "/".join("%.2f" % r.get("min_us_per_task", r["us_per_task"]) for r in mpi) or "-",
                      time.perf_counter() - t3))
    print("\n== orch_build_bench: building a straight-line orchestration of N calls")
    t3 = time.perf_counter()
    import orch_build_bench
    orows = orch_build_bench.main(["--quick"] if quick else [])
    summary.append("orch_build_bench: %s (%.1f s)" % (", ".join(
        "%d calls %s %.1f s cpu / %.0f MB" % (r["calls"], r["form"], r["cpu_s"], r["peak_mb"])
        for r in orows),
        time.perf_counter() - t3))
    print("\n== trace_summary_bench: `pypto trace summary` of traces of N tasks")
    t3 = time.perf_counter()
    import trace_summary_bench
    trows = trace_summary_bench.main(["--tasks", "10000" if quick else "10000,100000,1000000", "--profile", "0"])
    summary.append("trace_summary_bench: %s (%.1f s)" % (", ".join(
        "%d tasks %.2f s / %.0f MB" % (r["tasks"], r["seconds"], r["rss_mb"]) for r in trows), time.perf_counter() - t3))
    print("\n== summary")
    for line in summary:
        print("  " + line)


if __name__ == "__main__":
    main()
