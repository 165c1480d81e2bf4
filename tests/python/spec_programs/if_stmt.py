"""orchestration_codegen.txt, "IfStmt": c rebound in both branches."""
import pypto.language as pl

SOURCE = "orchestration_codegen.txt: Control Flow Generation / IfStmt"


@pl.program
class Branch:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel_a(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                 c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(b, [0, 0], [16, 16])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def kernel_b(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                 c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.sub(pl.load(a, [0, 0], [16, 16]), pl.load(b, [0, 0], [16, 16])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]], condition: pl.Scalar[pl.INT64]) -> pl.Tensor[[16, 16], pl.FP32]:
        if condition > 0:
            c = self.kernel_a(a, b, c)
        else:
            c = self.kernel_b(a, b, c)
        return c

