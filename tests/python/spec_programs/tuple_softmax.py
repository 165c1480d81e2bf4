"""orchestration_codegen.txt, "Tuple Handling": a multi-output softmax kernel with a scalar."""
import pypto.language as pl

SOURCE = "orchestration_codegen.txt: Tuple Handling (kernel_softmax)"


@pl.program
class TupleSoftmax:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel_softmax(
        self,
        sij: pl.Tensor[[16, 16], pl.FP32],
        scale: pl.Scalar[pl.FP32],
        pij: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
        mij: pl.InOut[pl.Tensor[[16, 1], pl.FP32]],
        lij: pl.InOut[pl.Tensor[[16, 1], pl.FP32]],
    ) -> tuple[pl.Tensor[[16, 16], pl.FP32], pl.Tensor[[16, 1], pl.FP32], pl.Tensor[[16, 1], pl.FP32]]:
        s: pl.Tile[[16, 16], pl.FP32] = pl.mul(pl.load(sij, [0, 0], [16, 16]), scale)
        m = pl.row_max(s)
        p = pl.exp(pl.row_expand_sub(s, m))
        l = pl.row_sum(p)
        pij = pl.store(p, [0, 0], pij)
        mij = pl.store(m, [0, 0], mij)
        lij = pl.store(l, [0, 0], lij)
        return pij, mij, lij

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        sij: pl.Tensor[[16, 16], pl.FP32],
        scale: pl.Scalar[pl.FP32],
        pij: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
        mij: pl.InOut[pl.Tensor[[16, 1], pl.FP32]],
        lij: pl.InOut[pl.Tensor[[16, 1], pl.FP32]],
    ) -> tuple[pl.Tensor[[16, 16], pl.FP32], pl.Tensor[[16, 1], pl.FP32], pl.Tensor[[16, 1], pl.FP32]]:
        pij, mij, lij = self.kernel_softmax(sij, scale, pij, mij, lij)
        return pij, mij, lij

