# tensor.create (spec "External vs Internal Tensors"): all creates of one scope are batched
# into one alloc_tensors call at scope entry (function scope and loop-body scope), manual_dep
# adds `true`; a create whose extent is computed inside the scope stays where it is.
import pypto.language as pl


@pl.program
class TensorCreate:
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, x: pl.Tensor[[16, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], sizes: pl.Tensor[[4], pl.INT32],
             y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        a = pl.create_tensor([16, 16], dtype=pl.FP32)
        a = self.fill(x, a)
        b = pl.create_tensor([16, 16], dtype=pl.FP32, manual_dep=True)
        b = self.fill(a, b)
        for i in pl.range(2):
            t = pl.create_tensor([16, 16], dtype=pl.FP32)
            h = pl.create_tensor([8, 32], dtype=pl.FP16)
            t = self.fill(b, t)
            y = self.fill(t, y)
        n = pl.tensor.read(sizes, [0])
        scratch = pl.create_tensor([n, 16], dtype=pl.INT32)
        return y
