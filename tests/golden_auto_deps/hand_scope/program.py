# A hand-placed pl.scope() keeps the region AUTO (manual=false, as the spec says) with the
# representable edges on top: r1 -> r2 inside the scope is an edge; r3 after the scope cannot
# name a TaskId of the scope (its C++ variable lives in that PTO2_SCOPE block), so those hazards
# stay with the runtime's tracking, and only the arguments whose every hazard is an edge are
# demoted. (Until session 50 this case fell back whole: the golden `fallback` then.)
import pypto.language as pl


@pl.program
class HandScope:
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
