# tensor.transpose: `Tensor xt = ext_x.transpose(a, b);`, a zero-copy view passed to a kernel.
import pypto.language as pl


@pl.program
class TensorTranspose:
    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = pl.store(pl.load(x, [0, 0], [16, 32]), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        xt = pl.tensor.transpose(x, 0, 1)
        y = self.copy(xt, y)
        return y
