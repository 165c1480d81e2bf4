"""manual_dependencies.zh.txt, `pl.spmd` 作用域形式: scoped producer + predicated consumer, and
the `for i in pl.spmd(...)` form."""
import pypto.language as pl

SOURCE = "manual_dependencies.zh.txt: pl.spmd 作用域形式"


@pl.program
class SpmdScoped:
    @pl.function(type=pl.FunctionType.InCore)
    def gate(self, rc: pl.InOut[pl.Tensor[[16, 16], pl.INT32]]) -> pl.Tensor[[16, 16], pl.INT32]:
        rc = pl.store(pl.add(pl.load(rc, [0, 0], [16, 16]), 1), [0, 0], rc)
        return rc

    @pl.function(type=pl.FunctionType.InCore)
    def expert(self, x: pl.Tensor[[16, 16], pl.FP32],
               out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        out = pl.store(pl.exp(pl.load(x, [0, 0], [16, 16])), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], rc: pl.InOut[pl.Tensor[[16, 16], pl.INT32]],
             out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.spmd(1) as g_tid:                                        # rc 的 producer
            rc = self.gate(rc)

        with pl.spmd(4, deps=[g_tid], predicate=(rc[0, 0] > 0)) as tid:  # producer 是依赖
            out = self.expert(x, out)

        for i in pl.spmd(4, sync_start=True, deps=[tid], allow_early_resolve=True):
            out = self.expert(x, out)
        return out

