"""pl.shl / pl.shr of two integer tiles of different dtypes (reference_ops.md §3: both integer,
result dtype = lhs dtype, no promotion). The type check accepted them and the kernel C++ then
failed to compile (binary_bcast of two element types); now the count tile is converted to the
lhs dtype first, clamped so that the shift gives what the original count gives: a negative count
leaves the value, a count past the width gives 0 (shl) or the sign (shr)."""
import numpy as np
import pytest

import pypto
import pypto.language as pl

S = [1, 6]


@pl.program
class Shifts:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[S, pl.INT32], c8: pl.Tensor[S, pl.INT8], b: pl.Tensor[S, pl.INT8],
          c32: pl.Tensor[S, pl.INT32], u: pl.Tensor[S, pl.UINT16], c16: pl.Tensor[S, pl.INT16],
          o1: pl.Out[pl.Tensor[S, pl.INT32]], o2: pl.Out[pl.Tensor[S, pl.INT8]],
          o3: pl.Out[pl.Tensor[S, pl.UINT16]]) -> tuple[pl.Tensor[S, pl.INT32], pl.Tensor[S, pl.INT8],
                                                         pl.Tensor[S, pl.UINT16]]:
        o1 = pl.store(pl.shl(pl.load(a, [0, 0], S), pl.load(c8, [0, 0], S)), [0, 0], o1)
        o2 = pl.store(pl.shr(pl.load(b, [0, 0], S), pl.load(c32, [0, 0], S)), [0, 0], o2)
        o3 = pl.store(pl.shr(pl.load(u, [0, 0], S), pl.load(c16, [0, 0], S)), [0, 0], o3)
        return o1, o2, o3

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[S, pl.INT32], c8: pl.Tensor[S, pl.INT8], b: pl.Tensor[S, pl.INT8],
             c32: pl.Tensor[S, pl.INT32], u: pl.Tensor[S, pl.UINT16], c16: pl.Tensor[S, pl.INT16],
             o1: pl.Out[pl.Tensor[S, pl.INT32]], o2: pl.Out[pl.Tensor[S, pl.INT8]],
             o3: pl.Out[pl.Tensor[S, pl.UINT16]]) -> tuple[pl.Tensor[S, pl.INT32], pl.Tensor[S, pl.INT8],
                                                            pl.Tensor[S, pl.UINT16]]:
        o1, o2, o3 = self.k(a, c8, b, c32, u, c16, o1, o2, o3)
        return o1, o2, o3


def _shift(v, n, left):
    """The prelude's Shl / Shr on one element of dtype v.dtype with an exact integer count n."""
    bits = v.dtype.itemsize * 8
    if n < 0:
        return v
    if n >= bits:
        return v.dtype.type(0) if left or v >= 0 else v.dtype.type(-1)
    with np.errstate(over="ignore"):
        return (v << v.dtype.type(n)) if left else (v >> v.dtype.type(n))


def test_shifts_by_a_count_tile_of_another_dtype():
    a = np.array([[1, -8, 3, 4, 5, 7]], np.int32)
    c8 = np.array([[1, 2, 3, 40, -3, 31]], np.int8)
    b = np.array([[-128, 100, -7, 64, 1, -1]], np.int8)
    c32 = np.array([[1, 300, 7, 8, -5, 2**31 - 1]], np.int32)
    u = np.array([[65535, 256, 7, 1, 1024, 3]], np.uint16)
    c16 = np.array([[4, -1, 15, 16, 3, 32767]], np.int16)
    outs = [np.zeros(S, np.int32), np.zeros(S, np.int8), np.zeros(S, np.uint16)]
    prog = pypto.compile(Shifts)
    try:
        prog(a, c8, b, c32, u, c16, *outs)
    finally:
        prog.close()
    for got, v, c, left in [(outs[0], a, c8, True), (outs[1], b, c32, False), (outs[2], u, c16, False)]:
        want = np.array([[_shift(x, int(n), left) for x, n in zip(v[0], c[0])]], v.dtype)
        np.testing.assert_array_equal(got, want)
    assert outs[0][0].tolist()[:4] == [2, -32, 24, 0]
