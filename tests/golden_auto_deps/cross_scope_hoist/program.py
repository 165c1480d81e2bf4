# Cross-scope hoist: tiles written in a pl.parallel loop are read after it. Each producer TaskId
# lives in its iteration's block, so the compiler declares a TaskId carry at the lowest common
# scope (before the loop: an array of 4, slot i = iteration i's id). The consumer reads tile 1
# only, and only iteration 1 writes it (provable: the other slots are disjoint), so it names
# slot 1 alone rather than all 4 ids or a barrier over them.
import pypto.language as pl


@pl.program
class CrossScopeHoist:
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
    def main(self, x: pl.Tensor[[64, 16], pl.FP32],
             out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.create_tensor([64, 16], dtype=pl.FP32)
        for i in pl.parallel(4):
            xi = pl.tensor.slice(x, [16, 16], [i * 16, 0])
            ti = pl.tensor.slice(t, [16, 16], [i * 16, 0])
            ti = self.copy(xi, ti)
        whole = pl.tensor.slice(t, [16, 16], [16, 0])
        out = self.acc(whole, out)
        return out
