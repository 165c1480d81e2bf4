"""StampGroupKernels: each Group function gets its typed ``Function.group_kernels`` (the kernel
it runs on the AIC core and the one on the AIV core, by stamped core type), printed as
``group_aic=`` / ``group_aiv=``; the L2 generator prints a Group's ``MixedKernels`` from it
(DSL Before / Expected)."""

import pypto.language as pl
from pypto.ir import passes

from pass_test_util import assert_pass


def test_a_group_of_an_aic_and_an_aiv_kernel():
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
        @pl.function(type=pl.FunctionType.AIC, core_type=pl.CoreType.AIC)
        def mm(self, x: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.AIV, core_type=pl.CoreType.AIV)
        def act(self, c: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            o2 = pl.store(pl.exp(pl.load(c, [0, 0], [16, 16])), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Group, core_type=pl.CoreType.MIXED, group_aic="mm", group_aiv="act")
        def grp(self, x: pl.Tensor[[16, 16], pl.FP32], c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c1 = self.mm(x, c)
            o1 = self.act(c1, out)
            return out

    after = assert_pass(passes.StampGroupKernels(), Before, Expected)
    assert (after.get("grp").group_aic, after.get("grp").group_aiv) == ("mm", "act")
    assert passes.verify_property(passes.IRProperty.GroupKernelsStamped, Before) != []
    assert passes.verify_property(passes.IRProperty.GroupKernelsStamped, after) == []


def test_a_group_of_one_kernel_leaves_the_other_core_idle():
    # A pl.cluster around one pl.spmd outlines to a Group with a single AIV kernel.
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.AIV, core_type=pl.CoreType.AIV)
        def act(self, c: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            o2 = pl.store(pl.exp(pl.load(c, [0, 0], [16, 16])), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Group, core_type=pl.CoreType.MIXED)
        def grp(self, c: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            o1 = self.act(c, out)
            o2 = self.act(c, out)
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.AIV, core_type=pl.CoreType.AIV)
        def act(self, c: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            o2 = pl.store(pl.exp(pl.load(c, [0, 0], [16, 16])), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Group, core_type=pl.CoreType.MIXED, group_aiv="act")
        def grp(self, c: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            o1 = self.act(c, out)
            o2 = self.act(c, out)
            return out

    after = assert_pass(passes.StampGroupKernels(), Before, Expected)
    assert after.get("grp").group_aic == "" and after.get("act").group_aiv == ""


def test_a_group_of_two_kernels_on_one_core_is_not_stamped():
    # Two AIV kernels cannot share one mixed task: no stamp (VerifyOrchestrationProgram reports
    # the Group where it is submitted), and the pass is at its fixed point.
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.AIV, core_type=pl.CoreType.AIV)
        def act(self, c: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            o2 = pl.store(pl.exp(pl.load(c, [0, 0], [16, 16])), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.AIV, core_type=pl.CoreType.AIV)
        def act2(self, c: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            o2 = pl.store(pl.exp(pl.load(c, [0, 0], [16, 16])), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Group, core_type=pl.CoreType.MIXED)
        def grp(self, c: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            o1 = self.act(c, out)
            o2 = self.act2(c, out)
            return out

    after = assert_pass(passes.StampGroupKernels(), Before, Before)
    assert passes.verify_property(passes.IRProperty.GroupKernelsStamped, after) == []


def test_a_stale_stamp_fails_the_property_and_the_pass_repairs_it():
    @pl.program
    class Stale:
        @pl.function(type=pl.FunctionType.AIC, core_type=pl.CoreType.AIC)
        def mm(self, x: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Group, core_type=pl.CoreType.MIXED, group_aiv="mm")
        def grp(self, x: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c1 = self.mm(x, c)
            return c

    problems = passes.verify_property(passes.IRProperty.GroupKernelsStamped, Stale)
    assert problems and "grp" in problems[0]
    after = passes.StampGroupKernels()(Stale)
    assert (after.get("grp").group_aic, after.get("grp").group_aiv) == ("mm", "")
