"""The generated C++ keeps the user's spelling of a name: `x_2` stays `x_2` (the upstream
`__ssa_v` rule of GetSSABaseName, which turned it into `x`, is gone)."""

import pypto.language as pl
from pypto import codegen


@pl.program
class UserNames:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16], pl.FP32], s: pl.Scalar[pl.INDEX],
          c: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
        c = pl.store(pl.load(a, [0], [16]), [0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16], pl.FP32], n: pl.Scalar[pl.INDEX],
             c: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
        x = n + 1
        x_2 = x * 3
        c = self.k(a, x_2, c)
        return c


def test_user_name_x_2_survives():
    code = codegen.generate_orchestration(UserNames, "main").code
    assert "int64_t x_2 = x * 3;" in code
    assert "params_t0.add_scalar((uint64_t)x_2);" in code
    assert "int64_t x = n + 1;" in code
