"""Random chains of exactly rounded FP32 tile ops agree with NumPy bit for bit
(tests/python/tile_expr_fuzz.py): a seeded smoke here, more seeds under `make fuzz`
(scripts/fuzz_exprs.py --kind tile). The fuzzer found pl.abs(-0.0) giving -0.0."""
import numpy as np
import pytest

import pypto
import pypto.language as pl

import tile_expr_fuzz as tf


@pytest.mark.parametrize("seed", range(6))
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
    for seed in range(20):
        text, (r, c), _, _ = tf.make_case(seed)
        assert text.count("pl.store(") >= 1
        assert "t%d = " % (tf.STATEMENTS + 1) in text


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
