# name_hint= (spec anchor_features.md §1): a hinted CORE_GROUP pl.at names its InCore kernel,
# a repeat of the hint in the same function gets _0, a hinted `for i in pl.spmd` drops the
# trailing _spmd, a hinted pl.cluster names its Group function; unhinted scopes keep
# <fn>_incore / <fn>_spmd.
import pypto.language as pl


@pl.program
class NameHint:
    @pl.function(type=pl.FunctionType.InCore)
    def work(self, x: pl.Tensor[[16, 16], pl.FP32],
             out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        b = pl.tile.get_block_idx()
        out = pl.store(pl.add(pl.load(x, [b * 8, 0], [8, 16]), pl.load(out, [b * 8, 0], [8, 16])), [b * 8, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32],
             y: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="double_x"):
            y = pl.store(pl.add(pl.load(x, [0, 0], [16, 16]), pl.load(x, [0, 0], [16, 16])), [0, 0], y)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="double_x"):
            y = pl.store(pl.add(pl.load(y, [0, 0], [16, 16]), pl.load(x, [0, 0], [16, 16])), [0, 0], y)
        for b in pl.spmd(2, name_hint="rows_spmd"):
            y = pl.store(pl.mul(pl.load(y, [b * 8, 0], [8, 16]), 2.0), [b * 8, 0], y)
        with pl.at(level=pl.Level.CORE_GROUP):
            y = pl.store(pl.sub(pl.load(y, [0, 0], [16, 16]), pl.load(x, [0, 0], [16, 16])), [0, 0], y)
        with pl.cluster(name_hint="pair"):
            with pl.spmd(2):
                y = self.work(x, y)
        return y
