"""Random chains of exactly rounded FP32 tile ops agree with NumPy bit for bit
(tests/python/tile_expr_fuzz.py): a seeded smoke here, more seeds under `make fuzz`
(scripts/fuzz_exprs.py --kind tile). The fuzzer found pl.abs(-0.0) giving -0.0, and kernels
that failed their -Werror build (a select, broadcast or three-operand op writing a fresh buffer)."""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import ir

import tile_expr_fuzz as tf


@pytest.mark.parametrize("seed", list(range(6)) + [6, 8, 12, 13, 17, 24, 26])
# 6, 8: run-time rows; 24, 26: rows and columns; 12, 13, 17: tensors
def test_tile_op_chains_agree_with_numpy(seed):
    assert tf.check(seed) == []


ABS = '''
import pypto.language as pl

@pl.program
class Abs:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[2, 9], pl.FP32], out: pl.Out[pl.Tensor[[2, 9], pl.FP32]]) -> pl.Tensor[[2, 9], pl.FP32]:
        t = pl.load(x, [0, 0], [2, 9])
        out = pl.store(pl.recip(pl.abs(t)), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[2, 9], pl.FP32], out: pl.Out[pl.Tensor[[2, 9], pl.FP32]]) -> pl.Tensor[[2, 9], pl.FP32]:
        out = self.k(x, out)
        return out
'''


def test_abs_of_negative_zero_is_positive_zero():
    x = np.array([[-0.0, 0.0, -1.0, 2.0, -np.inf, np.inf, np.nan, -1e-45, 1e-45]] * 2, np.float32)
    out = np.zeros_like(x)
    pypto.compile(pl.parse_program(ABS, "abs.py"))(x, out)
    with np.errstate(divide="ignore", over="ignore"):
        want = np.float32(1) / np.abs(x)
    assert np.array_equal(out, want, equal_nan=True) and out[0, 0] == np.inf   # 1 / abs(-0.0) is +inf
    assert not tf.same_values(np.array([-np.inf], np.float32), np.array([np.inf], np.float32)).any()


def test_the_generator_stores_full_tiles_and_reads_earlier_ones():
    for seed in range(40):
        text, (r, c), _, _ = tf.make_case(seed)
        assert text.count("pl.assemble(out," if tf.tensor_form(seed) else "pl.store(") >= 1
        assert "t%d = " % (tf.STATEMENTS + 1) in text
        assert ("[nr, %d])" % c in text) == (tf.dynamic_rows(seed) and not tf.dynamic_cols(seed))   # run-time rows
        assert ("[nr, nc])" in text) == tf.dynamic_cols(seed)                                          # and columns


FP16_SCALAR = '''
import pypto.language as pl

@pl.program
class Fp16Scalar:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[1, 8], pl.FP16], out: pl.Out[pl.Tensor[[2, 8], pl.FP16]]) -> pl.Tensor[[2, 8], pl.FP16]:
        t = pl.load(x, [0, 0], [1, 8])
        out = pl.store(pl.muls(t, 0.1), [0, 0], out)
        out = pl.store(pl.divs(t, 1e-45), [1, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[1, 8], pl.FP16], out: pl.Out[pl.Tensor[[2, 8], pl.FP16]]) -> pl.Tensor[[2, 8], pl.FP16]:
        out = self.k(x, out)
        return out
'''


def test_a_fp16_tiles_scalar_is_converted_to_fp16_first():
    """reference_ops.md §1.2: the scalar of a tile-dtype op takes the tile's dtype before the op.
    An FP16 tile's scalar was used at FP32 precision: x * 0.1 rounded differently from
    x * float16(0.1), and x / 1e-45 (0 in FP16) was ±inf or ±0 instead of ±inf and NaN."""
    x = np.array([[993.0, 1.0, -3.0, 0.0, -0.0, 7.5, 65504.0, 0.333]], np.float16)
    out = np.zeros((2, 8), np.float16)
    pypto.compile(pl.parse_program(FP16_SCALAR, "fp16_scalar.py"))(x, out)
    with np.errstate(all="ignore"):
        want = np.concatenate([x * np.float16(0.1), x / np.float16(1e-45)])
    assert np.array_equal(out, want, equal_nan=True), (out, want)
    assert np.isnan(out[1, 3])   # 0 / 0


