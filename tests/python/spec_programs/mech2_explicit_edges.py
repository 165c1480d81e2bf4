"""manual_dependencies.zh.txt, 示例 2: explicit edges only (no manual_scope); `tmp` is a
runtime-allocated output (the trailing Out argument of preprocess is omitted)."""
import pypto.language as pl

SOURCE = "manual_dependencies.zh.txt: 示例 2 — deps= without manual_scope"


@pl.program
class Mech2:
    @pl.function(type=pl.FunctionType.InCore)
    def preprocess(self, x: pl.Tensor[[64], pl.FP32],
                   tmp: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        tmp = pl.store(pl.abs(pl.load(x, [0], [64])), [0], tmp)
        return tmp

    @pl.function(type=pl.FunctionType.InCore)
    def consume(self, tmp: pl.Tensor[[64], pl.FP32],
                out: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        out = pl.store(pl.sqrt(pl.load(tmp, [0], [64])), [0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64], pl.FP32],
             out: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        tmp, prep_tid = pl.submit(self.preprocess, x)
        out, _ = pl.submit(self.consume, tmp, out, deps=[prep_tid])
        return out

