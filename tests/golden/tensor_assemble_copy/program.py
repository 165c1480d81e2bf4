# tensor.assemble from a separate tensor: LowerTensorAssemble adds a copy task (a synthesized
# InCore kernel, pypto_copy_fp32_16x16) writing the target's view; the assemble itself is then
# an emit-name remap. The copy is ordered by automatic tracking like any task.
import pypto.language as pl


@pl.program
class TensorAssembleCopy:
    @pl.function(type=pl.FunctionType.InCore)
    def scale_rows(self, x: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32],
                   y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.mul(pl.load(x, [0, 0], [16, 16]), s), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
        part = pl.create_tensor([16, 16], dtype=pl.FP32)
        part = self.scale_rows(x, 2.0, part)
        out = pl.tensor.assemble(out, part, [16, 0])
        part = self.scale_rows(x, 3.0, part)
        out = pl.tensor.assemble(out, part, [0, 0])
        return out
