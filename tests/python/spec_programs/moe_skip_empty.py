"""manual_dependencies.zh.txt, MoE "skip empty experts": every expert is submitted statically
with predicate=(row_count[e] > 0) and depends on the gather producer."""
import pypto.language as pl

SOURCE = "manual_dependencies.zh.txt: 调度谓词 — MoE 跳过空专家"

N_EXPERTS = 4


@pl.program
class MoeSkipEmpty:
    @pl.function(type=pl.FunctionType.InCore)
    def gather(self, x: pl.Tensor[[64, 16], pl.FP32], row_count: pl.Out[pl.Tensor[[4], pl.INT32]],
               routed: pl.Out[pl.Tensor[[64, 16], pl.FP32]]) -> tuple[pl.Tensor[[4], pl.INT32], pl.Tensor[[64, 16], pl.FP32]]:
        counts = pl.tile.full([4], pl.INT32, 16)
        row_count = pl.store(counts, [0], row_count)
        routed = pl.store(pl.load(x, [0, 0], [64, 16]), [0, 0], routed)
        return row_count, routed

    @pl.function(type=pl.FunctionType.InCore)
    def expert(self, routed: pl.Tensor[[64, 16], pl.FP32], e: pl.Scalar[pl.INDEX],
               out: pl.InOut[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
        t = pl.load(routed, [e * 16, 0], [16, 16])
        out = pl.store(pl.exp(t), [e * 16, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
        row_count = pl.create_tensor([N_EXPERTS], dtype=pl.INT32)
        routed = pl.create_tensor([64, 16], dtype=pl.FP32)
        row_count, routed, g_tid = pl.submit(self.gather, x, row_count, routed)
        for e in pl.range(N_EXPERTS):
            out, e_tid = pl.submit(self.expert, routed, e, out, deps=[g_tid],
                                   predicate=(row_count[e] > 0))
        return out

