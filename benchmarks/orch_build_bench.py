"""Build time and peak memory of a straight-line orchestration, by number of kernel calls.

    python benchmarks/orch_build_bench.py [--calls 300,1000,3000,10000] [--quick] [--json out.json]

For each size, generates the orchestration C++ of benchmarks/codegen_bench.py's program (N
straight-line calls over 8 buffers) and compiles it once with the system C++ compiler and the
flags pypto's build uses for orchestration files (plus -Werror) and its precompiled API header
(built once beforehand, as pypto's build cache keeps it), in a fresh process each time;
then the same program with a slice computed before each call (each call's first argument a
16x16 view of a wide parameter: the form of an unrolled tiled program), chunked with its calls
(StampCallOperands; docs/dev/orchestration_build.md), and with each slice read by the next call
too (a halo: every chunk boundary has a slice live across it), and in two phases, each slice
read again half the program later (far values, handed on by their chunks), and with its calls
two by two in loops (each loop printed unoptimised in a function of its own), and with each
call writing a tensor created right before it (the creates allocated 64 to a call at the
block's entry, the calls still one run), and with each call a pl.submit waiting on the previous
one's TaskId (chunked like calls, the TaskId handed on at each cut; before, 3,000 took 6.8 s and
543 MB to build), and a HOST-level entry of submissions (chunked by the HOST generator; before,
1,000 took 16 s).
Reports wall time, compiler CPU time and the compiler's peak resident memory. Wall time counts
a busy machine's waiting too: read CPU time for the compiler's own cost. Figures only.
(Before the call chunking of emit_statements.cpp, g++ -O2 took 4 s for 300 calls, 34-44 s and
516 MB for 1,000, and over 600 s and 3 GB for 3,000. Before StampCallOperands, the sliced
program was not chunked: 9.7 s and 285 MB for 300 calls, 96 s and 1.2 GB for 1,000.)
"""

from __future__ import annotations

import argparse
import json
import os
import re
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


def sliced_source(calls: int, chained: bool = False) -> str:
    """codegen_bench's program with each call's first argument a 16x16 slice of parameter `a`
    (16 x 16*calls): a view computed between every two calls. `chained`: each call's second
    argument is the previous call's slice (a halo), so every slice is read by two calls."""
    import codegen_bench
    src = codegen_bench.make_source(calls).replace(
        "def main(self, a: pl.Tensor[[16, 16], pl.FP32]", "def main(self, a: pl.Tensor[[16, %d], pl.FP32]" % (16 * calls))
    lines, n = [], 0
    for line in src.split("\n"):
        m = re.match(r"(\s+)(\w+) = self\.(\w+)\((\w+), (\w+), (.*)$", line)
        if m and n < calls:
            ind, dst, k, _, second, rest = m.groups()
            if second == "a":
                second = "b"   # codegen_bench's last call reads `a`, now wider than the kernel's argument
            if chained and n > 0:
                second = "s%d" % (n - 1)
            lines.append("%ss%d = pl.tensor.slice(a, [16, 16], [0, %d])" % (ind, n, 16 * n))
            line = "%s%s = self.%s(s%d, %s, %s" % (ind, dst, k, n, second, rest)
            n += 1
        lines.append(line)
    return "\n".join(lines)


def far_source(calls: int) -> str:
    """codegen_bench's program in two phases: the first half of the calls each read a 16x16
    slice of parameter `a` (16 x 8*calls), computed right before; the second half read every
    slice again, half the program later (each slice is *far*: handed on by its chunk)."""
    import codegen_bench
    half = calls // 2
    src = codegen_bench.make_source(calls).replace(
        "def main(self, a: pl.Tensor[[16, 16], pl.FP32]", "def main(self, a: pl.Tensor[[16, %d], pl.FP32]" % (16 * half))
    lines, n = [], 0
    for line in src.split("\n"):
        m = re.match(r"(\s+)(\w+) = self\.(\w+)\((\w+), (\w+), (.*)$", line)
        if m and n < 2 * half:
            ind, dst, k, first, second, rest = m.groups()
            first, second = ("b" if x == "a" else x for x in (first, second))   # `a` is wider now
            if n < half:
                lines.append("%ss%d = pl.tensor.slice(a, [16, 16], [0, %d])" % (ind, n, 16 * n))
                line = "%s%s = self.%s(s%d, %s, %s" % (ind, dst, k, n, second, rest)
            else:
                line = "%s%s = self.%s(%s, s%d, %s" % (ind, dst, k, first, n - half, rest)
            n += 1
        lines.append(line)
    return "\n".join(lines)


