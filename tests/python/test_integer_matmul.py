"""Products of integer tiles are INT32 (reference_ops.md §2: "the result is FP32 for float inputs
and INT32 for integer inputs"), exact, and wrap modulo 2^32 like the accelerator's accumulators:
pl.matmul, pl.matmul_acc and pl.gemv of INT8 and INT32 tiles, against NumPy's int64 product
reduced to int32. (pl.matmul of integer tiles once gave an FP32 tile: 16777217 read as 16777216,
and its store into an INT32 tensor was refused.)"""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto.errors import PyptoError


@pl.program
class IntMatmul:
    @pl.function(type=pl.FunctionType.InCore)
    def k8(self, a: pl.Tensor[[4, 8], pl.INT8], b: pl.Tensor[[8, 4], pl.INT8],
           o: pl.Out[pl.Tensor[[12, 4], pl.INT32]]) -> pl.Tensor[[12, 4], pl.INT32]:
        l = pl.load(a, [0, 0], [4, 8], target_memory=pl.MemorySpace.Left)
        r = pl.load(b, [0, 0], [8, 4], target_memory=pl.MemorySpace.Right)
        p = pl.matmul(l, r)
        o = pl.store(p, [0, 0], o)
        o = pl.store(pl.matmul_acc(p, l, r), [4, 0], o)
        o = pl.store(pl.gemv(pl.load(a, [0, 0], [1, 8]), r), [8, 0], o)
        return o

    @pl.function(type=pl.FunctionType.InCore)
    def k32(self, x: pl.Tensor[[2, 2], pl.INT32], y: pl.Tensor[[2, 2], pl.INT32],
            o: pl.Out[pl.Tensor[[2, 2], pl.INT32]]) -> pl.Tensor[[2, 2], pl.INT32]:
        o = pl.store(pl.matmul(pl.load(x, [0, 0], [2, 2]), pl.load(y, [0, 0], [2, 2])), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4, 8], pl.INT8], b: pl.Tensor[[8, 4], pl.INT8],
             x: pl.Tensor[[2, 2], pl.INT32], y: pl.Tensor[[2, 2], pl.INT32],
             o8: pl.Out[pl.Tensor[[12, 4], pl.INT32]],
             o32: pl.Out[pl.Tensor[[2, 2], pl.INT32]]) -> pl.Tensor[[2, 2], pl.INT32]:
        o8 = self.k8(a, b, o8)
        o32 = self.k32(x, y, o32)
        return o32


def _int32(v):
    """int64 values reduced modulo 2^32 to int32 (two's complement)."""
    return ((v.astype(np.int64) + 2**31) % 2**32 - 2**31).astype(np.int32)


@pytest.fixture(scope="module")
def prog():
    p = pypto.compile(IntMatmul)
    yield p
    p.close()


def test_integer_products_are_exact_int32(prog):
    rng = np.random.default_rng(7)
    a = rng.integers(-128, 128, (4, 8)).astype(np.int8)
    b = rng.integers(-128, 128, (8, 4)).astype(np.int8)
    a[0, :], b[:, 0] = -128, -128                       # the extreme products
    x = np.array([[16777217, 1], [3, 2**31 - 1]], np.int32)
    y = np.array([[1, 0], [0, 2]], np.int32)            # 16777217 is not a float32; (2^31 - 1) * 2 wraps
    o8 = np.zeros((12, 4), np.int32)
    o32 = np.zeros((2, 2), np.int32)
    prog(a, b, x, y, o8, o32)
    p = a.astype(np.int64) @ b.astype(np.int64)
    np.testing.assert_array_equal(o8[0:4], _int32(p))
    np.testing.assert_array_equal(o8[4:8], _int32(2 * p))
    np.testing.assert_array_equal(o8[8:9], _int32(p[0:1]))
    np.testing.assert_array_equal(o32, _int32(x.astype(np.int64) @ y.astype(np.int64)))
    assert o32[0, 0] == 16777217 and o32[1, 1] == -2


def test_an_integer_product_is_not_a_float_tile():
    src = '''import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[2, 2], pl.INT32], o: pl.Out[pl.Tensor[[2, 2], pl.FP32]]) -> pl.Tensor[[2, 2], pl.FP32]:
        t = pl.load(a, [0, 0], [2, 2])
        o = pl.store(pl.matmul(t, t), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[2, 2], pl.INT32], o: pl.Out[pl.Tensor[[2, 2], pl.FP32]]) -> pl.Tensor[[2, 2], pl.FP32]:
        o = self.k(a, o)
        return o
'''
    with pytest.raises(PyptoError, match=r"tile.store: dtype mismatch: tile Tile\[\[2, 2\], INT32, Acc\]") as ei:
        pl.parse_program(src, "m.py")
    assert ei.value.line == 9


def test_an_accumulator_of_another_dtype_is_refused():
    src = '''import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[2, 2], pl.INT8], c: pl.Tensor[[2, 2], pl.FP32],
          o: pl.Out[pl.Tensor[[2, 2], pl.FP32]]) -> pl.Tensor[[2, 2], pl.FP32]:
        t = pl.load(a, [0, 0], [2, 2])
        o = pl.store(pl.matmul_acc(pl.load(c, [0, 0], [2, 2]), t, t), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[2, 2], pl.INT8], c: pl.Tensor[[2, 2], pl.FP32],
             o: pl.Out[pl.Tensor[[2, 2], pl.FP32]]) -> pl.Tensor[[2, 2], pl.FP32]:
        o = self.k(a, c, o)
        return o
'''
    with pytest.raises(PyptoError, match="tile.matmul_acc: acc must be INT32 for INT8 operands, got FP32") as ei:
        pl.parse_program(src, "m.py")
    assert ei.value.line == 10
