"""First-call overhead of a compiled program, each figure in a fresh process (`make bench`).

    python benchmarks/first_call_bench.py [--rounds 5]

For examples/vector_add.py (16 tasks), in a new interpreter each round:
  import     `import pypto` (and pypto.language)
  compile    `pypto.compile(...)` with a warm build cache (parse, passes, codegen, cache lookup, load)
  1st call   the first run (starts the runtime's workers)
  2nd call   a later run of the same program
  torch      whether the process imported torch (it should not for NumPy inputs)
Prints the median and minimum over rounds, in milliseconds.
"""
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import numpy as np
import pypto
import pypto.language as pl
t1 = time.perf_counter()
sys.path.insert(0, %(examples)r)
import vector_add as ex
t2 = time.perf_counter()
prog = pypto.compile(ex.VectorAdd)
t3 = time.perf_counter()
a = np.ones(ex.N, np.float32); c = np.zeros(ex.N, np.float32)
prog(a, a, c)
t4 = time.perf_counter()
prog(a, a, c)
t5 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "compile": t3 - t2, "call1": t4 - t3, "call2": t5 - t4,
                  "torch": "torch" in sys.modules}))
"""


def one_round():
    code = CHILD % {"examples": os.path.join(ROOT, "examples")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 5
    one_round()   # warms the build cache
    rows = [one_round() for _ in range(rounds)]
    print("%-10s %10s %10s" % ("stage", "median ms", "min ms"))
    result = {}
    for key, label in (("import", "import"), ("compile", "compile"), ("call1", "1st call"), ("call2", "2nd call")):
        vals = [r[key] * 1e3 for r in rows]
        result[key] = statistics.median(vals)
        print("%-10s %10.2f %10.2f" % (label, statistics.median(vals), min(vals)))
    torch = any(r["torch"] for r in rows)
    print("torch imported by a NumPy-only process: %s" % ("YES" if torch else "no"))
    result["torch"] = torch
    return result


if __name__ == "__main__":
    main()
