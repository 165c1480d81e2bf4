# Scalar parameters (spec "Scalar Parameter Encoding"): float via union punning at entry and
# to_u64 at submit; ints and bools cast; literals and expressions as kernel scalar args.
import pypto.language as pl


@pl.program
class Scalars:
    @pl.function(type=pl.FunctionType.InCore)
    def scale(
        self,
        x: pl.Tensor[[16, 16], pl.FP32],
        s: pl.Scalar[pl.FP32],
        n: pl.Scalar[pl.INDEX],
        flag: pl.Scalar[pl.BOOL],
        y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
    ) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.mul(pl.load(x, [0, 0], [16, 16]), s), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[16, 16], pl.FP32],
        y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        alpha: pl.Scalar[pl.FP32],
        count: pl.Scalar[pl.INT64],
        enabled: pl.Scalar[pl.BOOL],
    ) -> pl.Tensor[[16, 16], pl.FP32]:
        y = self.scale(x, alpha, count * 2 + 1, enabled, y)
        y = self.scale(y, 0.5, 3, True, y)
        return y
