# Tensor-level ops inside kernels and CORE_GROUP pl.at bodies (spec anchor_features.md §9):
# pl.add & co. dispatch on Tensor operands to tensor.* ops (a scalar right operand picks the
# scalar variant, tensor.muls); ConvertTensorToTileOps lowers them to tile ops after
# outlining (whole-tensor loads, slice -> tile.load, assemble -> tile.store / tile.assemble,
# create -> tile.full). The orchestration C++ only sees the two tasks.
import pypto.language as pl


@pl.program
class TensorOpsInKernels:
    @pl.function(type=pl.FunctionType.InCore)
    def fused(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        s = pl.add(a, b)
        e = pl.mul(s, 0.5)
        c = pl.assemble(c, pl.exp(e), [0, 0])
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = self.fused(a, b, c)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
            top = pl.slice(c, [8, 16], [0, 0])
            r = pl.row_sum(top)
            ones = pl.create_tensor([8, 16], dtype=pl.FP32, init_value=1.0)
            ones = pl.assemble(ones, pl.tensor.full([8, 8], 2.0, dtype=pl.FP32), [0, 8])
            d = pl.assemble(d, pl.row_expand_sub(top, r), [0, 0])
            d = pl.assemble(d, pl.maximum(pl.slice(c, [8, 16], [8, 0]), ones), [8, 0])
        return d
