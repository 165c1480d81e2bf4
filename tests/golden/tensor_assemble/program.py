# tensor.assemble: kernels write a view of the target in place; assemble binds the result to
# the target (emit-name remap) and needs no copy. Later readers of `out` read ext_out.
import pypto.language as pl


@pl.program
class TensorAssemble:
    @pl.function(type=pl.FunctionType.InCore)
    def relu(self, x: pl.Tensor[[32, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.relu(pl.load(x, [0, 0], [16, 16])), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def total(self, x: pl.Tensor[[32, 16], pl.FP32],
              y: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
        y = pl.store(pl.load(x, [0, 0], [32, 16]), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 16], pl.FP32], out: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
             res: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
        top = pl.tensor.slice(out, [16, 16], [0, 0])
        top = self.relu(x, top)
        out = pl.tensor.assemble(out, top, [0, 0])
        bottom = pl.tensor.slice(out, [16, 16], [16, 0])
        bottom = self.relu(x, bottom)
        out = pl.tensor.assemble(out, bottom, [16, 0])
        res = self.total(out, res)
        return res
