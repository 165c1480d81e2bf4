"""TaskIds outside a manual scope: a pl.parallel array carry inherited by the enclosing pl.range
(each loop body its own AUTO PTO2_SCOPE), a TaskId if-result (one branch a None seed), and
a consumer depending on both the if-result and the whole array after the loops."""
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def stripe(self, data: pl.Tensor[[128, 16], pl.FP32], row: pl.Scalar[pl.INDEX],
               out: pl.InOut[pl.Tensor[[128, 16], pl.FP32]]) -> pl.Tensor[[128, 16], pl.FP32]:
        t = pl.load(data, [row, 0], [16, 16])
        out = pl.store(pl.add(t, 1.0), [row, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, data: pl.Tensor[[128, 16], pl.FP32], flag: pl.Scalar[pl.INDEX],
             out: pl.InOut[pl.Tensor[[128, 16], pl.FP32]]) -> pl.Tensor[[128, 16], pl.FP32]:
        prev_tid = None
        for phase in pl.range(2):
            for branch in pl.parallel(4):
                row = (phase * 4 + branch) * 16
                out, prev_tid = pl.submit(self.stripe, data, row, out, deps=[prev_tid])
        if flag > 0:
            out, t = pl.submit(self.stripe, data, 0, out, deps=[prev_tid])
        else:
            t = None
        out, _ = pl.submit(self.stripe, data, 16, out, deps=[t, prev_tid])
        return out
