"""ClassifyIterArgCarry: each iter_arg of an Orchestration loop is stamped (ForStmt.carries) as
an alias of its init (`pl.alias`) or a value rebound every iteration (`pl.rebind`), and TaskId
carries of a pl.parallel loop get their slots (`pl.slots(N)`) (DSL Before / Expected). The
pass requires StampStaticTripCounts' result, so each Before runs that pass first."""

import pypto.language as pl
from pypto.ir import passes

from pass_test_util import assert_pass


def test_tensor_written_in_place_is_an_alias():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32],
                 d: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            for i, (acc,) in pl.range(4, init_values=(d,)):
                acc2 = self.k(a, acc)
                acc3 = pl.yield_(acc2)
            return d

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32],
                 d: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            for i, (acc,) in pl.range(4, init_values=(d,), carries=(pl.alias,), trip_count=4):
                acc2 = self.k(a, acc)
                acc3 = pl.yield_(acc2)
            return d

    after = assert_pass(passes.ClassifyIterArgCarry(), passes.StampStaticTripCounts()(Before), Expected)
    assert passes.verify_property(passes.IRProperty.IterArgCarryClassified, after) == []
    assert passes.verify_property(passes.IRProperty.IterArgCarryClassified, Before) != []


def test_fresh_tensor_each_iteration_is_rebound():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32],
                 d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            for i, (acc,) in pl.range(4, init_values=(a,)):
                t = pl.create_tensor([16, 16], dtype=pl.FP32)
                t2 = self.k(acc, t)
                acc2 = pl.yield_(t2)
            d2 = self.k(acc2, d)
            return d

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32],
                 d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            for i, (acc,) in pl.range(4, init_values=(a,), carries=(pl.rebind,), trip_count=4):
                t = pl.create_tensor([16, 16], dtype=pl.FP32)
                t2 = self.k(acc, t)
                acc2 = pl.yield_(t2)
            d2 = self.k(acc2, d)
            return d

    assert_pass(passes.ClassifyIterArgCarry(), passes.StampStaticTripCounts()(Before), Expected)


def test_task_id_carry_through_a_parallel_loop_gets_an_array_size():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, row: pl.Scalar[pl.INDEX],
              out: pl.InOut[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
            out2 = pl.store(pl.load(out, [row, 0], [16, 16]), [row, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, out: pl.InOut[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
            with pl.manual_scope():
                prev = None
                for b in pl.parallel(4):
                    out, prev = pl.submit(self.k, b * 16, out, deps=[prev])
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, row: pl.Scalar[pl.INDEX],
              out: pl.InOut[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
            out2 = pl.store(pl.load(out, [row, 0], [16, 16]), [row, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, out: pl.InOut[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
            with pl.manual_scope():
                prev = pl.system.task_invalid()
                for b, (out_1, prev_1) in pl.parallel(0, 4, 1, init_values=(out, prev),
                                                      carries=(pl.alias, pl.slots(4)), trip_count=4):
                    out_2, prev_2 = pl.submit(self.k, b * 16, out_1, deps=[prev_1])
                    out_3, prev_3 = pl.yield_(out_2, prev_2)
            return out

    # The loop's result flows back to `out`: the requirement ReturnParamsExplicit comes first.
    assert_pass(passes.ClassifyIterArgCarry(), passes.StampStaticTripCounts()(passes.NormalizeReturnOrder()(Before)), Expected)
