"""orchestration_codegen.txt, "Operation Mappings": tensor.create/read/slice/transpose/dim/assemble."""
import pypto.language as pl

SOURCE = "orchestration_codegen.txt: Operation Mappings"


@pl.program
class TensorOps:
    @pl.function(type=pl.FunctionType.InCore)
    def scale_rows(self, x: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32],
                   y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.mul(pl.load(x, [0, 0], [16, 16]), s), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 16], pl.FP32], gate: pl.Tensor[[4], pl.INT32],
             out: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
        top = pl.tensor.slice(x, [16, 16], [0, 0])
        xt = pl.tensor.transpose(top, 0, 1)
        n = pl.tensor.dim(x, 1)
        g = gate[0]
        s = pl.cast(g, pl.FP32)
        part = pl.create_tensor([16, n], dtype=pl.FP32)
        part = self.scale_rows(xt, s, part)
        out = pl.tensor.assemble(out, part, [16, 0])
        return out

