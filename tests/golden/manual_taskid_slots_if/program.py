"""A pl.parallel TaskId carry (pl.slots(4)) produced as an if-result (issue 13): the branch that
runs the loop yields its 4-slot array, the other branch yields one TaskId, so the if-result is a
phi array `PTO2TaskId prev[4];` (the single TaskId is broadcast into its slots, as a loop seed
is). The enclosing pl.range carries that array (same N) to the consumer after the loop, which
waits for every slot of the last phase that ran."""
import pypto.language as pl


@pl.program
class ManualTaskIdSlotsIf:
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
            prev = None
            for r in pl.range(3):
                if r < n:
                    for b in pl.parallel(4):
                        out, prev = pl.submit(self.twice, b * 16, out, deps=[prev])
            out, last = pl.submit(self.twice, 0, out, deps=[prev])
        return out
