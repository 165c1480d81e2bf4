"""TaskId arrays (pl.array.create(N, pl.TASK_ID)) as if-results in a MANUAL scope (issue 13,
anchor_features.md §13): a branch that writes slots of the pre-if array yields that array
itself (no code: updated in place), and an if whose branches yield different arrays gets a phi
array `PTO2TaskId fin[4];` filled slot by slot in each branch. A dependency on the result fans
out over its slots like on any TaskId array."""
import pypto.language as pl


@pl.program
class ManualTaskIdArrayIf:
    @pl.function(type=pl.FunctionType.InCore)
    def twice(self, row: pl.Scalar[pl.INDEX],
              out: pl.InOut[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
        t = pl.load(out, [row, 0], [16, 16])
        out = pl.store(pl.add(t, t), [row, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, out: pl.InOut[pl.Tensor[[64, 16], pl.FP32]],
             n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64, 16], pl.FP32]:
        with pl.manual_scope():
            tids = pl.array.create(4, pl.TASK_ID)
            if n > 1:
                for b in pl.parallel(4):
                    out, t = pl.submit(self.twice, b * 16, out)
                    tids[b] = t                  # in place: the if-result is tids itself
            if n > 2:
                again = pl.array.create(4, pl.TASK_ID)
                for b in pl.parallel(4):
                    out, u = pl.submit(self.twice, b * 16, out, deps=[tids])
                    again[b] = u
                fin = again                      # branches differ: phi array fin
            else:
                fin = tids
            out, last = pl.submit(self.twice, 0, out, deps=[fin])
        return out
