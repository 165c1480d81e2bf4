"""StampStaticTripCounts: every Orchestration loop with literal bounds gets ForStmt.trip_count
= len(range(start, stop, step)); a run-time bound leaves -1 (DSL Before / Expected)."""

import pypto.language as pl
from pypto.ir import passes

from pass_test_util import assert_pass


def test_literal_bounds_with_a_step():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
            for i, (s,) in pl.range(0, 8, 3, init_values=(n,)):
                s2 = pl.yield_(s + i)
            return s2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
            for i, (s,) in pl.range(0, 8, 3, init_values=(n,), trip_count=3):
                s2 = pl.yield_(s + i)
            return s2

    after = assert_pass(passes.StampStaticTripCounts(), Before, Expected)
    assert passes.verify_property(passes.IRProperty.StaticTripCountsStamped, after) == []
    assert passes.verify_property(passes.IRProperty.StaticTripCountsStamped, Before) != []


def test_descending_and_empty_loops():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
            for i, (s,) in pl.range(10, 0, -4, init_values=(n,)):
                s2 = pl.yield_(s + i)
            for j, (t,) in pl.parallel(5, 5, 1, init_values=(s2,)):
                t2 = pl.yield_(t + j)
            return t2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
            for i, (s,) in pl.range(10, 0, -4, init_values=(n,), trip_count=3):
                s2 = pl.yield_(s + i)
            for j, (t,) in pl.parallel(5, 5, 1, init_values=(s2,), trip_count=0):
                t2 = pl.yield_(t + j)
            return t2

    assert_pass(passes.StampStaticTripCounts(), Before, Expected)


def test_runtime_bound_stays_unknown_and_kernels_are_untouched():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16], pl.FP32], c: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
            for i in pl.range(2):
                c = pl.store(pl.load(a, [0], [16]), [0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
            for i, (s,) in pl.range(0, n, 1, init_values=(n,)):
                for j, (t,) in pl.range(0, 4, 1, init_values=(s,)):
                    t2 = pl.yield_(t + j)
                s2 = pl.yield_(t2)
            return s2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16], pl.FP32], c: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
            for i in pl.range(2):
                c = pl.store(pl.load(a, [0], [16]), [0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
            for i, (s,) in pl.range(0, n, 1, init_values=(n,)):
                for j, (t,) in pl.range(0, 4, 1, init_values=(s,), trip_count=4):
                    t2 = pl.yield_(t + j)
                s2 = pl.yield_(t2)
            return s2

    assert_pass(passes.StampStaticTripCounts(), Before, Expected)


def test_printed_trip_count_round_trips():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
            for i, (s,) in pl.range(0, 6, 2, init_values=(n,)):
                s2 = pl.yield_(s + i)
            return s2

    from pypto import ir
    after = passes.StampStaticTripCounts()(P)
    text = ir.python_print(after)
    assert "trip_count=3" in text
    assert ir.structural_equal(pl.parse_program(text), after)
