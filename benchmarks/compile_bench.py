"""Compile times of every example program, cold and warm, and the first-call overhead.

    python benchmarks/compile_bench.py [--quick] [--json out.json] [--compare before.json]

Per example (each @pl.program of examples/*.py), each in a fresh process so nothing is warm in
memory:
  cold-empty   pypto.compile with an empty cache (the first program ever: includes building the
               fixed parts, e.g. the precompiled kernel prelude)
  cold         pypto.compile of the program with a cache that holds only the other examples
               (a new program on a machine that has compiled before)
  warm         the same pypto.compile again in the same process (cache hit: no compiler runs)
  call1/call2  the first call (loads the library, starts the runtime) and the second call
  import       seconds to import pypto + pypto.language in that process (torch never imported)
``--compare`` prints the figures of an earlier ``--json`` run (e.g. the code before a change)
next to these ones. Figures only, no assertions.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "examples")

_CHILD = r"""
import importlib.util, json, sys, time
t0 = time.perf_counter()
import pypto, pypto.language as pl
from pypto._core import ir
t_import = time.perf_counter() - t0
spec = importlib.util.spec_from_file_location("ex", sys.argv[1])
mod = importlib.util.module_from_spec(spec); sys.modules["ex"] = mod; spec.loader.exec_module(mod)
prog = getattr(mod, sys.argv[2])
t = time.perf_counter(); compiled = pypto.compile(prog); cold = time.perf_counter() - t
t = time.perf_counter(); pypto.compile(prog); warm = time.perf_counter() - t
calls = []
if hasattr(compiled, "params"):
    args = compiled.random_inputs(seed=0, dims={d: 64 for p in compiled.params for d in p.shape if isinstance(d, str)})
    for _ in range(2):
        t = time.perf_counter(); compiled(*args); calls.append(time.perf_counter() - t)
print(json.dumps({"import": t_import, "cold": cold, "warm": warm, "calls": calls,
                  "torch_imported": "torch" in sys.modules}))
"""


def programs():
    """(example file, program name) of every @pl.program class defined at an example's top level."""
    out = []
    for path in sorted(glob.glob(os.path.join(EXAMPLES, "*.py"))):
        with open(path) as f:
            lines = f.read().splitlines()
        for i, line in enumerate(lines):
            if line.startswith("@pl.program") and i + 1 < len(lines) and lines[i + 1].startswith("class "):
                out.append((path, lines[i + 1][6:].split("(")[0].split(":")[0].strip()))
    return out


def _child(path: str, name: str, cache: str) -> dict:
    env = dict(os.environ, PYPTO_CACHE_DIR=cache, PYPTO_QUIET="1")
    r = subprocess.run([sys.executable, "-c", _CHILD, path, name], env=env, capture_output=True, text=True)
    if r.returncode != 0:
        return {"error": (r.stderr or r.stdout).strip().splitlines()[-1:]}
    return json.loads(r.stdout.strip().splitlines()[-1])


def measure(quick: bool = False) -> dict:
    results = {}
    progs = programs()[:3] if quick else programs()
    shared = tempfile.mkdtemp(prefix="pypto-bench-shared-")
    try:
        for path, name in progs:
            empty = tempfile.mkdtemp(prefix="pypto-bench-empty-")
            try:
                first = _child(path, name, empty)
            finally:
                shutil.rmtree(empty, ignore_errors=True)
            again = _child(path, name, shared)   # the cache holds the examples measured before
            key = "%s:%s" % (os.path.basename(path), name)
            results[key] = {"cold_empty": first.get("cold"), "cold": again.get("cold"), "warm": again.get("warm"),
                            "call1": (again.get("calls") or [None])[0], "call2": (again.get("calls") or [None, None])[-1],
                            "import": again.get("import"), "torch_imported": again.get("torch_imported"),
                            "error": first.get("error") or again.get("error")}
    finally:
        shutil.rmtree(shared, ignore_errors=True)
    return results


def _f(v, scale=1.0, fmt="%7.2f"):
    return fmt % (v * scale) if isinstance(v, (int, float)) else "%7s" % "-"


def report(results: dict, before: dict = None) -> None:
    print("%-34s %9s %7s %8s %9s %9s" % ("example:program", "cold-empty", "cold", "warm(ms)", "call1(ms)", "call2(ms)")
          + ("   | before: cold-empty   cold  warm(ms)" if before else ""))
    for key, r in results.items():
        line = "%-34s %9s %7s %8s %9s %9s" % (key, _f(r["cold_empty"]), _f(r["cold"]), _f(r["warm"], 1e3, "%8.1f"),
                                               _f(r["call1"], 1e3, "%9.1f"), _f(r["call2"], 1e3, "%9.1f"))
        if before and key in before:
            b = before[key]
            line += "   |   %9s %7s %8s" % (_f(b["cold_empty"]), _f(b["cold"]), _f(b["warm"], 1e3, "%8.1f"))
        if r.get("error"):
            line += "  error: %s" % r["error"]
        print(line)
    ok = [r for r in results.values() if isinstance(r.get("cold"), float)]
    if ok:
        print("mean: cold-empty %.2f s, cold %.2f s, warm %.1f ms, first call %.1f ms; torch imported: %s"
              % (sum(r["cold_empty"] for r in ok) / len(ok), sum(r["cold"] for r in ok) / len(ok),
                 1e3 * sum(r["warm"] for r in ok) / len(ok),
                 1e3 * sum(r["call1"] or 0 for r in ok) / len(ok), any(r["torch_imported"] for r in ok)))


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the first three programs only")
    ap.add_argument("--json", help="write the figures to this file")
    ap.add_argument("--compare", help="an earlier --json file to print alongside")
    args = ap.parse_args(argv)
    results = measure(args.quick)
    before = None
    if args.compare and os.path.isfile(args.compare):
        with open(args.compare) as f:
            before = json.load(f)
    report(results, before)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return results


if __name__ == "__main__":
    main()
