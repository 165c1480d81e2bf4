# pl.auto_chunk chains (spec anchor_features §7): three nested chunked parallel loops.
# SplitChunkedLoops splits each into an outer loop over chunks and an inner loop of C trips;
# InterchangeChunkLoops moves all three outer loops outward (every inner loop is parallel) and
# wraps the three inner loops plus the body in one InCore scope: one task per (r, c, h) chunk.
import pypto.language as pl


@pl.program
class AutoChunkChain:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[40, 24], pl.FP32],
             y: pl.Out[pl.Tensor[[40, 24], pl.FP32]]) -> pl.Tensor[[40, 24], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.auto_chunk], name_hint="blocks"):
            for r in pl.parallel(0, 5, 1, chunk=2):                    # guarded: 3 chunks of rows
                for c in pl.parallel(0, 6, 1, chunk=3):                # 2 chunks of columns
                    for h in pl.parallel(0, 2, 1, chunk=1):            # 2 chunks of half-blocks
                        blk = pl.slice(x, [4, 4], [r * 8 + h * 4, c * 4])
                        y = pl.assemble(y, pl.add(pl.exp(blk), 1.0), [r * 8 + h * 4, c * 4])
        return y
