"""If results inside pl.manual_scope() that code after the block reads (issue 13): a tensor
(which of two buffers was written last) and a scale factor. Like a loop carry, each gets an
exit slot declared before the MANUAL block, assigned after the if and read after the block."""
import pypto.language as pl


@pl.program
class ManualScopeIfExit:
    @pl.function(type=pl.FunctionType.InCore)
    def step(self, x: pl.Tensor[[16, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.add(pl.mul(pl.load(x, [0, 0], [16, 16]), 2.0), 1.0), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32],
              y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.mul(pl.load(x, [0, 0], [16, 16]), s), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
        done = pl.array.create(1, pl.TASK_ID)      # outlives the MANUAL block
        with pl.manual_scope():
            if n > 0:
                b, t = pl.submit(self.step, a, b)
                res = b                            # the if result is b after the step
                factor = 3.0
            else:
                t = None
                res = a
                factor = 0.5
            done[0] = t
        out, _ = pl.submit(self.scale, res, factor, out, deps=[done])
        return out
