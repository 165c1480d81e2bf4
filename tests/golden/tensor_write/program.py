# tensor.write (anchor §11): an element stored from the orchestration after the element's
# earlier readers and writers finished, in its own block; the result is the tensor itself.
import pypto.language as pl


@pl.program
class TensorWrite:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[4, 8], pl.FP32], c: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        c = pl.store(pl.muls(pl.load(a, [0, 0], [4, 8]), 2.0), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4, 8], pl.FP32], c: pl.Out[pl.Tensor[[4, 8], pl.FP32]],
             counts: pl.InOut[pl.Tensor[[2], pl.INT32]], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[4, 8], pl.FP32]:
        t = pl.create_tensor([4, 8], dtype=pl.FP32)
        t = self.k(a, t)
        v = pl.tensor.read(t, [1, 2])
        pl.tensor.write(t, [n, 3], v + 100.0)
        w = t[3, 7]
        pl.write(t, [0, 0], w * 0.5)
        pl.tensor.write(counts, [1], pl.cast(n, pl.INT32))
        c = self.k(t, c)
        return c
