"""manual_dependencies.zh.txt, 示例 3: pl.at blocks as producer and consumer (`as tid`)."""
import pypto.language as pl

SOURCE = "manual_dependencies.zh.txt: 示例 3 — pl.at ... as tid"


@pl.program
class Mech3:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64], pl.FP32],
             mid: pl.Out[pl.Tensor[[64], pl.FP32]],
             out: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP) as tid_a:
            # 块体被 outline 成 InCore kernel
            mid = pl.store(pl.exp(pl.load(x, [0], [64])), [0], mid)
        with pl.at(level=pl.Level.CORE_GROUP, deps=[tid_a]) as tid_b:
            # 显式边——严格在 tid_a 块之后运行
            out = pl.store(pl.add(pl.load(mid, [0], [64]), pl.load(x, [0], [64])), [0], out)
        return out

