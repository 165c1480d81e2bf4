# Partially covered: the copies of a pl.parallel(n) loop write tiles of `y` (row block i)
# independently, and `acc` after the loop reads tile 0, which iteration 0 wrote: a fan-in from a
# pl.parallel of dynamic trip count cannot name every iteration's TaskId (an array of them needs
# a literal count), so the region stays AUTO. The edges from the
# producer of `t` are emitted on top, and the arguments whose every hazard is covered are
# demoted: x and t (In -> add_no_dep), out (InOut -> add_output). `y`'s tiles stay tracked.
import pypto.language as pl


@pl.program
class Partial:
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
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX], y: pl.InOut[pl.Tensor[[64, 16], pl.FP32]],
             out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.create_tensor([16, 16], dtype=pl.FP32)
        t = self.copy(x, t)
        for i in pl.parallel(n):
            ys = pl.tensor.slice(y, [16, 16], [i * 16, 0])
            ys = self.copy(t, ys)
        y0 = pl.tensor.slice(y, [16, 16], [0, 0])
        out = self.acc(y0, out)
        return out
