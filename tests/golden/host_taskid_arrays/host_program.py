"""HOST golden input: TaskId arrays and a dependency-only barrier at L3.

    chip_part x4 (fan, tids[k]) ──> barrier ──┐
                       tids[1] ───────────────┴─> chip_sum ──> chip_add x2 (pl.parallel fence)
                                                                  └────────> chip_add (waits on both)

A fan of chip_part submissions writes tids[k] (a TaskId array carried through the loop);
pl.system.task_dummy(deps=[tids]) joins them; chip_sum waits on the barrier and on a slot
read inline; a pl.parallel loop carrying a TaskId becomes a per-iteration fence array that the
last submit waits on. expected_host.cpp is its C++ against pto_l3_api.h; the same program runs
end to end in tests/python/test_host_l3_taskids.py."""
import pypto.language as pl

N = 4


@pl.program
class HostTaskIdArrays:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel_part(self, x: pl.Tensor[[64, 16], pl.FP32], k: pl.Scalar[pl.INDEX], s: pl.Scalar[pl.FP32],
                    parts: pl.InOut[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
        parts = pl.store(pl.mul(pl.load(x, [k * 16, 0], [16, 16]), s), [k * 16, 0], parts)
        return parts

    @pl.function(type=pl.FunctionType.InCore)
    def kernel_sum(self, parts: pl.Tensor[[64, 16], pl.FP32],
                   total: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        a = pl.add(pl.load(parts, [0, 0], [16, 16]), pl.load(parts, [16, 0], [16, 16]))
        b = pl.add(pl.load(parts, [32, 0], [16, 16]), pl.load(parts, [48, 0], [16, 16]))
        total = pl.store(pl.add(a, b), [0, 0], total)
        return total

    @pl.function(type=pl.FunctionType.InCore)
    def kernel_add(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                   c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(b, [0, 0], [16, 16])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_part(self, x: pl.Tensor[[64, 16], pl.FP32], k: pl.Scalar[pl.INDEX], s: pl.Scalar[pl.FP32],
                  parts: pl.InOut[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
        parts = self.kernel_part(x, k, s, parts)
        return parts

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_sum(self, parts: pl.Tensor[[64, 16], pl.FP32],
                 total: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        total = self.kernel_sum(parts, total)
        return total

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_add(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                 c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = self.kernel_add(a, b, c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)
    def host_main(self, x: pl.Tensor[[64, 16], pl.FP32], parts: pl.InOut[pl.Tensor[[64, 16], pl.FP32]],
                  total: pl.Out[pl.Tensor[[16, 16], pl.FP32]], acc: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
                  out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
                  alpha: pl.Scalar[pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
        tids = pl.array.create(N, pl.TASK_ID)
        for k in pl.range(N):
            parts, tid = pl.submit(self.chip_part, x, k, alpha, parts)
            tids[k] = tid
        barrier = pl.system.task_dummy(deps=[tids])
        total, t_sum = pl.submit(self.chip_sum, parts, total, deps=[barrier, tids[1]])
        prev = t_sum
        for r in pl.parallel(2):
            acc, prev = pl.submit(self.chip_add, acc, total, acc, deps=[prev])
        last = tids[N - 1]
        out, _ = pl.submit(self.chip_add, acc, total, out, deps=[prev, last])
        return out
