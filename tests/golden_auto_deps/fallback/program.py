# Fallback: a hand-placed pl.scope() (it keeps manual=false and gets no compiler edges, as the
# spec says). The code is exactly the switch-off code; the reason is in PYPTO_DUMP_IR
# (attrs["auto_deps"]). (Until kernel calls under an if were analysed, this case was an if.)
import pypto.language as pl


@pl.program
class Fallback:
    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, a: pl.Tensor[[16, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def acc(self, a: pl.Tensor[[16, 16], pl.FP32],
            c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(c, [0, 0], [16, 16])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
             n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.scope():
            r1 = self.acc(x, out)
            if n > 0:
                r2 = self.acc(x, out)
        r3 = self.acc(x, out)
        return out
