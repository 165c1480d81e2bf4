"""orchestration_codegen.txt, "Group Functions (Mixed Kernels)": an AIC + AIV pair in a Group."""
import pypto.language as pl

SOURCE = "orchestration_codegen.txt: Group Functions (Mixed Kernels)"


@pl.program
class Mixed:
    @pl.function(type=pl.FunctionType.AIC)
    def mm(self, a: pl.Tensor[[16, 16], pl.FP16], b: pl.Tensor[[16, 16], pl.FP16],
           c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        ta = pl.move(pl.load(a, [0, 0], [16, 16]), target_memory=pl.MemorySpace.Left)
        tb = pl.move(pl.load(b, [0, 0], [16, 16]), target_memory=pl.MemorySpace.Right)
        acc = pl.matmul(ta, tb)
        c = pl.store(acc, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.AIV)
    def act(self, c: pl.Tensor[[16, 16], pl.FP32],
            out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        out = pl.store(pl.relu(pl.load(c, [0, 0], [16, 16])), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def mixed_kernel(self, a: pl.Tensor[[16, 16], pl.FP16], b: pl.Tensor[[16, 16], pl.FP16],
                     c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
                     out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = self.mm(a, b, c)
        out = self.act(c, out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP16], b: pl.Tensor[[16, 16], pl.FP16],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.create_tensor([16, 16], dtype=pl.FP32)
        out = self.mixed_kernel(a, b, c, out)
        return out

