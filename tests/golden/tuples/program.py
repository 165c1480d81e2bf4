# Tuple-returning calls (spec "Tuple Handling"): each unpacked element is the InOut argument
# it writes back; tensors first, then scalars; a later task reads one element.
import pypto.language as pl


@pl.program
class Tuples:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel_softmax(
        self,
        sij: pl.Tensor[[16, 16], pl.FP32],
        scale: pl.Scalar[pl.FP32],
        pij: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
        mij: pl.InOut[pl.Tensor[[16, 1], pl.FP32]],
        lij: pl.InOut[pl.Tensor[[16, 1], pl.FP32]],
    ) -> tuple[pl.Tensor[[16, 16], pl.FP32], pl.Tensor[[16, 1], pl.FP32], pl.Tensor[[16, 1], pl.FP32]]:
        s = pl.mul(pl.load(sij, [0, 0], [16, 16]), scale)
        m = pl.row_max(s)
        p = pl.exp(pl.row_expand_sub(s, m))
        l = pl.row_sum(p)
        pij = pl.store(p, [0, 0], pij)
        mij = pl.store(m, [0, 0], mij)
        lij = pl.store(l, [0, 0], lij)
        return pij, mij, lij

    @pl.function(type=pl.FunctionType.InCore)
    def kernel_norm(
        self,
        p: pl.Tensor[[16, 16], pl.FP32],
        l: pl.Tensor[[16, 1], pl.FP32],
        o: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
    ) -> pl.Tensor[[16, 16], pl.FP32]:
        o = pl.store(pl.row_expand_div(pl.load(p, [0, 0], [16, 16]), pl.load(l, [0, 0], [16, 1])), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        sij: pl.Tensor[[16, 16], pl.FP32],
        scale: pl.Scalar[pl.FP32],
        pij: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
        mij: pl.InOut[pl.Tensor[[16, 1], pl.FP32]],
        lij: pl.InOut[pl.Tensor[[16, 1], pl.FP32]],
        out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
    ) -> pl.Tensor[[16, 16], pl.FP32]:
        pij, mij, lij = self.kernel_softmax(sij, scale, pij, mij, lij)
        out = self.kernel_norm(pij, lij, out)
        return out
