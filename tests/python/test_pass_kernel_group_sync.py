"""KernelGroupSync (the kernel pipeline): each kernel a Group calls gets its typed
``Function.group_sync`` (the group flags it waits for and signals), printed as ``group_waits=`` /
``group_signals=`` (DSL Before / Expected). The Group slots its params read are
``Function.param_slots`` (KernelParamSlots, test_pass_kernel_param_slots.py)."""

import pypto.language as pl
from pypto import ir
from pypto.ir import passes

from pass_test_util import assert_pass


def test_aic_writes_what_aiv_reads_one_flag():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.AIC, core_type=pl.CoreType.AIC)
        def mm(self, x: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.AIV, core_type=pl.CoreType.AIV)
        def act(self, c: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            o2 = pl.store(pl.exp(pl.load(c, [0, 0], [16, 16])), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Group, core_type=pl.CoreType.MIXED)
        def grp(self, x: pl.Tensor[[16, 16], pl.FP32], c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c1 = self.mm(x, c)
            o1 = self.act(c1, out)
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.AIC, core_type=pl.CoreType.AIC, group_signals=[0])
        def mm(self, x: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.AIV, core_type=pl.CoreType.AIV, group_waits=[0])
        def act(self, c: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            o2 = pl.store(pl.exp(pl.load(c, [0, 0], [16, 16])), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Group, core_type=pl.CoreType.MIXED)
        def grp(self, x: pl.Tensor[[16, 16], pl.FP32], c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c1 = self.mm(x, c)
            o1 = self.act(c1, out)
            return out

    after = assert_pass(passes.KernelGroupSync(), Before, Expected)
    assert list(after.get("act").group_sync.waits) == [0]
    assert passes.verify_property(passes.IRProperty.KernelGroupSyncResolved, Before) != []
    assert passes.verify_property(passes.IRProperty.KernelGroupSyncResolved, after) == []
    # The stamp is printed and parsed back.
    text = ir.python_print(after)
    assert "core_type=pl.CoreType.AIV, group_waits=[0]" in text
    assert ir.structural_equal(pl.parse_program(text), after)


def test_independent_kernels_get_no_flags_and_plain_kernels_nothing():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.AIC, core_type=pl.CoreType.AIC)
        def mm(self, x: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.INT32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.AIV, core_type=pl.CoreType.AIV)
        def act(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            o2 = pl.store(pl.exp(pl.load(x, [0, 0], [16, 16])), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.InCore, core_type=pl.CoreType.AIV)
        def plain(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            o2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Group, core_type=pl.CoreType.MIXED)
        def grp(self, x: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INT32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c1 = self.mm(x, n, c)
            o1 = self.act(x, out)
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.AIC, core_type=pl.CoreType.AIC)
        def mm(self, x: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.INT32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.AIV, core_type=pl.CoreType.AIV)
        def act(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            o2 = pl.store(pl.exp(pl.load(x, [0, 0], [16, 16])), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.InCore, core_type=pl.CoreType.AIV)
        def plain(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            o2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Group, core_type=pl.CoreType.MIXED)
        def grp(self, x: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INT32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c1 = self.mm(x, n, c)
            o1 = self.act(x, out)
            return out

    after = assert_pass(passes.KernelGroupSync(), Before, Expected)
    assert after.get("plain").group_sync.empty()


def test_write_after_read_across_cores_and_pipeline_stamp():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.AIV, core_type=pl.CoreType.AIV)
        def rd(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            o2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.AIC, core_type=pl.CoreType.AIC)
        def wr(self, x: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            x2 = pl.store(pl.tile.full([16, 16], pl.FP32, 0.0), [0, 0], x)
            return x

        @pl.function(type=pl.FunctionType.Group, core_type=pl.CoreType.MIXED)
        def grp(self, x: pl.InOut[pl.Tensor[[16, 16], pl.FP32]], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            o1 = self.rd(x, out)
            x1 = self.wr(x)
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.AIV, core_type=pl.CoreType.AIV, group_signals=[0])
        def rd(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            o2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.AIC, core_type=pl.CoreType.AIC, group_waits=[0])
        def wr(self, x: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            x2 = pl.store(pl.tile.full([16, 16], pl.FP32, 0.0), [0, 0], x)
            return x

        @pl.function(type=pl.FunctionType.Group, core_type=pl.CoreType.MIXED)
        def grp(self, x: pl.InOut[pl.Tensor[[16, 16], pl.FP32]], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            o1 = self.rd(x, out)
            x1 = self.wr(x)
            return out

    assert_pass(passes.KernelGroupSync(), Before, Expected)
