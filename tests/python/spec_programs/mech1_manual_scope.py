"""manual_dependencies.zh.txt, 示例 1: pl.manual_scope (mechanism A) + an explicit edge (B)."""
import pypto.language as pl

SOURCE = "manual_dependencies.zh.txt: 示例 1 — manual_scope + deps="


@pl.program
class Mech1:
    @pl.function(type=pl.FunctionType.InCore)
    def stage1(self, x: pl.Tensor[[64], pl.FP32],
               scratch: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        scratch = pl.store(pl.exp(pl.load(x, [0], [64])), [0], scratch)
        return scratch

    @pl.function(type=pl.FunctionType.InCore)
    def stage2(self, scratch: pl.Tensor[[64], pl.FP32],
               out: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        out = pl.store(pl.neg(pl.load(scratch, [0], [64])), [0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64], pl.FP32],
             scratch: pl.Out[pl.Tensor[[64], pl.FP32]],
             out: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        with pl.manual_scope():                                           # 机制 A: scope-wide
            scratch, stage1_tid = pl.submit(self.stage1, x, scratch)
            out, _ = pl.submit(self.stage2, scratch, out, deps=[stage1_tid])  # 机制 B
        return out

