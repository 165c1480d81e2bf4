"""manual_dependencies.zh.txt: pl.cluster() holding a pl.spmd (expanded into a Group function),
and a non-CORE_GROUP pl.at holding a CORE_GROUP one (allowed nesting)."""
import pypto.language as pl

SOURCE = "manual_dependencies.zh.txt: pl.cluster / pl.spmd nesting"


@pl.program
class ClusterSpmd:
    @pl.function(type=pl.FunctionType.InCore)
    def work(self, x: pl.Tensor[[16, 16], pl.FP32],
             out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        b = pl.tile.get_block_idx()
        out = pl.store(pl.add(pl.load(x, [0, 0], [16, 16]), pl.cast(b, pl.FP32)), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32],
             out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.cluster():
            with pl.spmd(2):
                out = self.work(x, out)
        with pl.at(level=pl.Level.CHIP):
            # `out` comes from the cluster (no `as tid` there, so the parser's producer check
            # is blind to it); the predicate still reads the written value because both tasks
            # write `out` and automatic tracking orders them.
            with pl.at(level=pl.Level.CORE_GROUP, predicate=(out[0, 0] != 0)) as t:
                out = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], out)
        return out

