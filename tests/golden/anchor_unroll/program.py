# pl.unroll (anchor_features.md §12): UnrollLoops copies the body once per iteration value, so the
# orchestration has four submissions with constant row indices and no C++ loop; in the kernel the
# accumulator flows from copy to copy as straight-line code.
import pypto.language as pl

BLOCKS = 3


@pl.program
class AnchorUnroll:
    @pl.function(type=pl.FunctionType.InCore)
    def block_sum(self, x: pl.Tensor[[12, 16], pl.FP32],
                  y: pl.Out[pl.Tensor[[4, 16], pl.FP32]]) -> pl.Tensor[[4, 16], pl.FP32]:
        acc = pl.load(x, [0, 0], [4, 16])
        for k in pl.unroll(1, BLOCKS):
            acc = pl.add(acc, pl.load(x, [k * 4, 0], [4, 16]))
        y = pl.store(acc, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def row(self, x: pl.Tensor[[4, 16], pl.FP32], r: pl.Scalar[pl.INDEX],
            y: pl.InOut[pl.Tensor[[4, 16], pl.FP32]]) -> pl.Tensor[[4, 16], pl.FP32]:
        y = pl.store(pl.relu(pl.load(x, [r, 0], [1, 16])), [r, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[12, 16], pl.FP32],
             y: pl.InOut[pl.Tensor[[4, 16], pl.FP32]]) -> pl.Tensor[[4, 16], pl.FP32]:
        s = pl.create_tensor([4, 16], dtype=pl.FP32)
        s = self.block_sum(x, s)
        for i in pl.unroll(-4, 0):
            y = self.row(s, i + 4, y)
        for j in pl.unroll(0):
            y = self.row(s, j, y)
        return y
