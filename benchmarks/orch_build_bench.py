"""Build time and peak memory of a straight-line orchestration, by number of kernel calls.

    python benchmarks/orch_build_bench.py [--calls 300,1000,3000,10000] [--quick] [--json out.json]

For each size, generates the orchestration C++ of benchmarks/codegen_bench.py's program (N
straight-line calls over 8 buffers) and compiles it once with the system C++ compiler and the
flags pypto's build uses for orchestration files (plus -Werror), in a fresh process each time.
Reports wall time, compiler CPU time and the compiler's peak resident memory. Wall time counts
a busy machine's waiting too: read CPU time for the compiler's own cost. Figures only.
(Before the call chunking of emit_statements.cpp, g++ -O2 took 4 s for 300 calls, 34-44 s and
516 MB for 1,000, and over 600 s and 3 GB for 3,000.)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# Runs one command and prints "wall_s cpu_s peak_kb" of it (RUSAGE_CHILDREN of this process only).
_MEASURE = r"""
import resource, subprocess, sys, time
t = time.perf_counter()
rc = subprocess.call(sys.argv[1:])
wall = time.perf_counter() - t
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(rc, wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss)
"""


def orchestration_source(calls: int) -> str:
    import pypto.language as pl
    from pypto import codegen
    import codegen_bench
    program = pl.parse_program(codegen_bench.make_source(calls), "orch_build_bench.py")
    return codegen.generate_orchestration(program, "main").code


def measure(calls: int) -> dict:
    from pypto.runtime import include_dir
    from pypto.runtime.build import COMMON_FLAGS, HOST_FLAGS, find_compiler
    code = orchestration_source(calls)
    with tempfile.TemporaryDirectory(prefix="pypto-orch-bench-") as d:
        src = os.path.join(d, "main.cpp")
        with open(src, "w") as f:
            f.write(code)
        cmd = [find_compiler()] + COMMON_FLAGS + HOST_FLAGS + ["-Werror", "-I" + include_dir(), "-c", src,
                                                             "-o", os.path.join(d, "main.o")]
        out = subprocess.run([sys.executable, "-c", _MEASURE] + cmd, capture_output=True, text=True)
    rc, wall, cpu, peak_kb = out.stdout.split()
    return {"calls": calls, "ok": rc == "0", "wall_s": float(wall), "cpu_s": float(cpu),
            "peak_mb": int(peak_kb) / 1024.0, "lines": code.count("\n")}


def main(argv=None) -> list:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", default="300,1000,3000,10000")
    ap.add_argument("--quick", action="store_true", help="300 and 1,000 calls")
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args(argv)
    sizes = [300, 1000] if args.quick else [int(c) for c in args.calls.split(",")]
    from pypto.runtime.build import COMMON_FLAGS, HOST_FLAGS
    print("orch_build_bench: compiling a straight-line orchestration (%s -Werror)"
          % " ".join(COMMON_FLAGS + HOST_FLAGS))
    print("  %8s %10s %8s %8s %10s %12s" % ("calls", "C++ lines", "wall s", "cpu s", "peak MB", "cpu ms/call"))
    rows = []
    for n in sizes:
        r = measure(n)
        rows.append(r)
        print("  %8d %10d %8.2f %8.2f %10.0f %12.2f%s" % (n, r["lines"], r["wall_s"], r["cpu_s"], r["peak_mb"],
                                                         1e3 * r["cpu_s"] / n, "" if r["ok"] else "  FAILED"))
    big = [r for r in rows if r["calls"] == 3000]
    if big:
        print("  goal (issue 17): 3,000 calls built in < 5 s and < 300 MB: %.2f s cpu (%.2fx), %.0f MB (%.2fx)"
              % (big[0]["cpu_s"], big[0]["cpu_s"] / 5.0, big[0]["peak_mb"], big[0]["peak_mb"] / 300.0))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return rows


if __name__ == "__main__":
    rows = main()
    sys.exit(0 if all(r["ok"] for r in rows) else 1)
