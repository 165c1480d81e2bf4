# pl.SplitMode / pl.split (spec anchor_features.md §5): accepted, kept in the IR (scope attrs
# split / slot_num, moved to the outlined kernel's attrs; @pl.function(attrs={"split": ...})
# stores the mode as an int) and printed; a no-op on the CPU, so the C++ is that of the same
# program without them.
import pypto.language as pl


@pl.program
class Split:
    @pl.function(type=pl.FunctionType.InCore, attrs={"split": pl.SplitMode.UP_DOWN})
    def halves(self, x: pl.Tensor[[16, 16], pl.FP32],
               y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.mul(pl.load(x, [0, 0], [16, 16]), 3.0), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32],
             y: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = self.halves(x, y)
        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN, slot_num=4)]):
            y = pl.store(pl.add(pl.load(y, [0, 0], [16, 16]), pl.load(x, [0, 0], [16, 16])), [0, 0], y)
        for b in pl.spmd(2, optimizations=[pl.optimizations.split(pl.SplitMode.LEFT_RIGHT)]):
            y = pl.store(pl.sub(pl.load(y, [b * 8, 0], [8, 16]), 1.0), [b * 8, 0], y)
        return y
