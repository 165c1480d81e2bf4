# If/else (spec "IfStmt"): one PTO2_SCOPE per branch; return variables are declared before the
# if and assigned by each branch (tensor and scalar results).
import pypto.language as pl


@pl.program
class IfElse:
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

    @pl.function(type=pl.FunctionType.InCore)
    def shift(self, x: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX],
              y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]], d: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             condition: pl.Scalar[pl.INT64]) -> pl.Tensor[[16, 16], pl.FP32]:
        if condition > 0:
            c = self.kernel_a(a, b, c)
            n = 16
        else:
            c = self.kernel_b(a, b, c)
            n = condition * 2
        d = self.shift(c, n, d)
        return d
