"""The fixed cost of calling a compiled program that submits no task (issue 17), in microseconds:
through CompiledProgram.__call__ (argument checks + the program_abi binding + Runtime::run) and through the
loader's Runtime.run alone (the program_abi binding + Runtime::run). Medians of 5000 calls. A
last line gives the call with three tensor arguments (two In, one Out): the per-array checks,
the look for overlapping arguments among them (it took 14 us of such a call when it asked NumPy
for each address), and the binding's conversions.

    python benchmarks/runtime/fixed_cost.py
"""
import statistics
import time

import numpy as np

import pypto
import pypto.language as pl

LOOP_SRC = """
import pypto.language as pl

@pl.program
class Loop:
    @pl.function(type=pl.FunctionType.InCore)
    def inc(self, acc: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        acc = pl.store(pl.add(pl.load(acc, [0, 0], [16, 16]), pl.tile.full([16, 16], pl.FP32, 1.0)), [0, 0], acc)
        return acc

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, acc: pl.InOut[pl.Tensor[[16, 16], pl.FP32]], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
        for i in pl.range(n):
            acc = self.inc(acc)
        return acc
"""

THREE_SRC = LOOP_SRC.replace(
    "def main(self, acc: pl.InOut[pl.Tensor[[16, 16], pl.FP32]], n",
    "def main(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Tensor[[16, 16], pl.FP32], "
    "acc: pl.InOut[pl.Tensor[[16, 16], pl.FP32]], n")


def _median_us(f, calls=5000):
    ts = []
    for _ in range(calls):
        t0 = time.perf_counter_ns()
        f()
        ts.append(time.perf_counter_ns() - t0)
    return statistics.median(ts) / 1e3


def main():
    prog = pypto.compile(pl.parse_program(LOOP_SRC))
    acc = np.zeros((16, 16), np.float32)
    prog(acc, 0)  # n = 0: no task
    rt = prog._runtime
    tensors, scalars, _keep, _ = prog.check_args((acc, 0))
    for label, f in (("CompiledProgram.__call__", lambda: prog(acc, 0)),
                     ("loader Runtime.run (binding + Runtime::run)", lambda: rt.run(tensors, scalars))):
        med = _median_us(f)
        goal = " (goal, issue 17: <= 10 us; %.2fx of it)" % (med / 10.0) if label.startswith("Compiled") else ""
        print("fixed cost of an empty program, %s: median %.1f us%s" % (label, med, goal))
    three = pypto.compile(pl.parse_program(THREE_SRC))
    x, y = np.ones((16, 16), np.float32), np.ones((16, 16), np.float32)
    three(x, y, acc, 0)
    print("fixed cost of an empty program with three tensor arguments, CompiledProgram.__call__: median %.1f us"
          % _median_us(lambda: three(x, y, acc, 0)))


if __name__ == "__main__":
    main()
