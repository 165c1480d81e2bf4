"""orchestration_codegen.txt, "Output Aliasing": result = kernel_add(a, b, output); consumer."""
import pypto.language as pl

SOURCE = "orchestration_codegen.txt: Output Aliasing (emit-name remap)"


@pl.program
class OutputAlias:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel_add(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                   c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(b, [0, 0], [16, 16])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def kernel_use(self, x: pl.Tensor[[16, 16], pl.FP32],
                   y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.relu(pl.load(x, [0, 0], [16, 16])), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
             output: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             final: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        result = self.kernel_add(a, b, output)  # result != output
        consumer = self.kernel_use(result, final)
        return consumer

