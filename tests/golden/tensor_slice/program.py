# tensor.slice (spec README decision 5): `Tensor v = src.view(shapes, offsets)`, a view that
# automatic tracking sees as overlapping its source; offsets from the loop variable.
import pypto.language as pl


@pl.program
class TensorSlice:
    @pl.function(type=pl.FunctionType.InCore)
    def relu(self, x: pl.Tensor[[16, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.relu(pl.load(x, [0, 0], [16, 16])), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
        for i in pl.range(4):
            src = pl.tensor.slice(x, [16, 16], [i * 16, 0])
            dst = pl.tensor.slice(out, [16, 16], [i * 16, 0])
            dst = self.relu(src, dst)
        return out
