"""A loop bound of dtype UINT64 in an orchestration: the DSL compares in the promoted INDEX dtype
(docs/dsl.md), so `pl.range(-2, n)` runs n + 2 times. The generated C++ once compared the int64_t
loop variable with the uint64_t bound (as unsigned: no iteration at all, and a -Wsign-compare
error under -Werror, which every build of this suite uses)."""
import numpy as np
import pytest

import pypto
import pypto.language as pl


@pl.program
class UnsignedBounds:
    @pl.function(type=pl.FunctionType.InCore)
    def inc(self, y: pl.InOut[pl.Tensor[[4], pl.FP32]]) -> pl.Tensor[[4], pl.FP32]:
        y = pl.store(pl.add(pl.load(y, [0], [4]), 1.0), [0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def one(self, x: pl.Tensor[[4], pl.FP32], y: pl.Out[pl.Tensor[[4], pl.FP32]]) -> pl.Tensor[[4], pl.FP32]:
        y = pl.store(pl.add(pl.load(x, [0], [4]), 1.0), [0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, n: pl.Scalar[pl.UINT64], s: pl.Scalar[pl.INT32], x: pl.Tensor[[16], pl.FP32],
             y: pl.InOut[pl.Tensor[[4], pl.FP32]], z: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
        for i in pl.range(-2, n):        # n + 2 iterations
            y = self.inc(y)
        for i in pl.range(s, n):         # an INT32 start
            y = self.inc(y)
        for i in pl.parallel(n):
            zs = pl.tensor.slice(z, [4], [i * 4])
            zs = self.one(pl.tensor.slice(x, [4], [i * 4]), zs)
        return z


@pytest.fixture(scope="module")
def prog():
    p = pypto.compile(UnsignedBounds)
    yield p
    p.close()


@pytest.mark.parametrize("n, s", [(3, -1), (0, -3), (4, 5)])
def test_a_uint64_bound_counts_like_python(prog, n, s):
    x = np.arange(16, dtype=np.float32)
    y = np.zeros(4, np.float32)
    z = np.full(16, -7, np.float32)
    prog(n, s, x, y, z)
    runs = len(range(-2, n)) + len(range(s, n))
    np.testing.assert_array_equal(y, np.full(4, runs, np.float32))
    want = np.full(16, -7, np.float32)
    want[:4 * n] = x[:4 * n] + 1
    np.testing.assert_array_equal(z, want)
