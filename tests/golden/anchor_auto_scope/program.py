# @pl.function(auto_scope=False) (spec anchor_features.md §4): MaterializeRuntimeScopes inserts
# nothing, so the only PTO2_SCOPEs are the author's: tasks outside them run in the runtime's
# implicit top-level scope; `pl.scope(mode=pl.ScopeMode.MANUAL)` is pl.manual_scope().
import pypto.language as pl


@pl.program
class AutoScope:
    @pl.function(type=pl.FunctionType.InCore)
    def inc(self, x: pl.Tensor[[16, 16], pl.FP32],
            y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.add(pl.load(x, [0, 0], [16, 16]), 1.0), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             z: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> tuple[pl.Tensor[[16, 16], pl.FP32],
                                                              pl.Tensor[[16, 16], pl.FP32]]:
        t = pl.create_tensor([16, 16], dtype=pl.FP32)
        t = self.inc(x, t)
        for i in pl.range(3):
            with pl.scope():
                t = self.inc(t, t)
        with pl.scope(mode=pl.ScopeMode.MANUAL):
            y, tid = pl.submit(self.inc, x, y)
        z = self.inc(t, z)
        return y, z
