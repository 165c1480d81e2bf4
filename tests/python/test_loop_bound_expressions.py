"""A loop bound that prints as a conditional or a comparison (`pl.range(min(n, 3))`, `max`, `a if c
else b`) is one operand of the loop's test. Before, the orchestration printed `i < n < 3 ? n : 3`:
`-Werror=parentheses`, and without -Werror a loop that never ended (the test was the conditional's
value). Found by the pl.at fuzzer (at_flow_fuzz seed 76), in a chunked loop's `max(0, n + 1)`."""
import numpy as np
import pytest

import pypto
import pypto.language as pl

SRC = '''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, n: pl.Scalar[pl.INDEX], ks: pl.InOut[pl.Tensor[[1, 4], pl.INT64]]) -> pl.Tensor[[1, 4], pl.INT64]:
        c = 0
        for i in pl.range(BOUND):
            c = c + 1
        pl.tensor.write(ks, [0, 0], pl.cast(c, pl.INT64))
        return ks

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, n: pl.Scalar[pl.INDEX], os: pl.InOut[pl.Tensor[[1, 4], pl.INT64]],
             ks: pl.InOut[pl.Tensor[[1, 4], pl.INT64]]) -> pl.Tensor[[1, 4], pl.INT64]:
        c = 0
        for i in pl.range(BOUND):
            c = c + 1
        for j in pl.range(5, BOUND, -1):
            c = c + 100
        pl.tensor.write(os, [0, 0], pl.cast(c, pl.INT64))
        ks = self.k(n, ks)
        return os
'''

BOUNDS = {"min(n, 3)": lambda n: min(n, 3), "max(n, 2)": lambda n: max(n, 2),
          "n if n < 4 else 4": lambda n: n if n < 4 else 4, "(n > 1) + n": lambda n: (n > 1) + n}


@pytest.mark.parametrize("bound", sorted(BOUNDS))
def test_a_compound_loop_bound_is_one_operand(bound, monkeypatch):
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    prog = pypto.compile(pl.parse_program(SRC.replace("BOUND", bound), "bounds.py"))
    for n in (0, 2, 6):
        os, ks = np.zeros((1, 4), np.int64), np.zeros((1, 4), np.int64)
        prog(n, os, ks)
        b = BOUNDS[bound](n)
        assert os[0, 0] == max(b, 0) + 100 * max(5 - b, 0), (bound, n)
        assert ks[0, 0] == max(b, 0), (bound, n)
