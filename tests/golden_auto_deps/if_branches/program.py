# Kernel calls under an if: tasks in a branch are analysed as if the branch ran, the two
# branches of one if never conflict, and a TaskId named after the if is merged as an if result
# (PrepareCrossScopeTaskIdHoists): the branch's id, or system.task_invalid from the branch that
# has none. Fully covered: one compiler MANUAL scope.
import pypto.language as pl

@pl.program
class IfBranches:
    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, a: pl.Tensor[[16, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), 1.0), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def acc(self, a: pl.Tensor[[16, 16], pl.FP32],
            c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(c, [0, 0], [16, 16])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 16], pl.FP32], out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
             n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.create_tensor([32, 16], dtype=pl.FP32)
        t0 = pl.tensor.slice(t, [16, 16], [0, 0])
        x0 = pl.tensor.slice(x, [16, 16], [0, 0])
        x1 = pl.tensor.slice(x, [16, 16], [16, 0])
        t0 = self.copy(x0, t0)
        if n > 2:
            t0 = self.copy(x1, t0)
        else:
            t0 = self.acc(x1, t0)
        out = self.acc(t0, out)
        return out
