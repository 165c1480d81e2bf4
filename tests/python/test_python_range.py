"""Python's own `for i in range(...)` is a sequential loop, the same as `pl.range(...)` without
keywords, in kernels, orchestrations and with run-time bounds and steps. Before, it was the
error "Python's range() is not supported in DSL loops"."""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import ir

SRC = '''
import pypto.language as pl
REPS = 3


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[8, 16], pl.FP32], y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        t = pl.load(x, [0, 0], [8, 16])
        for i in range(REPS):
            t = pl.add(t, t)
        digits = 0
        for j in range(4, 0, -1):
            digits = digits * 10 + j
        t = pl.add(t, pl.cast(digits, pl.FP32))
        y = pl.store(t, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def inc(self, y: pl.InOut[pl.Tensor[[8, 16], pl.FP32]], v: pl.Scalar[pl.INDEX]) -> pl.Tensor[[8, 16], pl.FP32]:
        t = pl.load(y, [0, 0], [8, 16])
        t = pl.add(t, pl.cast(v, pl.FP32))
        y = pl.store(t, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 16], pl.FP32], n: pl.Scalar[pl.INDEX], s: pl.Scalar[pl.INDEX],
             y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        y = self.k(x, y)
        for i in range(n):
            y = self.inc(y, i + 1)
        for j in range(n, 0, s):
            y = self.inc(y, j * 100)
        return y
'''


def _want(x, n, s):
    want = x * 8 + 4321
    for i in range(n):
        want = want + (i + 1)
    for j in range(n, 0, s):
        want = want + j * 100
    return want


@pytest.fixture(scope="module")
def compiled():
    return pypto.compile(pl.parse_program(SRC, "python_range.py"))


@pytest.mark.parametrize("n,s", [(0, -1), (1, -1), (4, -1), (5, -2), (-3, -1), (3, 1), (6, -4)])
def test_range_loops_run_as_python_counts(compiled, n, s):
    x = np.arange(128, dtype=np.float32).reshape(8, 16)
    y = np.zeros((8, 16), np.float32)
    compiled(x, n, s, y)
    np.testing.assert_array_equal(y, _want(x, n, s))


def test_range_is_pl_range():
    prog = pl.parse_program(SRC, "python_range.py")
    same = pl.parse_program(SRC.replace(" range(", " pl.range("), "python_range.py")
    assert ir.structural_equal_explain(prog, same)[0]
    text = ir.python_print(prog)
    assert " range(" not in text.replace("pl.range(", ""), text
    assert ir.structural_equal_explain(pl.parse_program(text), prog)[0]


def test_run_time_zero_step_fails_at_its_line(compiled):
    x = np.zeros((8, 16), np.float32)
    y = np.zeros((8, 16), np.float32)
    with pytest.raises(Exception) as e:
        compiled(x, 2, 0, y)
    assert "python_range.py:" in str(e.value) and "step is 0" in str(e.value), str(e.value)
