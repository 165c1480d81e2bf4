"""Values a loop inside pl.manual_scope() rebinds and code after the block reads (issue 13):
a ping-pong pair of tensors and a step counter. The carries live inside the MANUAL block, so
each gets an exit slot declared before it (`std::optional<Tensor> src_exit;`, `int64_t
steps_exit = 0;`: Tensor has no public default constructor in the real PTO2 runtime), assigned
after the loop and read after the block. The consumer after the block is ordered by a TaskId
array created before the scope (it outlives the block)."""
import pypto.language as pl


@pl.program
class ManualScopeLoopExit:
    @pl.function(type=pl.FunctionType.InCore)
    def step(self, x: pl.Tensor[[16, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 16])
        y = pl.store(pl.add(pl.mul(t, 2.0), 1.0), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32],
              y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.mul(pl.load(x, [0, 0], [16, 16]), s), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.InOut[pl.Tensor[[16, 16], pl.FP32]], b: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
        src = a
        dst = b
        steps = 1
        done = pl.array.create(1, pl.TASK_ID)      # outlives the MANUAL block
        with pl.manual_scope():
            prev = None
            for i in pl.range(n):
                dst, prev = pl.submit(self.step, src, dst, deps=[prev])
                tmp = src
                src = dst                          # ping-pong: src and dst swap every step
                dst = tmp
                steps = steps + 1
            done[0] = prev
        out, _ = pl.submit(self.scale, src, pl.cast(steps, pl.FP32), out, deps=[done])
        return out
