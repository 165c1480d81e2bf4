"""Float scalar expressions (FP32, FP16, BF16) in kernels and orchestrations agree bit for bit with
NumPy float32 (each result rounded to its dtype) and Python's float //, %, min and max (tests/python/float_scalar_fuzz.py): a seeded smoke here, the
full size under `make fuzz` (scripts/fuzz_exprs.py --kind float)."""
import math

import pytest

import float_scalar_fuzz as ff


@pytest.mark.parametrize("side", ["kernel", "orchestration"])
@pytest.mark.parametrize("seed", [1, 2])
def test_float_expressions_agree_with_the_reference(side, seed):
    assert ff.check(seed, side) == []


@pytest.mark.parametrize("side", ["kernel", "orchestration"])
@pytest.mark.parametrize("dtype", ["FP16", "BF16"])
def test_half_precision_expressions_round_after_every_op(side, dtype):
    """An FP16 / BF16 scalar was computed in float and rounded only where it was stored or passed
    to a kernel: `(a * b) * b` kept float's precision in between (reference_ops.md §1.3: "rounded
    back after each op")."""
    assert ff.check(2, side, dtype=dtype) == []


_HALF_CALL = """
import pypto.language as pl

@pl.program
class HalfCall:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, p: pl.Scalar[pl.FP16], pp: pl.Scalar[pl.FP16], y: pl.InOut[pl.Tensor[[6], pl.FP32]]) -> pl.Tensor[[6], pl.FP32]:
        q = p * p
        y = pl.write(y, [2], pl.cast(q, pl.FP32))
        y = pl.write(y, [3], pl.cast(q == pp, pl.FP32))
        y = pl.write(y, [4], pl.cast(pl.cast(p * 3.0, pl.FP16), pl.FP32))
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, p: pl.Scalar[pl.FP16], y: pl.InOut[pl.Tensor[[6], pl.FP32]]) -> pl.Tensor[[6], pl.FP32]:
        pp = p * p
        y = pl.tensor.write(y, [0], pl.cast(p, pl.FP32))
        y = pl.tensor.write(y, [1], pl.cast(pp, pl.FP32))
        y = self.k(p, pp, y)
        y = pl.tensor.write(y, [5], pl.cast(pl.cast(p * 3.0, pl.FP16), pl.FP32))
        return y
"""


def test_a_half_precision_value_is_the_same_on_both_sides_of_a_call():
    """The entry rounds an FP16 argument (1/3 travels as float32 bits), an orchestration's FP16
    product equals the kernel's (it was float's 0.11105686 in one, FP16's 0.11108398 once passed),
    and pl.cast(x, pl.FP16) rounds on both sides (session 53 tester D #1)."""
    import numpy as np
    import pypto
    import pypto.language as pl
    h = np.float16(1 / 3)
    hh, h3 = float(np.float16(h * h)), float(np.float16(np.float32(h) * np.float32(3)))
    prog = pypto.compile(pl.parse_program(_HALF_CALL, "half_call.py"))
    y = np.zeros(6, np.float32)
    prog(1 / 3, y)
    assert [float(v) for v in y] == [float(h), hh, hh, 1.0, h3, h3]


def test_the_reference_knows_the_edges():
    assert ff._py_floor("//")(1.0, ff.f32(0.1)) == 9.0          # from fmod, not floor(1.0 / 0.1)
    assert ff._py_floor("%")(-1.0, math.inf) == math.inf        # Python's
    assert math.isnan(ff._py_floor("%")(1.0, 0.0)) and ff._py_floor("//")(1.0, -0.0) == -math.inf
    assert ff._to_int(32)(math.nan) == 0.0 and ff._to_int(32)(1e30) == ff.f32(2**31 - 1)
    assert ff._same(-0.0, -0.0) and not ff._same(0.0, -0.0) and ff._same(math.nan, math.nan)


@pytest.mark.parametrize("side", ["kernel", "orchestration"])
def test_floor_division_by_a_subnormal_is_computed_in_double_on_both_sides(side):
    """Seed 136: a kernel computed a scalar float // in float (quotient -16777220), the
    orchestration in double (-16777218, Python's value rounded to FP32)."""
    import numpy as np
    import pypto
    import pypto.language as pl
    texts = ["(((b * a) - (-a)) // ((b % b) - a))", "((b * a) % ((b % b) - a))"]
    prog = pypto.compile(pl.parse_program(ff.program_text(texts, side), "float_found_%s.py" % side))
    a, b = ff.f32(-3.000000645916e-39), 16777216.0
    c = np.zeros(2, np.float32)
    prog(a, b, c)
    x, y = ff.f32(ff.f32(b * a) + a), ff.f32(-a)          # (b * a) - (-a), (b % b) - a
    assert float(c[0]) == -16777218.0 == ff.f32(x // y)
    assert float(c[1]) == ff.f32(ff.f32(b * a) % y)
