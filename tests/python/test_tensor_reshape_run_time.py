"""A run-time pl.tensor.reshape failure names its DSL line: the reshape of a view whose size is
known only at run time (a slice clamped to a smaller dynamic tensor) failed the run with
"Tensor::reshape: cannot reshape ..." and no location (session 54 tester F #10). A reshape of a
parameter of static shape keeps the spec's single `.reshape` line (golden anchor_reshape)."""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto.runtime.loader import RunError

SRC = '''
import pypto.language as pl
M = pl.dynamic("M")


@pl.program
class RL:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16], pl.FP32], y: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
        y = pl.store(pl.adds(pl.load(x, [0], [16]), 1.0), [0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[2, M], pl.FP32], y: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
        xs = pl.tensor.slice(x, [1, 16], [0, 0])
        xv = pl.tensor.reshape(xs, [16])
        y = self.k(xv, y)
        return y
'''


def test_a_run_time_reshape_failure_is_located_and_a_fitting_one_runs():
    prog = pypto.compile(pl.parse_program(SRC, "reshape_rt.py"))
    assert "pto2_reshape_check(" in prog.files["orchestration/main.cpp"]
    y = np.zeros(16, np.float32)
    x = np.arange(32, dtype=np.float32).reshape(2, 16)
    prog(x, y)
    np.testing.assert_array_equal(y, x[0] + 1)
    with pytest.raises(RunError, match=r"pl.tensor.reshape 'xv': cannot reshape a tensor of 8 elements") as ei:
        prog(np.zeros((2, 8), np.float32), y)
    assert (ei.value.file, ei.value.line) == ("reshape_rt.py", 16)
