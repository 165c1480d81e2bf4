"""A pl.array of numbers that is written and never read (a value computed and then not used)
is a valid program: its generated C++ must build under -Wall -Werror (conftest sets -Werror).
g++ reported such an array as "set but not used" (-Wunused-but-set-variable), failing the
build: found while testing literal folding, `w[N * 2 - 1] = 1.0` with no read of w."""
import numpy as np
import pytest

import pypto
import pypto.language as pl

SRC = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 8], pl.FP32], y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        y = pl.store(pl.load(x, [0, 0], [16, 8]), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 8], pl.FP32], y: pl.Out[pl.Tensor[[16, 8], pl.FP32]],
             n: pl.Scalar[pl.INT32]) -> pl.Tensor[[16, 8], pl.FP32]:
        ORCH
        y = self.k(x, y)
        return y
"""

CASES = {
    "constant slot": "w = pl.array.create(4, pl.FP32)\n        w[1] = 1.0",
    "slots in a loop": "w = pl.array.create(4, pl.INT32)\n        for i in pl.range(4):\n            w[i] = i",
    "an if result written after": "u = pl.array.create(2, pl.INT32)\n        v = pl.array.create(2, pl.INT32)\n"
                                  "        z = u\n        if n > 3:\n            z = v\n        z[0] = 1",
    "bools": "b = pl.array.create(3, pl.BOOL)\n        b[2] = n > 1",
}


@pytest.mark.parametrize("orch", CASES.values(), ids=CASES.keys())
def test_an_array_written_and_never_read_builds_and_runs(orch):
    prog = pypto.compile(pl.parse_program(SRC.replace("ORCH", orch), "unread.py"))
    assert "[[maybe_unused]]" in prog.files["orchestration/main.cpp"]
    x = np.arange(128, dtype=np.float32).reshape(16, 8)
    np.testing.assert_array_equal(prog(x, n=5), x)
