# Group functions (spec "Group Functions (Mixed Kernels)"): the Group's params are the task's
# args; its AIC and AIV kernels get their own kernel ids; one MixedKernels submission.
import pypto.language as pl


@pl.program
class Mixed:
    @pl.function(type=pl.FunctionType.AIC)
    def mm(self, a: pl.Tensor[[16, 16], pl.FP16], b: pl.Tensor[[16, 16], pl.FP16],
           c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        ta = pl.move(pl.load(a, [0, 0], [16, 16]), target_memory=pl.MemorySpace.Left)
        tb = pl.move(pl.load(b, [0, 0], [16, 16]), target_memory=pl.MemorySpace.Right)
        c = pl.store(pl.matmul(ta, tb), [0, 0], c)
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

    @pl.function(type=pl.FunctionType.InCore)
    def cube_only(self, a: pl.Tensor[[16, 16], pl.FP16], b: pl.Tensor[[16, 16], pl.FP16],
                  c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        # InCore with Left/Right tiles: inferred AIC -> rt_submit_aic_task
        ta = pl.move(pl.load(a, [0, 0], [16, 16]), target_memory=pl.MemorySpace.Left)
        tb = pl.move(pl.load(b, [0, 0], [16, 16]), target_memory=pl.MemorySpace.Right)
        c = pl.store(pl.matmul(ta, tb), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP16], b: pl.Tensor[[16, 16], pl.FP16],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             out2: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.create_tensor([16, 16], dtype=pl.FP32)
        out = self.mixed_kernel(a, b, c, out)
        out2 = self.cube_only(a, b, out2)
        out = self.mixed_kernel(a, b, c, out)
        return out
