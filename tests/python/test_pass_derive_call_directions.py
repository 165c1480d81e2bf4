"""DeriveCallDirections: every call / submit of a program function gets one argument
direction per argument from the callee's parameters (DSL Before / Expected)."""

import pypto.language as pl
from pypto.ir import passes

from pass_test_util import assert_pass

def test_tensor_directions_follow_the_callee_and_scalars_are_scalar():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]], s: pl.Scalar[pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
            c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            d = self.k(a, d, 1.0)
            return d

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]], s: pl.Scalar[pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
            c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            d = self.k(a, d, 1.0, arg_directions=[pl.In, pl.InOut, pl.Scalar])
            return d

    after = assert_pass(passes.DeriveCallDirections(), Before, Expected)
    assert passes.verify_property(passes.IRProperty.CallDirectionsDerived, after) == []
    assert passes.verify_property(passes.IRProperty.CallDirectionsDerived, Before) != []


def test_no_dep_is_kept_and_submits_are_derived():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            e, tid = pl.submit(self.k, a, d)
            d = self.k(pl.no_dep(a), e)
            return d

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            e, tid = pl.submit(self.k, a, d, arg_directions=[pl.In, pl.Out])
            d = self.k(a, e, arg_directions=[pl.NoDep, pl.Out])
            return d

    assert_pass(passes.DeriveCallDirections(), Before, Expected)


def test_calls_inside_loops_are_derived_and_op_calls_untouched():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(c, [0, 0], [16, 16])), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], d: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            for i, (acc,) in pl.range(4, init_values=(d,)):
                acc2 = self.k(a, acc)
                acc3 = pl.yield_(acc2)
            return acc3

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(c, [0, 0], [16, 16])), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], d: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            for i, (acc,) in pl.range(4, init_values=(d,)):
                acc2 = self.k(a, acc, arg_directions=[pl.In, pl.InOut])
                acc3 = pl.yield_(acc2)
            return acc3

    assert_pass(passes.DeriveCallDirections(), Before, Expected)
