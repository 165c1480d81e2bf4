"""A scalar float -> integer pl.cast follows the tile cast's rule at the edges: toward zero,
out-of-range values saturate, NaN gives 0 (docs/dsl.md "Cast modes"), in a kernel and in an
orchestration. It was a plain C++ conversion, which is undefined behaviour for NaN, infinities
and values beyond the integer type (x86 gave the type's minimum: +1e20 became INT32_MIN)."""
import numpy as np
import pytest

import pypto
import pypto.language as pl

SRC = '''
import pypto.language as pl

@pl.program
class Casts:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, s: pl.Scalar[pl.FP32], n: pl.Scalar[pl.INDEX],
          c: pl.Out[pl.Tensor[[1, 2], pl.INT64]]) -> pl.Tensor[[1, 2], pl.INT64]:
        m = pl.cast(s, pl.INT32)
        c = pl.write(c, [0, 0], pl.cast(m, pl.INT64))
        c = pl.write(c, [0, 1], pl.cast(n, pl.INT64))
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, s: pl.Scalar[pl.FP32],
             c: pl.Out[pl.Tensor[[1, 2], pl.INT64]]) -> pl.Tensor[[1, 2], pl.INT64]:
        n = pl.cast(s, pl.INDEX)
        c = self.k(s, n, c)
        return c
'''

I32, I64 = np.iinfo(np.int32), np.iinfo(np.int64)


@pytest.fixture(scope="module")
def casts():
    prog = pypto.compile(pl.parse_program(SRC, filename="casts.py"))
    yield prog
    prog.close()


@pytest.mark.parametrize("value, in_kernel, in_orchestration", [
    (2.75, 2, 2), (-2.75, -2, -2),
    (float("nan"), 0, 0),
    (float("inf"), I32.max, I64.max), (float("-inf"), I32.min, I64.min),
    (1e20, I32.max, I64.max), (-1e20, I32.min, I64.min),
    (3e9, I32.max, 3000000000), (-3e9, I32.min, -3000000000),
])
def test_scalar_float_to_int_cast_saturates(casts, value, in_kernel, in_orchestration):
    c = np.full((1, 2), 7, np.int64)
    casts(value, c)
    assert c.tolist() == [[in_kernel, in_orchestration]], (value, c)
