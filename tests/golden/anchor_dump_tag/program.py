# pl.dump_tag / dumps= (spec anchor_features.md §6): marks whole-tensor task arguments for the
# device runtime's partial dump. The tag is forward-sticky by value: both later tasks consuming
# this x dump it, the task after `x` is rebound does not. Codegen writes `params_tN.dump(...)`
# after the add_* lines (tensors in argument order, never scalars); the CPU runtime records it.
import pypto.language as pl


@pl.program
class DumpTag:
    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32],
              y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.mul(pl.load(x, [0, 0], [16, 16]), s), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        pl.dump_tag(x)
        t = pl.create_tensor([16, 16], dtype=pl.FP32)
        t = self.scale(x, 2.0, t)
        t, tid = pl.submit(self.scale, x, 3.0, t, dumps=[t, t])
        x = pl.create_tensor([16, 16], dtype=pl.FP32)
        x = self.scale(t, 0.5, x)
        y = self.scale(x, 1.0, y)
        return y