# Fuzz seed 46 (reduced): pl.sel into a fresh FP16 buffer. GCC took the destination, passed to the
# kernel helpers' alias check as a pointer to const, for a read of uninitialised memory
# (-Wmaybe-uninitialized), so the kernel failed its -Werror build; seeds 55, 71, 79, ... the same
# through binary_bcast, ternary_bcast and binary_scalar_tile.
FRESH_SELECT = '''import math
import pypto.language as pl

@pl.program
class TileExprs:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[1, 7], pl.FP16], y: pl.Tensor[[1, 7], pl.FP16], s: pl.Scalar[pl.INT64],
          out: pl.Out[pl.Tensor[[4, 7], pl.FP16]]) -> pl.Tensor[[4, 7], pl.FP16]:
        t0 = pl.load(x, [0, 0], [1, 7])
        t1 = pl.load(y, [0, 0], [1, 7])
        t2 = pl.lrelu(t0, 65504.0)
        t3 = pl.prelu(t0, t2)
        t4 = pl.part_add(t1, t0)
        t5 = pl.add(t0, t2)
        t6 = pl.row_max(t0)
        t7 = pl.cast(pl.cast(t4, pl.INT32, mode="rint"), pl.FP16)
        t8 = pl.col_expand_mul(t5, t7)
        t11 = pl.mul(t7, t1)
        t12 = pl.minimums(t11, math.nan)
        t13 = pl.relu(t1)
        t14 = pl.maximums(t3, 3.4028235e+38)
        for i in pl.range(2):
            t13 = pl.cast(pl.cast(t8, pl.INT32, mode="floor"), pl.FP16)
        if s > 0:
            t8 = pl.minimum(t5, t3)
            t7 = pl.addsc(t3, math.nan, t8)
            t8 = pl.sel(pl.cmp(t12, t14, cmp_type=4), t14, t13)
        out = pl.store(t12, [3, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[1, 7], pl.FP16], y: pl.Tensor[[1, 7], pl.FP16], s: pl.Scalar[pl.INT64],
             out: pl.Out[pl.Tensor[[4, 7], pl.FP16]]) -> pl.Tensor[[4, 7], pl.FP16]:
        out = self.k(x, y, s, out)
        return out'''


@pytest.mark.parametrize("s", [0, 1])
def test_select_into_a_fresh_buffer_builds_with_werror(s):
    prog = pypto.compile(pl.parse_program(FRESH_SELECT, "fresh_select.py"))   # conftest: -Werror
    x = np.array([[1.0, -2.0, 0.0, 3.5, -0.5, 100.0, 7.0]], np.float16)
    y = np.array([[2.0, 2.0, -1.0, 0.25, -4.0, 1.0, -7.0]], np.float16)
    out = np.zeros((4, 7), np.float16)
    prog(x, y, s, out)
    assert np.isnan(out[3]).all() and not out[:3].any()   # minimums(t, NaN) is NaN; rows 0-2 never stored


# Fuzz seed 791: pl.cmps on an FP16 tile compared with the scalar at FP32 precision, so
# `t <= 3.4e38` was false for t = inf (the ISA's TCMPS, and every tile-dtype scalar op, take the
# scalar in the tile's dtype: 3.4e38 is inf in FP16, 65519.0 is 65504).
HALF_CMPS = '''
import pypto.language as pl

@pl.program
class HalfCmps:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[1, 8], pl.FP16], y: pl.Tensor[[1, 8], pl.FP16],
          out: pl.Out[pl.Tensor[[2, 8], pl.FP16]]) -> pl.Tensor[[2, 8], pl.FP16]:
        t = pl.load(x, [0, 0], [1, 8])
        u = pl.load(y, [0, 0], [1, 8])
        out = pl.store(pl.sel(pl.cmps(t, 3.4028235e38, cmp_type=3), u, t), [0, 0], out)
        out = pl.store(pl.sel(pl.cmps(t, 65519.0, cmp_type=5), u, t), [1, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[1, 8], pl.FP16], y: pl.Tensor[[1, 8], pl.FP16],
             out: pl.Out[pl.Tensor[[2, 8], pl.FP16]]) -> pl.Tensor[[2, 8], pl.FP16]:
        out = self.k(x, y, out)
        return out
'''


