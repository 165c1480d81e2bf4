"""HOST golden input: pl.unroll in a HOST-level orchestration (spec anchor_features.md §12).

UnrollLoops copies the body once per iteration value before HOST codegen, so the host C++ has three
submissions with constant scale factors, each waiting for the previous one's TaskId, and no loop.
expected_host.cpp is its HOST C++ against pto_l3_api.h (tests/python/test_host_l3_golden.py)."""
import pypto.language as pl

STEPS = 4


@pl.program
class HostUnroll:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel_axpy(self, a: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32],
                    c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.add(pl.load(c, [0, 0], [16, 16]), pl.mul(pl.load(a, [0, 0], [16, 16]), s)), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_axpy(self, a: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32],
                  c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = self.kernel_axpy(a, s, c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)
    def host_main(self, x: pl.Tensor[[16, 16], pl.FP32],
                  acc: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        prev = None
        for k in pl.unroll(1, STEPS):          # acc += k * x for k = 1, 2, 3, chained by explicit edges
            acc, prev = pl.submit(self.chip_axpy, x, k * 1.0, acc, deps=[prev])
        return acc
