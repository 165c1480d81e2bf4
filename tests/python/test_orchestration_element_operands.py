"""An element read as an operand in an orchestration (`if x[i, 0] > 0:`, `w[k] + 1`,
`assert x[0, 0] == 1.0`): bound to a name first, read only where Python would read it (after an
`and` / `or` or a comparison chain `a < b < c` decided without it). Before,
each was "'tensor.read' cannot be used inside an expression in orchestration code" (or
"'array.get_element' ..."): only `v = x[i, 0]` alone was accepted."""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import ir
from pypto.runtime.loader import RunError

SRC = '''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.add(pl.load(x, [0, 0], [16, 16]), 1.0), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INT64],
             y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        w = pl.array.create(2, pl.INT64)
        w[0] = n
        i = n + 14
        count = 0
        if i < 16 and x[i, 0] > 100.0:          # x[16, 0] is never read (n = 2)
            count = count + 1
        if w[0] * 2 + pl.cast(x[0, 1], pl.INT64) > 3:
            count = count + 10
        if x[0, 2] if n > 0 else x[0, 3]:
            count = count + 100
        assert x[1, 0] >= 0.0 or n < 0, "x[1, 0] must not be negative"
        if 0 <= i < 16 < x[i, 0] + 16.0:        # a chain: x[16, 0] is never read either
            count = count + 1000
        for j in pl.range(count):
            y = self.k(x, y)
        return y
'''


@pytest.fixture(scope="module")
def prog():
    return pypto.compile(pl.parse_program(SRC, "elements.py"))


@pytest.mark.parametrize("n", [-3, 0, 1, 2])
def test_reads_as_operands_run_as_python_would(prog, n):
    x = np.arange(256, dtype=np.float32).reshape(16, 16)
    x[0, 3] = 0.0
    y = np.zeros((16, 16), np.float32)
    stats = prog(x, n, y)
    i = n + 14
    count = (1 if i < 16 and x[i, 0] > 100 else 0) + (10 if n * 2 + int(x[0, 1]) > 3 else 0) + \
        (100 if (x[0, 2] if n > 0 else x[0, 3]) else 0) + (1000 if 0 <= i < 16 < x[min(i, 15), 0] + 16 else 0)
    assert stats.tasks == count
    np.testing.assert_array_equal(y, x + 1 if count else 0 * x)


def test_the_assert_reads_its_element(prog):
    x = np.arange(256, dtype=np.float32).reshape(16, 16)
    x[1, 0] = -1.0
    with pytest.raises(RunError) as e:
        prog(x, 1, np.zeros((16, 16), np.float32))
    assert "elements.py:25: assertion failed: x[1, 0] must not be negative" in str(e.value), str(e.value)


def test_printed_form_binds_the_reads_and_round_trips():
    p = pl.parse_program(SRC, "elements.py")
    text = ir.python_print(p)
    assert "x_elem = x[i, 0]" in text and "w_slot = w_1[0]" in text, text
    assert ir.structural_equal_explain(pl.parse_program(text), p)[0]
