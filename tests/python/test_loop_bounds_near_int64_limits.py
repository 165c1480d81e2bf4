"""Loops whose bounds lie near the int64 limits run Python's range exactly, in kernels,
orchestrations and HOST orchestrations alike.

The loop used to be printed `for (i = start; i < stop; i += step)` for a constant step and with
the same increment for a run-time step in a kernel: with stop near INT64_MAX and |step| > 1, the
`i += step` after the last iteration overflowed int64 (undefined behaviour; in practice i wrapped
around to a negative value, stayed below stop and the loop never ended: the call hung). Each case
runs in a child process with a timeout, so that a hang fails the test instead of stalling it.
"""
import os
import subprocess
import sys
import textwrap

import pytest

MAX, MIN = 2 ** 63 - 1, -2 ** 63

PROGRAM = '''
import pypto.language as pl

@pl.program
class Loops:
    @pl.function(type=pl.FunctionType.InCore)
    def bump(self, lo: pl.Scalar[pl.INDEX], hi: pl.Scalar[pl.INDEX], st: pl.Scalar[pl.INDEX],
             mode: pl.Scalar[pl.INDEX],
             c: pl.InOut[pl.Tensor[[8], pl.FP32]]) -> pl.Tensor[[8], pl.FP32]:
        if mode == 1:
            for i in pl.range(lo, hi, st):          # a run-time step
                c = pl.store(pl.add(pl.load(c, [0], [8]), 1.0), [0], c)
        if mode == 2:
            for i in pl.range(lo, hi, 5):           # a constant step, run-time bounds
                c = pl.store(pl.add(pl.load(c, [0], [8]), 1.0), [0], c)
        if mode == 3:
            for i in pl.range(hi, lo, -5):
                c = pl.store(pl.add(pl.load(c, [0], [8]), 1.0), [0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, lo: pl.Scalar[pl.INDEX], hi: pl.Scalar[pl.INDEX], st: pl.Scalar[pl.INDEX],
             mode: pl.Scalar[pl.INDEX],
             c: pl.InOut[pl.Tensor[[8], pl.FP32]]) -> pl.Tensor[[8], pl.FP32]:
        if mode == 4:
            for j in pl.range(lo, hi, 5):
                c = self.bump(0, 1, 1, 1, c)
        elif mode == 5:
            for j in pl.range(hi, lo, -5):
                c = self.bump(0, 1, 1, 1, c)
        else:
            c = self.bump(lo, hi, st, mode, c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)
    def host_main(self, lo: pl.Scalar[pl.INDEX], hi: pl.Scalar[pl.INDEX],
                  c: pl.InOut[pl.Tensor[[8], pl.FP32]]) -> pl.Tensor[[8], pl.FP32]:
        for k in pl.range(lo, hi, 3):
            c = self.main(0, 1, 1, 1, c)     # one iteration of the kernel loop
        return c
'''

# (entry, mode, lo, hi, step, iterations): mode picks the loop (see PROGRAM).
CASES = {
    "kernel_run_time_step_up": ("main", 1, MAX - 1, MAX, 5, 1),
    "kernel_run_time_step_down": ("main", 1, MIN + 1, MIN, -5, 1),
    "kernel_run_time_step_huge": ("main", 1, 0, MAX, 2 ** 62, 2),
    "kernel_constant_step_up": ("main", 2, MAX - 7, MAX, 0, 2),
    "kernel_constant_step_down": ("main", 3, MIN, MIN + 7, 0, 2),
    "orchestration_constant_step_up": ("main", 4, MAX - 1, MAX, 0, 1),
    "orchestration_constant_step_down": ("main", 5, MIN, MIN + 1, 0, 1),
    "host_constant_step_up": ("host_main", 0, MAX - 2, MAX, 0, 1),
}

RUN = '''
import sys
import numpy as np
import pypto
import pypto.language as pl
entry, mode, lo, hi, step, n = {case!r}
prog = pypto.compile(pl.parse_program(sys.argv[1], filename="loops.py"), entry=entry)
c = np.zeros(8, np.float32)
if entry == "main":
    prog(lo, hi, step, mode, c)
else:
    prog(lo, hi, c)
print("ITERATIONS", int(c[0]))
'''


@pytest.mark.parametrize("name", sorted(CASES))
def test_loop_near_int64_limit_runs_its_python_iterations(name):
    case = CASES[name]
    try:
        done = subprocess.run([sys.executable, "-c", textwrap.dedent(RUN.format(case=case)), PROGRAM],
                              capture_output=True, text=True, timeout=240, env=dict(os.environ))
    except subprocess.TimeoutExpired:
        pytest.fail("%s: the call hung (an overflowing loop increment never reaches stop)" % name)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "ITERATIONS %d" % case[5] in done.stdout, (name, done.stdout, done.stderr[-2000:])
