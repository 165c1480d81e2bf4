"""HOST golden input: a HOST-level orchestration submitting a chip-level orchestration.

z = x + y; then w = z + y after an explicit edge on t0; then three chained in-place updates
w = w + y, each waiting on the previous one (a None-seeded TaskId loop carry) and on t1.
expected_host.cpp is its HOST C++ against pto_l3_api.h (tests/python/test_host_l3_golden.py)."""
import pypto.language as pl


@pl.program
class HostBasic:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel_add(self, a: pl.Tensor[[64], pl.FP32], b: pl.Tensor[[64], pl.FP32],
                   c: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        c = pl.store(pl.add(pl.load(a, [0], [64]), pl.load(b, [0], [64])), [0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_add(self, a: pl.Tensor[[64], pl.FP32], b: pl.Tensor[[64], pl.FP32],
                 c: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        c = self.kernel_add(a, b, c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)
    def host_main(self, x: pl.Tensor[[64], pl.FP32], y: pl.Tensor[[64], pl.FP32],
                  z: pl.Out[pl.Tensor[[64], pl.FP32]],
                  w: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        z, t0 = pl.submit(self.chip_add, x, y, z)
        w, t1 = pl.submit(self.chip_add, z, y, w, deps=[t0])
        prev = None
        for i in pl.range(3):
            w, prev = pl.submit(self.chip_add, w, y, w, deps=[prev, t1])
        return w