def looped_source(calls: int) -> str:
    """codegen_bench's program with its calls two by two in loops of two iterations (an unrolled
    program with an inner pl.range): half as many loops as calls in the entry."""
    import codegen_bench
    lines, n = [], 0
    for line in codegen_bench.make_source(calls).split("\n"):
        m = re.match(r"(\s+)(\w+) = self\.(\w+)\(", line)
        if m and n < calls - 1:
            if n % 2 == 0:
                lines.append("%sfor i%d in pl.range(2):" % (m.group(1), n))
            line = "    " + line
        n += 1 if m else 0
        lines.append(line)
    return "\n".join(lines)


def created_source(calls: int) -> str:
    """codegen_bench's program with each call writing a tensor created right before it (and
    reading the previous one): `c_n = pl.create_tensor(...)`, `c_n = self.k(c_{n-1}, b, n, c_n)`."""
    import codegen_bench
    lines, n = [], 0
    for line in codegen_bench.make_source(calls).split("\n"):
        m = re.match(r"(\s+)(\w+) = self\.(\w+)\((\w+), (\w+), (\w+), (\w+)\)$", line)
        if m and n < calls - 1:
            ind, _, k, x, y, scalar, _ = m.groups()
            lines.append("%sc%d = pl.create_tensor([16, 16], dtype=pl.FP32)" % (ind, n))
            line = "%sc%d = self.%s(%s, %s, %s, c%d)" % (ind, n, k, "c%d" % (n - 1) if n else x, y, scalar, n)
        n += 1 if m else 0
        lines.append(line)
    return "\n".join(lines)


def submitted_source(calls: int) -> str:
    """codegen_bench's program with each call a pl.submit waiting on the previous one's TaskId:
    `t_n, id_n = pl.submit(self.k, x, b, n, t_n, deps=[id_{n-1}])` (each a unit: the submission
    and the two statements taking its results)."""
    import codegen_bench
    lines, n = [], 0
    for line in codegen_bench.make_source(calls).split("\n"):
        m = re.match(r"(\s+)(\w+) = self\.(\w+)\((.*)\)$", line)
        if m and n < calls:
            ind, dst, k, args = m.groups()
            deps = ", deps=[id%d]" % (n - 1) if n else ""
            line = "%s%s, id%d = pl.submit(self.%s, %s%s)" % (ind, dst, n, k, args, deps)
            n += 1
        lines.append(line)
    return "\n".join(lines)


# The programs measured: (name, slices before the calls, each slice read by two calls).
def host_source(calls: int) -> str:
    """A HOST-level entry of `calls` submissions of a chip-level orchestration, each waiting on
    the previous one's TaskId (built from the HOST generator's output: pto_l3_api.h)."""
    lines = ["import pypto.language as pl", "", "", "@pl.program", "class HostBench:",
             "    @pl.function(type=pl.FunctionType.InCore)",
             "    def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]])"
             " -> pl.Tensor[[16, 16], pl.FP32]:",
             "        c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)",
             "        return c",
             "    @pl.function(type=pl.FunctionType.Orchestration)",
             "    def chip(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]])"
             " -> pl.Tensor[[16, 16], pl.FP32]:",
             "        c = self.k(a, c)",
             "        return c",
             "    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)",
             "    def main(self, a: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]])"
             " -> pl.Tensor[[16, 16], pl.FP32]:",
             "        out, t = pl.submit(self.chip, a, out)"]
    lines += ["        out, t = pl.submit(self.chip, out, out, deps=[t])"] * (calls - 1)
    return "\n".join(lines + ["        return out"]) + "\n"


