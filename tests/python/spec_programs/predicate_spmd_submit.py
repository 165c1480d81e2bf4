"""manual_dependencies.zh.txt, 调度谓词: spmd_submit gate (producer of rc) + predicated expert."""
import pypto.language as pl

SOURCE = "manual_dependencies.zh.txt: 调度谓词 — pl.spmd_submit with predicate="


@pl.program
class PredicateSubmit:
    @pl.function(type=pl.FunctionType.InCore)
    def gate(self, rc: pl.InOut[pl.Tensor[[16, 16], pl.INT32]]) -> pl.Tensor[[16, 16], pl.INT32]:
        t = pl.load(rc, [0, 0], [16, 16])
        rc = pl.store(pl.add(t, 1), [0, 0], rc)
        return rc

    @pl.function(type=pl.FunctionType.InCore)
    def expert(self, x: pl.Tensor[[16, 16], pl.FP32],
               out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        out = pl.store(pl.relu(pl.load(x, [0, 0], [16, 16])), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], rc: pl.InOut[pl.Tensor[[16, 16], pl.INT32]],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.manual_scope():
            rc, g_tid = pl.spmd_submit(self.gate, rc, core_num=1)       # rc 的 producer
            out, _ = pl.spmd_submit(
                self.expert, x, out, core_num=1,
                deps=[g_tid],                                           # producer 是依赖
                predicate=(rc[0, 0] > 0),
            )
        return out