def test_fp16_cmps_takes_the_scalar_in_fp16():
    x = np.array([[np.inf, -np.inf, np.nan, 65504.0, -0.0, 1.0, 65000.0, -65504.0]], np.float16)
    y = np.full((1, 8), 7.0, np.float16)
    out = np.zeros((2, 8), np.float16)
    pypto.compile(pl.parse_program(HALF_CMPS, "half_cmps.py"))(x, y, out)
    want = np.concatenate([np.where(x <= np.float16(np.inf), y, x), np.where(x >= np.float16(65504.0), y, x)])
    assert tf.same_values(out, want).all(), out
    assert out[0, 0] == 7 and out[1, 3] == 7   # inf <= inf; 65504 >= 65519 rounded to FP16


# Fuzz seed 12 (tensor form): pl.cast of a tensor inside a kernel dropped mode=, so
# pl.cast(x, pl.INT32, mode="trunc") rounded to nearest (the default) instead of truncating.
TENSOR_CAST = '''
import pypto.language as pl

@pl.program
class TensorCast:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[1, 8], pl.FP32], out: pl.Out[pl.Tensor[[7, 8], pl.INT32]]) -> pl.Tensor[[7, 8], pl.INT32]:
        out = pl.assemble(out, pl.cast(x, pl.INT32, mode="none"), [0, 0])
        out = pl.assemble(out, pl.cast(x, pl.INT32, mode="rint"), [1, 0])
        out = pl.assemble(out, pl.cast(x, pl.INT32, mode="round"), [2, 0])
        out = pl.assemble(out, pl.cast(x, pl.INT32, mode="floor"), [3, 0])
        out = pl.assemble(out, pl.cast(x, pl.INT32, mode="ceil"), [4, 0])
        out = pl.assemble(out, pl.cast(x, pl.INT32, mode="trunc"), [5, 0])
        out = pl.assemble(out, pl.tensor.cast(x, dtype=pl.INT32, mode="odd"), [6, 0])
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[1, 8], pl.FP32], out: pl.Out[pl.Tensor[[7, 8], pl.INT32]]) -> pl.Tensor[[7, 8], pl.INT32]:
        out = self.k(x, out)
        return out
'''


def test_tensor_cast_keeps_its_mode():
    x = np.array([[0.6, -0.6, 1.5, 2.5, -1.5, -2.5, 7.9, np.nan]], np.float32)
    out = np.zeros((7, 8), np.int32)
    prog = pl.parse_program(TENSOR_CAST, "tensor_cast.py")
    pypto.compile(prog)(x, out)
    modes = ["none", "rint", "round", "floor", "ceil", "trunc", "odd"]
    want = np.concatenate([tf._round_mode("trunc" if m == "none" else m)(x) for m in modes])
    np.testing.assert_array_equal(out, want)
    assert ir.structural_equal_explain(pl.parse_program(ir.python_print(prog)), prog)[0]


# Fuzz seeds 3031, 3079: the sign of a zero max / min depended on the order the reduction met the
# zeros in, which differs between the portable loop and the AVX2 / AVX-512 lanes.
ZERO_EXTREMES = '''
import pypto.language as pl

@pl.program
class ZeroExtremes:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[4, 40], pl.FP32], out: pl.Out[pl.Tensor[[4, 40], pl.FP32]]) -> pl.Tensor[[4, 40], pl.FP32]:
        t = pl.load(x, [0, 0], [4, 40])
        one = pl.expands(t, 1.0)
        out = pl.store(pl.row_expand_div(one, pl.row_max(t)), [0, 0], out)
        out = pl.store(pl.col_expand_div(pl.tile.slice(one, [2, 40], [0, 0]), pl.col_min(t)), [2, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4, 40], pl.FP32], out: pl.Out[pl.Tensor[[4, 40], pl.FP32]]) -> pl.Tensor[[4, 40], pl.FP32]:
        out = self.k(x, out)
        return out
'''


def test_zero_extremes_have_one_sign_on_every_path():
    i, j = np.indices((4, 40))
    x = np.where((i + j) % 2 == 0, np.float32(0.0), np.float32(-0.0))   # every row and column has both zeros
    out = np.zeros((4, 40), np.float32)
    pypto.compile(pl.parse_program(ZERO_EXTREMES, "zero_extremes.py"))(x, out)
    with np.errstate(divide="ignore"):
        assert (out[:2] == np.inf).all()   # 1 / +0
        assert (out[2:] == -np.inf).all()  # 1 / -0
