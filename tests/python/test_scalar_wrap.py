"""Integer scalar arithmetic in an orchestration wraps in two's complement (as NumPy int64 and
the kernels' tile ops): generated orchestration, HOST and kernel code is compiled with -fwrapv
(pypto/runtime/build.py HOST_FLAGS, KERNEL_FLAGS). A plain signed overflow was undefined
behaviour: with m = INT64_MAX, `for i in pl.range(m, m + 2)` never ended (the call hung), in an
orchestration at -O2 and in a kernel at -O3 (where m = INT64_MAX - 1 also ran the loop twice);
now m + 2 is INT64_MIN + 1 or INT64_MIN and the loop runs zero times. Runs in a child process
with a timeout, so a hang fails the test instead of stalling it."""
import os
import subprocess
import sys

import pytest

PROGRAM = '''
import pypto.language as pl

@pl.program
class Wrap:
    @pl.function(type=pl.FunctionType.InCore)
    def bump(self, c: pl.InOut[pl.Tensor[[8], pl.FP32]]) -> pl.Tensor[[8], pl.FP32]:
        c = pl.store(pl.add(pl.load(c, [0], [8]), 1.0), [0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, m: pl.Scalar[pl.INT64], c: pl.InOut[pl.Tensor[[8], pl.FP32]]) -> pl.Tensor[[8], pl.FP32]:
        for i in pl.range(m, m + 2):
            c = self.bump(c)
        return c
'''

RUN = '''
import sys
import numpy as np
import pypto
import pypto.language as pl
prog = pypto.compile(pl.parse_program(sys.argv[1], filename="wrap.py"))
c = np.zeros(8, np.float32)
prog(int(sys.argv[2]), c)
print("ITERATIONS", int(c[0]))
'''


@pytest.mark.parametrize("m, iterations", [(5, 2), (2 ** 63 - 2, 0), (2 ** 63 - 1, 0)])
def test_orchestration_bound_that_overflows_wraps(m, iterations):
    try:
        done = subprocess.run([sys.executable, "-c", RUN, PROGRAM, str(m)], capture_output=True, text=True,
                              timeout=240, env=dict(os.environ))
    except subprocess.TimeoutExpired:
        pytest.fail("m = %d: the call hung (m + 2 overflowed in the loop bound)" % m)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "ITERATIONS %d" % iterations in done.stdout, (done.stdout, done.stderr[-2000:])


KERNEL_PROGRAM = '''
import pypto.language as pl

@pl.program
class KernelWrap:
    @pl.function(type=pl.FunctionType.InCore)
    def bump(self, m: pl.Scalar[pl.INT64], c: pl.InOut[pl.Tensor[[8], pl.FP32]]) -> pl.Tensor[[8], pl.FP32]:
        for i in pl.range(m, m + 2):
            c = pl.store(pl.add(pl.load(c, [0], [8]), 1.0), [0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, m: pl.Scalar[pl.INT64], c: pl.InOut[pl.Tensor[[8], pl.FP32]]) -> pl.Tensor[[8], pl.FP32]:
        c = self.bump(m, c)
        return c
'''


@pytest.mark.parametrize("m, iterations", [(5, 2), (2 ** 63 - 3, 2), (2 ** 63 - 2, 0), (2 ** 63 - 1, 0)])
def test_kernel_bound_that_overflows_wraps(m, iterations):
    try:
        done = subprocess.run([sys.executable, "-c", RUN, KERNEL_PROGRAM, str(m)], capture_output=True, text=True,
                              timeout=240, env=dict(os.environ))
    except subprocess.TimeoutExpired:
        pytest.fail("m = %d: the kernel's loop hung (m + 2 overflowed in the loop bound)" % m)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "ITERATIONS %d" % iterations in done.stdout, (done.stdout, done.stderr[-2000:])


FOLDED = '''
import pypto.language as pl

@pl.program
class Folded:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Scalar[pl.INT64], y: pl.Out[pl.Tensor[[2], pl.INT64]]) -> pl.Tensor[[2], pl.INT64]:
        v = 2147483648 * pl.max(a - a - 8, 4294967297)
        y = pl.tensor.write(y, [0], pl.cast(v, pl.INT64))
        return y
'''


def test_a_product_gcc_folds_to_an_overflowing_constant_builds_under_werror_and_wraps():
    # `a - a` folds to 0, so GCC saw a constant product that overflows: -Woverflow stopped the
    # -Werror build (the pypto build, with its precompiled header, and a plain g++ build alike).
    import numpy as np
    import pypto
    import pypto.language as pl
    from pypto import codegen
    from codegen_test_util import compile_cpp
    program = pl.parse_program(FOLDED, filename="folded.py")
    ok, out = compile_cpp(codegen.generate_orchestration(program, "main").code, "folded")
    assert ok, out
    prog = pypto.compile(program)
    y = np.zeros(2, np.int64)
    prog(3, y)
    prog.close()
    with np.errstate(over="ignore"):
        assert y[0] == np.int64(2147483648) * np.int64(4294967297)
