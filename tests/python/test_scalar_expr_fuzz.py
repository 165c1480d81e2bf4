"""Integer scalar expressions in kernels and orchestrations agree with Python's integers wrapped
to int64 (tests/python/scalar_expr_fuzz.py): a seeded smoke here, the full size under
`make fuzz` (scripts/fuzz_exprs.py --kind scalar). The differential found kernels dividing by zero
silently (now a located run failure, as in orchestrations)."""
import random

import pytest

import scalar_expr_fuzz as sf


@pytest.mark.parametrize("side", ["kernel", "orchestration"])
@pytest.mark.parametrize("seed", [1, 2])
def test_scalar_expressions_agree_with_python(side, seed):
    assert sf.check(seed, side) == []


def test_the_reference_wraps_and_refuses_what_the_generated_code_must():
    assert sf.wrap(sf.INT64_MAX + 1) == sf.INT64_MIN and sf.wrap(-7) == -7
    assert sf._floordiv("kernel")(sf.INT64_MIN, -1) == sf.INT64_MIN   # NumPy's bits in kernels
    for side in ("kernel", "orchestration"):
        with pytest.raises(sf.ZeroDivisor):
            sf._floordiv(side)(5, 0)
    with pytest.raises(sf.ZeroDivisor):
        sf._floordiv("orchestration")(sf.INT64_MIN, -1)
    with pytest.raises(sf.ZeroDivisor):
        sf._mod(5, 0)
    # Python's floor semantics on the signs, through a generated expression's reference
    text, f = "((a // b) % (-3))", None
    for seed in range(200):
        t, g = sf.expression(random.Random(seed), "kernel", 1)
        if t == "(a // b)":
            f = g
            break
    assert f is not None and f(-7, 2) == -4 and f(7, -2) == -4 and f(-7, -2) == 3


CONSTANT_EXPRS = ["(2147483648) * (4294967297)", "(-((-9223372036854775807) - 1))", "(2147483647) + (1)",
                  "pl.cast(pl.cast(300, pl.INT8), pl.INT64) * (3)", "a + (9223372036854775807) * (2)"]


@pytest.mark.parametrize("side", ["kernel", "orchestration"])
def test_constant_expressions_that_overflow_build_and_wrap(side):
    """An expression of literals alone that overflows int64 is printed as its wrapped value: g++
    reported the constant overflow (-Woverflow) and the -Werror build failed (found by the
    fuzzer); two int-sized literals (2147483647 + 1) must not be added as 32-bit ints."""
    import numpy as np
    import pypto
    import pypto.language as pl
    prog = pypto.compile(pl.parse_program(sf.program_text(CONSTANT_EXPRS, side), "const_%s.py" % side))
    c = np.zeros(len(CONSTANT_EXPRS), np.int64)
    prog(5, 0, c)
    assert list(c) == [sf.wrap(2147483648 * 4294967297), sf.INT64_MIN, 2147483648, 44 * 3, sf.wrap(5 + sf.INT64_MAX * 2)]
