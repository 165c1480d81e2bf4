# pl.auto_chunk with a run-time step (spec anchor_features §7): the step's sign is unknown at
# compile time, so SplitChunkedLoops makes the outer loop walk the chunks' first indices with step
# `s * 4` (a run-time-step loop: a zero step fails the run naming this line) and guards the body
# with a sign test, `(s > 0 and i < stop) or (s < 0 and i > stop)`. The direction is picked at run
# time: s > 0 walks 0..n, s < 0 walks n..0.
import pypto.language as pl


@pl.program
class AutoChunkRuntimeStep:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 8], pl.FP32], n: pl.Scalar[pl.INDEX], s: pl.Scalar[pl.INDEX],
             y: pl.Out[pl.Tensor[[64, 8], pl.FP32]]) -> pl.Tensor[[64, 8], pl.FP32]:
        up = pl.cast(s > 0, pl.INDEX)
        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.auto_chunk], name_hint="rows"):
            for i in pl.parallel(n * (1 - up), n * up - (1 - up), s, chunk=4):
                y = pl.assemble(y, pl.mul(pl.slice(x, [4, 8], [i * 4, 0]), 2.0), [i * 4, 0])
        return y
