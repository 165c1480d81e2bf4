# Kernel-side tensor.write (spec anchor_features §11 "Kernels"): a scalar store to global memory.
# It counts as a write for §16: `flags` is declared plain In, the kernel writes it, so it is
# upgraded to Out, and the call passes main's InOut `flags` as InOut (add_inout); the later
# reader is ordered after the write.
import pypto.language as pl


@pl.program
class KernelTensorWrite:
    @pl.function(type=pl.FunctionType.InCore)
    def mark(self, x: pl.Tensor[[4, 8], pl.FP32], flags: pl.Tensor[[4, 8], pl.FP32],
             y: pl.Out[pl.Tensor[[4, 8], pl.FP32]], i: pl.Scalar[pl.INDEX]) -> pl.Tensor[[4, 8], pl.FP32]:
        t = pl.load(x, [0, 0], [4, 8])
        y = pl.store(t, [0, 0], y)
        pl.tensor.write(flags, [i, 1], pl.cast(i, pl.FP32) * 2.0)
        pl.tensor.write(y, [0, 7], pl.cast(i, pl.FP32))
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, a: pl.Tensor[[4, 8], pl.FP32],
             b: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        b = pl.store(pl.load(a, [0, 0], [4, 8]), [0, 0], b)
        return b

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4, 8], pl.FP32], flags: pl.InOut[pl.Tensor[[4, 8], pl.FP32]],
             y: pl.Out[pl.Tensor[[4, 8], pl.FP32]], z: pl.Out[pl.Tensor[[4, 8], pl.FP32]],
             i: pl.Scalar[pl.INDEX]) -> tuple[pl.Tensor[[4, 8], pl.FP32], pl.Tensor[[4, 8], pl.FP32]]:
        y = self.mark(x, flags, y, i)
        z = self.copy(flags, z)
        return y, z
