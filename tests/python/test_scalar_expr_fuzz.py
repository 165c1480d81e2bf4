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
    for side in ("kernel", "orchestration"):   # Python's 2**63 wrapped, on both sides
        assert sf._floordiv(side)(sf.INT64_MIN, -1) == sf.INT64_MIN
        with pytest.raises(sf.ZeroDivisor):
            sf._floordiv(side)(5, 0)
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


CONSTANT_EXPRS = ["(2147483647) + (1)", "pl.cast(pl.cast(300, pl.INT8), pl.INT64) * (3)",
                  "(a + (9223372036854775807)) * (2)", "a * (2147483648) * (4294967297)"]


@pytest.mark.parametrize("side", ["kernel", "orchestration"])
def test_constant_expressions_that_overflow_build_and_wrap(side):
    """Literals in an expression with a run-time operand wrap like it: g++ reported the constant
    overflow (-Woverflow) and the -Werror build failed (found by the fuzzer); two int-sized literals
    (2147483647 + 1) must not be added as 32-bit ints."""
    import numpy as np
    import pypto
    import pypto.language as pl
    prog = pypto.compile(pl.parse_program(sf.program_text(CONSTANT_EXPRS, side), "const_%s.py" % side))
    c = np.zeros(len(CONSTANT_EXPRS), np.int64)
    prog(5, 0, c)
    assert list(c) == [2147483648, 44 * 3, sf.wrap((5 + sf.INT64_MAX) * 2), sf.wrap(5 * 2147483648 * 4294967297)]


@pytest.mark.parametrize("expr", ["(2147483648) * (4294967297)", "(-((-9223372036854775807) - 1))",
                                  "a + (9223372036854775807) * (2)"])
def test_literal_arithmetic_beyond_int64_is_refused_when_parsed(expr):
    """An operation of literals alone is a compile-time value, exact as in Python (docs/dsl.md):
    beyond int64 it is a located parse error, not a wrapped run-time value."""
    import pypto.language as pl
    from pypto.errors import PyptoError
    with pytest.raises(PyptoError, match="does not fit in 64 bits"):
        pl.parse_program(sf.program_text([expr], "kernel"), "const.py")


# Found by the differential (scripts/fuzz_exprs.py --kind scalar, seeds 5003, 5018, 5026): a number's
# truth printed as a C++ cast, `(bool)(a * b)` or `(bool)(c ? 2147483648 : 3)`, is an
# -Wint-in-bool-context warning, so the -Werror build failed; `not` of a number likewise.
TRUTH_EXPRS = ["pl.cast(pl.cast(-(b * 3) * a, pl.BOOL), pl.INT64)", "pl.cast(pl.cast(max(2147483648, 3), pl.BOOL), pl.INT64)",
               "pl.cast(pl.cast(0 * 7, pl.BOOL), pl.INT64)", "pl.cast(not (a * b), pl.INT64)",
               "pl.cast(not max(a, 3), pl.INT64)", "pl.cast(pl.cast(pl.cast(a, pl.FP32) * 0.5, pl.BOOL), pl.INT64)"]


@pytest.mark.parametrize("side", ["kernel", "orchestration"])
@pytest.mark.parametrize("a,b", [(5, 2), (0, 7), (-3, 0)])
def test_the_truth_of_a_number_builds_under_werror(side, a, b):
    import numpy as np
    import pypto
    import pypto.language as pl
    prog = pypto.compile(pl.parse_program(sf.program_text(TRUTH_EXPRS, side), "truth_%s.py" % side))
    c = np.zeros(len(TRUTH_EXPRS), np.int64)
    prog(a, b, c)
    assert list(c) == [int(a * b != 0), 1, 0, int(a * b == 0), int(max(a, 3) == 0), int(a != 0)]


TRUTH_CONDITIONS = '''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Scalar[pl.INT64], b: pl.Scalar[pl.INT64], c: pl.Out[pl.Tensor[[4], pl.INT64]]) -> pl.Tensor[[4], pl.INT64]:
        v = pl.cast(0, pl.INT64)
        if a * b:
            v = pl.cast(1, pl.INT64)
        if not a * b:
            v = v + pl.cast(10, pl.INT64)
        if max(a, 3) and a - 1:
            v = v + pl.cast(100, pl.INT64)
        c = pl.write(c, [0], v)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Scalar[pl.INT64], b: pl.Scalar[pl.INT64], c: pl.Out[pl.Tensor[[4], pl.INT64]]) -> pl.Tensor[[4], pl.INT64]:
        if a * b or a * 2:
            c = self.k(a, b, c)
        return c
'''


@pytest.mark.parametrize("a,b,want", [(2, 3, 101), (1, 0, 10), (0, 5, 0), (-1, 4, 101)])
def test_a_number_as_an_if_condition_builds_under_werror(a, b, want):
    # `if a * b:` printed `if ((a * b))`: -Wint-in-bool-context in kernels and orchestrations
    import numpy as np
    import pypto
    import pypto.language as pl
    prog = pypto.compile(pl.parse_program(TRUTH_CONDITIONS, "truth_if.py"))
    c = np.zeros(4, np.int64)
    prog(a, b, c)
    assert c[0] == want


# Found by the differential once it drew conditional expressions (seed 7022): `max(max(b, b), b)`
# folded its inner max to `b` and printed the outer one as `(b > b ? b : b)`, a -Wtautological-compare
# error under -Werror. Operands are now folded when their C++ text is the same, not only their IR.
SELF_COMPARE_EXPRS = ["((-8) // max(max(b, b), b))", "pl.cast(min(min(a, a), a) < a, pl.INT64)",
                      "pl.cast(max(a, a) == a, pl.INT64)", "max(min(a, a), max(a, a))"]


@pytest.mark.parametrize("side", ["kernel", "orchestration"])
def test_operands_of_one_text_build_under_werror(side):
    import numpy as np
    import pypto
    import pypto.language as pl
    prog = pypto.compile(pl.parse_program(sf.program_text(SELF_COMPARE_EXPRS, side), "self_cmp_%s.py" % side))
    for a, b in ((5, 3), (-4, -3)):
        c = np.zeros(len(SELF_COMPARE_EXPRS), np.int64)
        prog(a, b, c)
        assert list(c) == [-8 // b, 0, 1, a]


@pytest.mark.parametrize("side", ["kernel", "orchestration"])
def test_conditional_expressions_run_one_branch(side):
    """The other branch divides by zero: Python never evaluates it, neither may the program."""
    import numpy as np
    import pypto
    import pypto.language as pl
    exprs = ["(a // b if b != 0 else (7))", "((7) if b == 0 else a // b)", "(a // b if b else a)"]
    prog = pypto.compile(pl.parse_program(sf.program_text(exprs, side), "ifexp_%s.py" % side))
    for a, b in ((9, 2), (9, 0), (-9, 4)):
        c = np.zeros(len(exprs), np.int64)
        prog(a, b, c)
        assert list(c) == [a // b if b else 7, 7 if b == 0 else a // b, a // b if b else a]
