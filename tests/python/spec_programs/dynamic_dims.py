"""orchestration_codegen.txt, "Dynamic-dim symbols": M as a loop bound, a create_tensor extent
and a folded pl.tensor.dim."""
import pypto.language as pl

SOURCE = "orchestration_codegen.txt: Dynamic-dim symbols"

M = pl.dynamic("M")
TILE = 16


@pl.program
class DynamicRows:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel_row(self, x: pl.Tensor[[M, 16], pl.FP32], row: pl.Scalar[pl.INDEX],
                   y: pl.InOut[pl.Tensor[[M, 16], pl.FP32]]) -> pl.Tensor[[M, 16], pl.FP32]:
        t = pl.load(x, [row, 0], [16, 16])
        y = pl.store(pl.exp(t), [row, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[M, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[M, 16], pl.FP32]]) -> pl.Tensor[[M, 16], pl.FP32]:
        rows = pl.tensor.dim(x, 0)                 # folds onto the symbol M
        tmp = pl.create_tensor([M, 16], dtype=pl.FP32)
        for i in pl.range(0, rows, TILE):
            tmp = self.kernel_row(x, i, tmp)
        for i in pl.range(0, M, TILE):
            y = self.kernel_row(tmp, i, y)
        return y

