"""Both documents, case1: N_PHASES x N_BRANCHES with a pl.parallel TaskId array-carry fence."""
import pypto.language as pl

SOURCE = "manual_dependencies.zh.txt: pl.parallel array-carry fence / orchestration_codegen.txt: case1"

N_PHASES = 3
N_BRANCHES = 4
TILE_M = 16


@pl.program
class Case1:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel_stripe(self, data: pl.Tensor[[192, 16], pl.FP32], row: pl.Scalar[pl.INDEX],
                      scale: pl.Scalar[pl.FP32],
                      out: pl.InOut[pl.Tensor[[192, 16], pl.FP32]]) -> pl.Tensor[[192, 16], pl.FP32]:
        t = pl.load(data, [row, 0], [16, 16])
        out = pl.store(pl.mul(t, scale), [row, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, data: pl.Tensor[[192, 16], pl.FP32],
             out: pl.InOut[pl.Tensor[[192, 16], pl.FP32]]) -> pl.Tensor[[192, 16], pl.FP32]:
        with pl.manual_scope():
            prev_tid = None                                      # 种子：还没有 producer
            for phase in pl.range(N_PHASES):
                for branch in pl.parallel(N_BRANCHES):           # 编译期常量
                    row = (phase * N_BRANCHES + branch) * TILE_M
                    out, prev_tid = pl.submit(self.kernel_stripe, data, row, 1.0, out, deps=[prev_tid])
        return out

