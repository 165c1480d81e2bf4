"""FP32 scalar expressions in kernels and orchestrations agree bit for bit with NumPy float32 and
Python's float //, %, min and max (tests/python/float_scalar_fuzz.py): a seeded smoke here, the
full size under `make fuzz` (scripts/fuzz_exprs.py --kind float)."""
import math

import pytest

import float_scalar_fuzz as ff


@pytest.mark.parametrize("side", ["kernel", "orchestration"])
@pytest.mark.parametrize("seed", [1, 2])
def test_float_expressions_agree_with_the_reference(side, seed):
    assert ff.check(seed, side) == []


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
