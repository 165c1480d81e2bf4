# Output aliasing by emit-name remap (spec "Output Aliasing"): `result` is the Out argument
# `output`, so the consumer reads ext_output directly; no alias declaration is emitted.
import pypto.language as pl


@pl.program
class Aliasing:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel_add(
        self,
        a: pl.Tensor[[16, 16], pl.FP32],
        b: pl.Tensor[[16, 16], pl.FP32],
        c: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
    ) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(b, [0, 0], [16, 16])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def kernel_use(
        self,
        r: pl.Tensor[[16, 16], pl.FP32],
        out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
    ) -> pl.Tensor[[16, 16], pl.FP32]:
        out = pl.store(pl.exp(pl.load(r, [0, 0], [16, 16])), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        a: pl.Tensor[[16, 16], pl.FP32],
        b: pl.Tensor[[16, 16], pl.FP32],
        output: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        final: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
    ) -> pl.Tensor[[16, 16], pl.FP32]:
        result = self.kernel_add(a, b, output)    # result != output: remapped to ext_output
        copy = result                             # a Var copy is a remap too
        consumer = self.kernel_use(copy, final)
        again = self.kernel_use(consumer, output)
        return again
