"""An integer comparison of an expression with itself (`b <= b`, `min(a, a)`, `(a + 1) < (a + 1)`)
compiles without warnings: g++ -Wall reported it (-Wtautological-compare), and under -Werror (the
suite's default, conftest.py) the orchestration did not build (found by the scalar expression
fuzzer). The printer folds such comparisons; a float compared with itself is not folded
(NaN == NaN is false), and a division keeps its run-time check."""
import math

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto.runtime.loader import RunError

import scalar_expr_fuzz as sf

EXPRS = ["pl.cast(b <= b, pl.INT64)", "pl.cast(b < b, pl.INT64)", "pl.cast(a == a, pl.INT64)",
         "pl.cast(a != a, pl.INT64)", "pl.cast((a + 1) >= (a + 1), pl.INT64)", "pl.cast((-a) > (-a), pl.INT64)",
         "min(a, a)", "max(b * 2, b * 2)", "pl.cast((a < b) == (a < b), pl.INT64)", "pl.cast((a // b) == (a // b), pl.INT64)"]
WANT = lambda a, b: [1, 0, 1, 0, 1, 0, a, sf.wrap(b * 2), 1, 1]   # noqa: E731


@pytest.mark.parametrize("side", ["kernel", "orchestration"])
def test_self_comparisons_build_and_give_their_value(side):
    prog = pypto.compile(pl.parse_program(sf.program_text(EXPRS, side), "self_cmp_%s.py" % side))
    for a, b in [(3, 5), (-7, 2), (sf.INT64_MIN, 1)]:
        c = np.zeros(len(EXPRS), np.int64)
        prog(a, b, c)
        assert list(c) == WANT(a, b)
    with pytest.raises(RunError, match="division or modulo by zero"):   # (a // b) == (a // b) still divides
        prog(1, 0, np.zeros(len(EXPRS), np.int64))


FLOAT = '''
import pypto.language as pl

@pl.program
class FloatSelf:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, v: pl.Scalar[pl.INT64], c: pl.Out[pl.Tensor[[2], pl.INT64]]) -> pl.Tensor[[2], pl.INT64]:
        c = pl.write(c, [0], v)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, f: pl.Scalar[pl.FP32], c: pl.Out[pl.Tensor[[2], pl.INT64]]) -> pl.Tensor[[2], pl.INT64]:
        if f == f:
            c = self.k(1, c)
        else:
            c = self.k(2, c)
        return c
'''


def test_a_float_compared_with_itself_is_not_folded():
    prog = pypto.compile(pl.parse_program(FLOAT, "float_self.py"))
    for f, want in [(1.5, 1), (math.nan, 2)]:
        c = np.zeros(2, np.int64)
        prog(f, c)
        assert c[0] == want
