"""manual_dependencies.zh.txt, explicit fan-in: TaskId arrays (pl.array.create, tids[k] = tid,
prev = tids[k]) and a pl.system.task_dummy barrier."""
import pypto.language as pl

SOURCE = "manual_dependencies.zh.txt: 机制 B — task_dummy / TaskId arrays / None"

N = 4


@pl.program
class DummyBarrier:
    @pl.function(type=pl.FunctionType.InCore)
    def part(self, x: pl.Tensor[[64, 16], pl.FP32], k: pl.Scalar[pl.INDEX],
             out: pl.InOut[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
        out = pl.store(pl.exp(pl.load(x, [k * 16, 0], [16, 16])), [k * 16, 0], out)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def reduce(self, x: pl.Tensor[[64, 16], pl.FP32],
               out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        out = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 16], pl.FP32], parts: pl.InOut[pl.Tensor[[64, 16], pl.FP32]],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.manual_scope():
            tids = pl.array.create(N, pl.TASK_ID)
            for k in pl.range(N):
                parts, tid = pl.submit(self.part, x, k, parts, deps=[None])
                tids[k] = tid
            first = tids[0]
            barrier = pl.system.task_dummy(deps=[tids, first])
            out, _ = pl.submit(self.reduce, parts, out, deps=[barrier, tids[1]], timing_slot=3)
        return out

