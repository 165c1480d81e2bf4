"""KernelAccumulateInStore (DSL Before / Expected): an accumulator a kernel ends by storing whole
into an otherwise untouched tensor parameter gets `accumulates_in=[tensor, off0, off1]` on its
tile.full; nothing is stamped when the kernel touches that tensor elsewhere. More cases, with runs,
in test_kernel_accumulate_in_store.py."""
import pypto.language as pl
from pypto.ir import passes

from pass_test_util import assert_pass


def test_constant_offset_loop_accumulator_is_stamped():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
            acc0 = pl.tile.full([16, 16], pl.FP32, 0.0)
            for i, (acc,) in pl.range(0, 3, 1, init_values=(acc0,)):
                t = pl.load(a, [0, 0], [16, 16])
                nxt = pl.matmul_acc(acc, t, t)
                acc_out = pl.yield_(nxt)
            c2 = pl.store(acc_out, [16, 0], c)
            return c2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
            acc0 = pl.tile.full([16, 16], pl.FP32, 0.0, accumulates_in=[c, 16, 0])
            for i, (acc,) in pl.range(0, 3, 1, init_values=(acc0,)):
                t = pl.load(a, [0, 0], [16, 16])
                nxt = pl.matmul_acc(acc, t, t)
                acc_out = pl.yield_(nxt)
            c2 = pl.store(acc_out, [16, 0], c)
            return c2

    assert_pass(passes.KernelAccumulateInStore(), Before, Expected)


def test_an_output_the_kernel_also_reads_is_not_stamped():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            acc0 = pl.tile.full([16, 16], pl.FP32, 0.0)
            for i, (acc,) in pl.range(0, 2, 1, init_values=(acc0,)):
                t = pl.load(c, [0, 0], [16, 16])
                u = pl.load(a, [0, 0], [16, 16])
                nxt = pl.matmul_acc(acc, t, u)
                acc_out = pl.yield_(nxt)
            c2 = pl.store(acc_out, [0, 0], c)
            return c2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            acc0 = pl.tile.full([16, 16], pl.FP32, 0.0)
            for i, (acc,) in pl.range(0, 2, 1, init_values=(acc0,)):
                t = pl.load(c, [0, 0], [16, 16])
                u = pl.load(a, [0, 0], [16, 16])
                nxt = pl.matmul_acc(acc, t, u)
                acc_out = pl.yield_(nxt)
            c2 = pl.store(acc_out, [0, 0], c)
            return c2

    assert_pass(passes.KernelAccumulateInStore(), Before, Expected)
