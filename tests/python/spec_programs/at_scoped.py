"""manual_dependencies.zh.txt, `pl.at` 作用域形式: a CORE_GROUP producer and a predicated consumer."""
import pypto.language as pl

SOURCE = "manual_dependencies.zh.txt: pl.at 作用域形式"


@pl.program
class AtScoped:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[128, 128], pl.FP32], rc: pl.InOut[pl.Tensor[[128, 128], pl.INT32]],
             out: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP) as g_tid:                  # rc 的 producer
            rc = pl.store(pl.load(rc, [0, 0], [128, 128]), [0, 0], rc)

        with pl.at(level=pl.Level.CORE_GROUP,                            # producer 是依赖
                   deps=[g_tid], predicate=(rc[0, 0] > 0)) as tid:
            out = pl.store(pl.load(x, [0, 0], [128, 128]), [0, 0], out)

        with pl.at(level=pl.Level.CORE_GROUP, deps=[tid], allow_early_resolve=True, no_dep_args=[x]):
            out = pl.store(pl.add(pl.load(x, [0, 0], [128, 128]), pl.load(out, [0, 0], [128, 128])), [0, 0], out)
        return out

