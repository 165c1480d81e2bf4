"""HOST golden input: two chip-level targets, scalar parameters, a branch carrying a TaskId,
a dynamic loop bound, and a fire-and-forget plain call.

expected_host.cpp is its HOST C++ against pto_l3_api.h (tests/python/test_host_l3_golden.py)."""
import pypto.language as pl


@pl.program
class HostControlFlow:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel_scale(self, a: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32],
                     c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.mul(pl.load(a, [0, 0], [16, 16]), s), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def kernel_add(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                   c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(b, [0, 0], [16, 16])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_scale(self, a: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32],
                   c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = self.kernel_scale(a, s, c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_add(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                 c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = self.kernel_add(a, b, c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)
    def host_main(self, x: pl.Tensor[[16, 16], pl.FP32], acc: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
                  tmp: pl.Out[pl.Tensor[[16, 16], pl.FP32]], alpha: pl.Scalar[pl.FP32],
                  steps: pl.Scalar[pl.INDEX], scale_first: pl.Scalar[pl.BOOL]) -> pl.Tensor[[16, 16], pl.FP32]:
        if scale_first:
            tmp, t = pl.submit(self.chip_scale, x, alpha, tmp)
        else:
            tmp, t = pl.submit(self.chip_scale, x, 1.0, tmp)
        prev = t
        for k in pl.range(steps):
            acc, prev = pl.submit(self.chip_add, acc, tmp, acc, deps=[prev])
        tmp = self.chip_scale(acc, alpha * 2.0, tmp)
        return acc
