# pl.at(..., dumps=[...]) and pl.dump_tag reaching outlined scopes (spec anchor_features.md §6):
# a CORE_GROUP pl.at / pl.spmd scope keeps `dump_vars` = its dumps= entries plus the tensors
# tagged before it; OutlineIncoreScopes maps them to the task the scope becomes (by identity)
# and drops the ones the task does not take (z below). Codegen writes params_tN.dump(...).
import pypto.language as pl


@pl.program
class DumpScopes:
    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32],
              y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.mul(pl.load(x, [0, 0], [16, 16]), s), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], z: pl.Tensor[[16, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        pl.dump_tag(x)
        t = pl.create_tensor([16, 16], dtype=pl.FP32)
        with pl.at(level=pl.Level.CORE_GROUP, dumps=[t, z]):      # outlined: dumps t, x (tag); z unused
            t = pl.store(pl.add(pl.load(x, [0, 0], [16, 16]), 1.0), [0, 0], t)
        with pl.at(level=pl.Level.CORE_GROUP, dumps=[t]) as tid:  # one kernel call: a Submit of scale
            y = self.scale(t, 2.0, y)
        for b in pl.spmd(2, deps=[tid]):                          # the tag reaches the spmd task
            y = pl.store(pl.add(pl.load(y, [b * 8, 0], [8, 16]), pl.load(x, [b * 8, 0], [8, 16])), [b * 8, 0], y)
        return y
