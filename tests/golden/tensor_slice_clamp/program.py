# tensor.slice extent clamping (spec anchor_features §18): offsets, then shapes clamped to the
# source's run-time extent, then the view. x has 40 rows: the tile at row 32 is clamped to 8
# rows, the one at row 48 is empty (no dependency, the kernel touches nothing). Kernels clip
# their loads (0 beyond the extent) and stores (dropped) to the smaller run-time tensor.
import pypto.language as pl


@pl.program
class TensorSliceClamp:
    @pl.function(type=pl.FunctionType.InCore)
    def add_one(self, x: pl.Tensor[[16, 16], pl.FP32],
                y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.add(pl.load(x, [0, 0], [16, 16]), 1.0), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def row_sums(self, x: pl.Tensor[[16, 16], pl.FP32],
                 s: pl.Out[pl.Tensor[[16, 1], pl.FP32]]) -> pl.Tensor[[16, 1], pl.FP32]:
        s = pl.store(pl.row_sum(pl.load(x, [0, 0], [16, 16])), [0, 0], s)
        return s

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[40, 16], pl.FP32], out: pl.Out[pl.Tensor[[40, 16], pl.FP32]],
             sums: pl.Out[pl.Tensor[[64, 1], pl.FP32]]) -> tuple[pl.Tensor[[40, 16], pl.FP32],
                                                                 pl.Tensor[[64, 1], pl.FP32]]:
        for i in pl.range(4):
            src = pl.tensor.slice(x, [16, 16], [i * 16, 0])
            dst = pl.tensor.slice(out, [16, 16], [i * 16, 0])
            dst = self.add_one(src, dst)
            sd = pl.tensor.slice(sums, [16, 1], [i * 16, 0])
            sd = self.row_sums(src, sd)
        return out, sums
