# tensor.dim: a static extent is a constant (`int64_t d = 32;`); on a dynamic parameter the
# parser folds it onto the declared symbol, defined once at entry.
import pypto.language as pl

N = pl.dynamic("N")


@pl.program
class TensorDim:
    @pl.function(type=pl.FunctionType.InCore)
    def row(self, x: pl.Tensor[[N, 16], pl.FP32], r: pl.Scalar[pl.INDEX],
            y: pl.InOut[pl.Tensor[[N, 16], pl.FP32]]) -> pl.Tensor[[N, 16], pl.FP32]:
        y = pl.store(pl.load(x, [r, 0], [1, 16]), [r, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, w: pl.Tensor[[32, 16], pl.FP32], x: pl.Tensor[[N, 16], pl.FP32],
             y: pl.InOut[pl.Tensor[[N, 16], pl.FP32]]) -> pl.Tensor[[N, 16], pl.FP32]:
        d = pl.tensor.dim(w, 0)
        rows = pl.tensor.dim(x, 0)
        for r in pl.range(0, rows, d):
            y = self.row(x, r, y)
        return y
