"""pl.tensor.dim(x, axis) inside a kernel, of an extent known only at run time: a negative axis
counts from the end, as in an orchestration. The kernel printed `shapes[(-2)]`, reading outside
the Tensor's shape array: the kernel computed with a garbage extent (1.5e8 instead of 16) and
the run "succeeded". An axis written as arithmetic of literals (`1 - 1`) is the constant too."""
import numpy as np
import pytest

import pypto
import pypto.language as pl

SRC = """
import pypto.language as pl
M = pl.dynamic("M")

@pl.program
class Dim:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[M, 8], pl.FP32], y: pl.Out[pl.Tensor[[M, 8], pl.FP32]]) -> pl.Tensor[[M, 8], pl.FP32]:
        n = pl.tensor.dim(x, AXIS)
        t = pl.load(x, [0, 0], [16, 8])
        y = pl.store(pl.mul(t, pl.cast(n, pl.FP32)), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[M, 8], pl.FP32], y: pl.Out[pl.Tensor[[M, 8], pl.FP32]]) -> pl.Tensor[[M, 8], pl.FP32]:
        y = self.k(x, y)
        return y
"""


@pytest.mark.parametrize("axis, extent", [("0", 16), ("-2", 16), ("1 - 1", 16), ("1", 8), ("-1", 8), ("3 - 4", 8)])
def test_a_kernel_reads_the_extent_of_the_axis_it_names(axis, extent):
    prog = pypto.compile(pl.parse_program(SRC.replace("AXIS", axis), "dim.py"))
    assert "shapes[(-" not in prog.files["kernels/k.cpp"] and "shapes[-" not in prog.files["kernels/k.cpp"]
    x = np.ones((16, 8), np.float32)
    np.testing.assert_array_equal(prog(x), np.full((16, 8), extent, np.float32))
