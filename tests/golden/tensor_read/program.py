# tensor.read (spec README decision 5): `T v = get_tensor_data<T>(t, ndims, idx)` waits for
# the element's producers; the value feeds a kernel scalar and an if condition.
import pypto.language as pl


@pl.program
class TensorRead:
    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32],
              y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.mul(pl.load(x, [0, 0], [16, 16]), s), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], counts: pl.Tensor[[4, 2], pl.INT32],
             y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        v = pl.tensor.read(x, [0, 1])
        y = self.scale(x, v, y)
        k = counts[2, 1]
        if k > 0:
            y = self.scale(y, 2.0, y)
        w = pl.tensor.read(y, [k, 0])
        y = self.scale(x, w, y)
        return y
