# Nested loops: a pl.range outer loop around a pl.parallel inner loop, scalar loop variables
# combined in expressions for slice offsets and kernel arguments, each body in its own scope.
import pypto.language as pl

N_PHASES = 2
N_BRANCHES = 4
TILE_M = 16


@pl.program
class NestedLoops:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel_stripe(self, data: pl.Tensor[[128, 16], pl.FP32], row: pl.Scalar[pl.INDEX],
                      scale: pl.Scalar[pl.FP32],
                      out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        out = pl.store(pl.mul(pl.load(data, [row, 0], [16, 16]), scale), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, data: pl.Tensor[[128, 16], pl.FP32],
             out: pl.InOut[pl.Tensor[[128, 16], pl.FP32]]) -> pl.Tensor[[128, 16], pl.FP32]:
        for phase in pl.range(N_PHASES):
            for branch in pl.parallel(N_BRANCHES):
                row = (phase * N_BRANCHES + branch) * TILE_M
                blk = pl.tensor.slice(out, [16, 16], [row, 0])
                blk = self.kernel_stripe(data, row, 1.0, blk)
        return out
