"""manual_dependencies.zh.txt, 示例 4: a manual_dep=True scratch tensor ordered by explicit edges."""
import pypto.language as pl

SOURCE = "manual_dependencies.zh.txt: 示例 4 — create_tensor(manual_dep=True)"

N = 64


@pl.program
class Mech4:
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, x: pl.Tensor[[64], pl.FP32],
             scratch: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        scratch = pl.store(pl.mul(pl.load(x, [0], [64]), 2.0), [0], scratch)
        return scratch

    @pl.function(type=pl.FunctionType.InCore)
    def consume(self, scratch: pl.Tensor[[64], pl.FP32],
                out: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        out = pl.store(pl.add(pl.load(scratch, [0], [64]), 1.0), [0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64], pl.FP32],
             out: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        scratch = pl.create_tensor([N], dtype=pl.FP32, manual_dep=True)
        scratch, prod_tid = pl.submit(self.fill, x, scratch)
        out, _ = pl.submit(self.consume, scratch, out, deps=[prod_tid])
        return out

