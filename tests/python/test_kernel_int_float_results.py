"""Integer tiles through float ops: exp / log / sqrt / rsqrt / recip compute in float
(docs/kernels.md), and a float scalar operand of an integer tile op is converted to the tile's
dtype (reference_ops.md §1.2). Both go back to the integer dtype as pl.cast converts: toward
zero, out-of-range values saturated, NaN gives 0 (reference_ops.md §5 [choice]). They used the
bare C++ conversion, undefined for NaN and out-of-range values: exp(100) on INT32 came out as
-2147483648, sqrt(-1) as INT_MIN, exp(6) on UINT8 as 147, `t + NaN` as `t - 2^31`."""
import numpy as np
import pytest

import pypto
import pypto.language as pl

from test_kernel_int_wrap import _run_under_ubsan

I32 = pl.Tensor[[1, 8], pl.INT32]
U8 = pl.Tensor[[1, 8], pl.UINT8]


@pl.program
class IntThroughFloat:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: I32, y: U8, s: pl.Scalar[pl.FP32], e: pl.Out[I32], q: pl.Out[I32], lg: pl.Out[I32],
          r: pl.Out[I32], a: pl.Out[I32], e8: pl.Out[U8]) -> tuple[I32, I32, I32, I32, I32, U8]:
        t = pl.load(x, [0, 0], [1, 8])
        u = pl.load(y, [0, 0], [1, 8])
        e = pl.store(pl.exp(t), [0, 0], e)
        q = pl.store(pl.sqrt(t), [0, 0], q)
        lg = pl.store(pl.log(t), [0, 0], lg)
        r = pl.store(pl.recip(t), [0, 0], r)
        a = pl.store(pl.adds(t, s), [0, 0], a)
        e8 = pl.store(pl.exp(u), [0, 0], e8)
        return e, q, lg, r, a, e8

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: I32, y: U8, s: pl.Scalar[pl.FP32], e: pl.Out[I32], q: pl.Out[I32], lg: pl.Out[I32],
             r: pl.Out[I32], a: pl.Out[I32], e8: pl.Out[U8]) -> tuple[I32, I32, I32, I32, I32, U8]:
        e, q, lg, r, a, e8 = self.k(x, y, s, e, q, lg, r, a, e8)
        return e, q, lg, r, a, e8


def _as_cast(v, dtype):
    """pl.cast's float -> integer rule: toward zero, saturated, NaN gives 0."""
    info = np.iinfo(dtype)
    v = np.asarray(v, np.float64)
    out = np.where(np.isnan(v), 0, np.clip(np.trunc(np.nan_to_num(v, posinf=info.max, neginf=info.min)),
                                           info.min, info.max))
    return out.astype(dtype)


@pytest.fixture(scope="module")
def prog():
    p = pypto.compile(IntThroughFloat)
    yield p
    p.close()


@pytest.mark.parametrize("s", [float("nan"), 1e10, -1e10, 2.75])
def test_integer_results_of_float_ops_saturate(prog, s):
    x = np.array([[3, 100, -1, 4, 0, -100, 2**31 - 1, 1]], np.int32)
    y = np.array([[3, 6, 255, 4, 0, 1, 5, 88]], np.uint8)
    outs = [np.zeros((1, 8), np.int32) for _ in range(5)] + [np.zeros((1, 8), np.uint8)]
    prog(x, y, s, *outs)
    e, q, lg, r, a, e8 = outs
    f = x.astype(np.float32)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(e, _as_cast(np.exp(f), np.int32))
        np.testing.assert_array_equal(q, _as_cast(np.sqrt(f), np.int32))
        np.testing.assert_array_equal(lg, _as_cast(np.log(f), np.int32))
        np.testing.assert_array_equal(r, _as_cast(np.float32(1) / f, np.int32))
        np.testing.assert_array_equal(e8, _as_cast(np.exp(y.astype(np.float32)), np.uint8))
        # the scalar becomes an INT32 first (NaN -> 0, 1e10 -> INT32_MAX), then the sum wraps
        want = (x.astype(np.int64) + int(_as_cast(np.float32(s), np.int32))).astype(np.int32)
    np.testing.assert_array_equal(a, want)
    assert e[0, 1] == 2**31 - 1 and q[0, 2] == 0 and e8[0, 1] == 255


UBSAN_SRC = r"""
#include "pypto_kernel_prelude.h"
#include <cmath>
#include <cstdio>
int main() {
  using namespace pypto_kernel;
  const int32_t a[4] = {100, -1, 0, 4};
  int32_t e[4], q[4], l[4];
  unary_float<Storage::I32>(e, a, 4, Exp{});
  unary_float<Storage::I32>(q, a, 4, Sqrt{});
  unary_float<Storage::I32>(l, a, 4, Log{});
  std::printf("%d %d %d %d\n", e[0], q[1], l[2], q[3]);
  return 0;
}
"""


def test_the_conversion_is_defined_under_ubsan(tmp_path):
    """unary_float of an INT32 tile, built with UBSan's float-cast-overflow check (not part of
    -fsanitize=undefined in GCC) and no recovery: exp(100), sqrt(-1) and log(0) convert cleanly."""
    run = _run_under_ubsan(tmp_path, UBSAN_SRC, "u", sanitize="undefined,float-cast-overflow")
    assert run.stdout.split() == ["2147483647", "0", "-2147483648", "2"]
