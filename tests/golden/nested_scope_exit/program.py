"""Values leaving a pl.manual_scope() block nested in a pl.scope() block, and then the outer
block too (issue 13): a ping-pong pair of tensors and a step counter rebound by a loop in the
inner block and read after the outer one. Each leaves the inner block through its exit slot
(declared before the inner PTO2_SCOPE) and goes on into the outer block's slot right after the
inner block (`src_exit = src;`), which code after the outer block reads. A TaskId the outer loop
carries out of nested blocks (`prev`) is declared before the outer block of the loop body. The
consumer after the blocks is ordered by a TaskId array created before them."""
import pypto.language as pl


@pl.program
class NestedScopeExit:
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
             c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
        src = a
        dst = b
        steps = 1
        done = pl.array.create(1, pl.TASK_ID)      # outlives both blocks
        with pl.scope():
            with pl.manual_scope():
                prev = None
                for i in pl.range(n):
                    dst, prev = pl.submit(self.step, src, dst, deps=[prev])
                    tmp = src
                    src = dst                      # ping-pong: src and dst swap every step
                    dst = tmp
                    steps = steps + 1
                done[0] = prev
        out, first = pl.submit(self.scale, src, pl.cast(steps, pl.FP32), out, deps=[done])
        # A TaskId carried by a loop out of a pl.manual_scope() nested in a pl.scope() body.
        last = first
        for j in pl.range(2):
            with pl.scope():
                with pl.manual_scope():
                    c, last = pl.submit(self.step, out, c, deps=[last])
        out, _ = pl.submit(self.scale, c, 0.5, out, deps=[last])
        return out
