"""Does a parked worker take part in the next run? (runtime/src/worker_pool.cpp,
keep_workers_off.) The tiled-GEMM example (four tasks) called with `trace=`, in groups of
20 calls after 0.3 s of idleness: writing the trace after each call takes a millisecond or more,
longer than a worker spins (50 us), so each call finds the worker parked. From each call's trace: how many of its four tasks the worker ran
(the orchestrating thread runs the rest while it waits) and when the worker's first task
started. Then the calls' median wall time, untraced, back to back and 1 ms apart.

On a VM, Linux may wake a parked worker on its waker's CPU (the orchestrator's) when it counts
the idle vCPU as preempted; the worker then waits there while the orchestrator runs every task.
Before the orchestrator kept the workers off its CPU, on a 2-CPU VM the worker ran no task of a
run after the third or so.

    python benchmarks/worker_wakeups.py [calls]
"""
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time

import numpy as np

import pypto


def _example():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "tiled_matmul.py")
    spec = importlib.util.spec_from_file_location("ww_tiled_matmul", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod   # @pl.program reads the class's source through its module
    spec.loader.exec_module(mod)
    return mod


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    calls = int(argv[0]) if argv else 60
    mod = _example()
    rng = np.random.default_rng(0)
    a = rng.standard_normal((mod.M, mod.K)).astype(np.float32)
    b = rng.standard_normal((mod.K, mod.N)).astype(np.float32)
    c = np.zeros((mod.M, mod.N), np.float32)
    prog = pypto.compile(mod.TiledMatmul)
    aic, aiv = prog.default_workers
    counts, starts = [], []
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "t.json")
        for i in range(calls):
            if i % 20 == 0:
                time.sleep(0.3)   # idle long enough for the VM's host to take the CPUs back
            prog(a, b, c, trace=trace)
            events = json.load(open(trace))["traceEvents"]
            names = {e["tid"]: e["args"]["name"] for e in events if e.get("name") == "thread_name"}
            worker = [e for e in events if e.get("cat") == "task" and names.get(e["tid"]) != "orchestrator"]
            counts.append(len(worker))
            if worker:
                starts.append(min(e["ts"] for e in worker))
    tasks = (mod.M // mod.TM) * (mod.N // mod.TN)
    print("tiled_matmul (%d tasks; %d AIC + %d AIV workers and the orchestrating thread), %d traced calls, "
          "each finding the worker parked (0.3 s idle before every 20th):" % (tasks, aic, aiv, calls))
    print("  tasks the worker ran per call: %s" % " ".join(map(str, counts)))
    print("  calls where the worker ran none: %d of %d; its first task started after %s us (median)"
          % (counts.count(0), calls, "%.0f" % statistics.median(starts) if starts else "-"))
    result = {"calls": calls, "none": counts.count(0)}
    for label, gap in (("back to back", 0.0), ("1 ms apart", 0.001)):
        walls = []
        for _ in range(200):
            walls.append(prog(a, b, c).wall_seconds)
            if gap:
                time.sleep(gap)
        result[label] = 1e6 * statistics.median(walls)
        print("  untraced calls %s: median %.1f us, best %.1f us" % (label, result[label], 1e6 * min(walls)))
    return result


if __name__ == "__main__":
    main()
