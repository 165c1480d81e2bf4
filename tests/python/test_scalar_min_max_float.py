"""Scalar min / max on floats give Python's min / max (the first argument unless the second
compares below / above it) in orchestrations and kernels alike. The orchestration printed
`(a < b ? a : b)`, so min(nan, 1.0) was 1.0 there and nan in a kernel, and min(0.0, -0.0) was -0.0
(found comparing the two sides with Python, tests/python/scalar_expr_fuzz.py's approach)."""
import math

import numpy as np
import pytest

import pypto
import pypto.language as pl

PROGRAM = '''
import pypto.language as pl

@pl.program
class MinMax:
    @pl.function(type=pl.FunctionType.InCore)
    def w(self, v: pl.Scalar[pl.FP32], i: pl.Scalar[pl.INDEX],
          c: pl.InOut[pl.Tensor[[4], pl.FP32]]) -> pl.Tensor[[4], pl.FP32]:
        c = pl.write(c, [i], v)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Scalar[pl.FP32], b: pl.Scalar[pl.FP32],
          c: pl.InOut[pl.Tensor[[4], pl.FP32]]) -> pl.Tensor[[4], pl.FP32]:
        c = pl.write(c, [2], min(a, b))
        c = pl.write(c, [3], max(a, b))
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Scalar[pl.FP32], b: pl.Scalar[pl.FP32],
             c: pl.InOut[pl.Tensor[[4], pl.FP32]]) -> pl.Tensor[[4], pl.FP32]:
        c = self.w(min(a, b), 0, c)
        c = self.w(max(a, b), 1, c)
        c = self.k(a, b, c)
        return c
'''


def _same(x, y):
    return (math.isnan(x) and math.isnan(y)) or (x == y and math.copysign(1, x) == math.copysign(1, y))


@pytest.mark.parametrize("a, b", [(math.nan, 1.0), (1.0, math.nan), (0.0, -0.0), (-0.0, 0.0), (-7.0, 2.0),
                                  (math.inf, -math.inf), (3.0, 3.0)])
def test_orchestration_and_kernel_min_max_are_pythons(a, b):
    prog = pypto.compile(pl.parse_program(PROGRAM, "min_max.py"))
    c = np.zeros(4, np.float32)
    prog(a, b, c)
    want = [min(a, b), max(a, b)] * 2   # orchestration (0, 1), kernel (2, 3)
    assert all(_same(float(g), w) for g, w in zip(c, want)), (list(c), want)
