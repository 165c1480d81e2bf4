# Fallback: a user pl.manual_scope() in the region (never analysed: inside it deps= stays the
# only source of edges, as the spec says). The code is exactly the switch-off code; the reason is
# in PYPTO_DUMP_IR (attrs["auto_deps"]). (This case was a hand-placed pl.scope() until those got
# edges on top of AUTO tracking: golden `hand_scope`; before that, an if.)
import pypto.language as pl


@pl.program
class Fallback:
    @pl.function(type=pl.FunctionType.InCore)
    def acc(self, a: pl.Tensor[[16, 16], pl.FP32],
            c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(c, [0, 0], [16, 16])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
             y: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.manual_scope():
            r1, t1 = pl.submit(self.acc, x, out)
            r2, t2 = pl.submit(self.acc, x, r1, deps=[t1])
        r3 = self.acc(x, y)
        r4 = self.acc(x, r3)
        return out