FORMS = (("plain", False, False), ("sliced", True, False), ("chained", True, True), ("far", True, False),
         ("looped", False, False), ("created", False, False), ("submitted", False, False), ("host", False, False))


def orchestration_source(calls: int, form: str = "plain") -> str:
    import pypto.language as pl
    from pypto import codegen
    import codegen_bench
    _, sliced, chained = next(f for f in FORMS if f[0] == form)
    special = {"far": far_source, "looped": looped_source, "created": created_source, "submitted": submitted_source,
               "host": host_source}
    source = special[form](calls) if form in special else \
        sliced_source(calls, chained) if sliced else codegen_bench.make_source(calls)
    program = pl.parse_program(source, "orch_build_bench.py")
    if form == "host":
        from pypto import host
        return host.generate_host_orchestration(program, "main").code
    return codegen.generate_orchestration(program, "main").code


def measure(calls: int, form: str = "plain") -> dict:
    from pypto.runtime import include_dir
    from pypto.runtime.build import COMMON_FLAGS, find_compiler, host_flags, precompiled_include_flags
    code = orchestration_source(calls, form)
    with tempfile.TemporaryDirectory(prefix="pypto-orch-bench-") as d:
        src = os.path.join(d, "main.cpp")
        with open(src, "w") as f:
            f.write(code)
        flags = COMMON_FLAGS + host_flags(find_compiler()) + ["-Werror"]
        rel = "host/main.cpp" if form == "host" else "orchestration/main.cpp"
        cmd = [find_compiler()] + flags + precompiled_include_flags(rel, flags) + \
            ["-I" + include_dir(), "-c", src, "-o", os.path.join(d, "main.o")]
        out = subprocess.run([sys.executable, "-c", _MEASURE] + cmd, capture_output=True, text=True)
    rc, wall, cpu, peak_kb = out.stdout.split()
    return {"calls": calls, "form": form, "ok": rc == "0", "wall_s": float(wall), "cpu_s": float(cpu),
            "peak_mb": int(peak_kb) / 1024.0, "lines": code.count("\n")}


def main(argv=None) -> list:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", default="300,1000,3000,10000")
    ap.add_argument("--quick", action="store_true", help="300 and 1,000 calls")
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args(argv)
    sizes = [300, 1000] if args.quick else [int(c) for c in args.calls.split(",")]
    from pypto.runtime.build import COMMON_FLAGS, find_compiler, host_flags
    print("orch_build_bench: compiling a straight-line orchestration (%s -Werror)"
          % " ".join(COMMON_FLAGS + host_flags(find_compiler())))
    print("  %8s %8s %10s %8s %8s %10s %12s" % ("calls", "program", "C++ lines", "wall s", "cpu s", "peak MB",
                                                "cpu ms/call"))
    rows = []
    for form, _, _ in FORMS:
        for n in sizes:
            r = measure(n, form)
            rows.append(r)
            print("  %8d %8s %10d %8.2f %8.2f %10.0f %12.2f%s" % (n, form, r["lines"], r["wall_s"], r["cpu_s"],
                                                                r["peak_mb"], 1e3 * r["cpu_s"] / n,
                                                                "" if r["ok"] else "  FAILED"))
    print("  (plain: calls alone; sliced: a slice before each call; chained: each slice also read by the next call;"
          " far: each slice read again half the program later; looped: the calls two by two in loops;"
          " created: each call writes a tensor created right before it; submitted: each call a pl.submit"
          " waiting on the previous one's TaskId; host: a HOST-level entry of submissions, each waiting on the"
          " previous one)")
    for r in rows:
        if r["calls"] == 3000:
            print("  goal (issue 17): 3,000 calls (%s) built in < 5 s and < 300 MB: %.2f s cpu (%.2fx), %.0f MB (%.2fx)"
                  % (r["form"], r["cpu_s"], r["cpu_s"] / 5.0, r["peak_mb"], r["peak_mb"] / 300.0))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return rows


if __name__ == "__main__":
    rows = main()
    sys.exit(0 if all(r["ok"] for r in rows) else 1)
