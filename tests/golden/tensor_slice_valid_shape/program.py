# tensor.slice valid_shape (spec anchor_features §10) in an orchestration: rank-checked, at most
# the slice shape when static, printed and re-parsed, and otherwise ignored — the view uses the
# shapes and offsets only (clamped, §18), exactly as without it.
import pypto.language as pl


@pl.program
class TensorSliceValidShape:
    @pl.function(type=pl.FunctionType.InCore)
    def add_one(self, x: pl.Tensor[[16, 16], pl.FP32],
                y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.add(pl.load(x, [0, 0], [16, 16]), 1.0), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[40, 16], pl.FP32], out: pl.Out[pl.Tensor[[40, 16], pl.FP32]],
             n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[40, 16], pl.FP32]:
        for i in pl.range(3):
            src = pl.tensor.slice(x, [16, 16], [i * 16, 0], valid_shape=[min(40 - i * 16, 16), 16])
            dst = pl.slice(out, [16, 16], [i * 16, 0], [n, 16])
            dst = self.add_one(src, dst)
        return out
