# pl.auto_chunk (spec anchor_features.md §7): inside `pl.at(level=CORE_GROUP,
# optimizations=[pl.auto_chunk])` the compiler picks the kernel boundaries. SplitChunkedLoops
# turns each chunk=C loop into an outer loop over chunks and an inner loop of C trips (guarded:
# the body under `if i < stop`; leading_full: full chunks plus a remainder loop);
# InterchangeChunkLoops makes each inner parallel loop one InCore task per outer iteration, a
# remainder loop and the other statements InCore scopes of their own.
import pypto.language as pl


@pl.program
class AutoChunk:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[40, 16], pl.FP32], y: pl.Out[pl.Tensor[[40, 16], pl.FP32]],
             z: pl.Out[pl.Tensor[[40, 16], pl.FP32]]) -> tuple[pl.Tensor[[40, 16], pl.FP32],
                                                              pl.Tensor[[40, 16], pl.FP32]]:
        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.auto_chunk], name_hint="rows"):
            for r in pl.parallel(0, 10, 1, chunk=4):                            # guarded: 3 chunks
                row = pl.slice(x, [4, 16], [r * 4, 0])
                y = pl.assemble(y, pl.exp(row), [r * 4, 0])
            for r in pl.parallel(0, 10, 1, chunk=4, chunk_policy="leading_full"):   # 2 chunks + 2
                z = pl.assemble(z, pl.mul(pl.slice(y, [4, 16], [r * 4, 0]), 2.0), [r * 4, 0])
        return y, z
