# Dynamic-dim symbols (spec "Dynamic-dim symbols"): M is defined once at entry from the first
# parameter declaring it because the body mentions it; K appears only in a type: no definition.
import pypto.language as pl

M = pl.dynamic("M")
K = pl.dynamic("K")
TILE = 16


@pl.program
class DynamicDims:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel_row(self, x: pl.Tensor[[M, 16], pl.FP32], row: pl.Scalar[pl.INDEX],
                   y: pl.InOut[pl.Tensor[[M, 16], pl.FP32]]) -> pl.Tensor[[M, 16], pl.FP32]:
        y = pl.store(pl.load(x, [row, 0], [16, 16]), [row, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, k: pl.Tensor[[K, 16], pl.FP32], x: pl.Tensor[[M, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[M, 16], pl.FP32]]) -> pl.Tensor[[M, 16], pl.FP32]:
        rows = pl.tensor.dim(x, 0)                 # folds onto the symbol M
        tmp = pl.create_tensor([M, 16], dtype=pl.FP32)
        for i in pl.range(0, rows, TILE):
            tmp = self.kernel_row(x, i, tmp)
        for i in pl.range(0, M, TILE):
            y = self.kernel_row(tmp, i, y)
        return y
