# A pl.parallel whose iterations conflict: every iteration updates the whole of `out`. The
# runtime's tracking would order them in submission order, as for a pl.range, so the analysis
# turns the loop into a pl.range and orders them with a carried TaskId: the region is one MANUAL
# scope (its verdict ends "(1 pl.parallel loop run in order: iterations conflict)").
import pypto.language as pl


@pl.program
class ParallelConflict:
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
    def main(self, x: pl.Tensor[[16, 16], pl.FP32],
             out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.create_tensor([16, 16], dtype=pl.FP32)
        t = self.copy(x, t)
        for i in pl.parallel(4):
            out = self.acc(t, out)
        return out
