"""OutlineIncoreScopes: pl.at(CORE_GROUP) / pl.spmd scopes become InCore functions and a call
or submit in their place; scope options move onto the submit (DSL Before / Expected)."""

import pypto.language as pl
from pypto import ir
from pypto.ir import passes

from pass_test_util import assert_equal, assert_pass


def test_at_scope_becomes_an_incore_function_and_a_call():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.at(level=pl.Level.CORE_GROUP):
                out = pl.store(pl.exp(pl.load(x, [0, 0], [16, 16])), [0, 0], out)
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            main_incore_out = self.main_incore(x, out)
            out_1 = main_incore_out
            return out_1

        @pl.function(type=pl.FunctionType.InCore)
        def main_incore(self, x: pl.Tensor[[16, 16], pl.FP32],
                        out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            out_1 = pl.store(pl.exp(pl.load(x, [0, 0], [16, 16])), [0, 0], out)
            return out

    assert_pass(passes.OutlineIncoreScopes(), Before, Expected)


def test_task_id_and_deps_move_onto_submits():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.at(level=pl.Level.CORE_GROUP) as tid:
                out = pl.store(pl.exp(pl.load(x, [0, 0], [16, 16])), [0, 0], out)
            with pl.at(level=pl.Level.CORE_GROUP, deps=[tid]) as tid2:
                out = pl.store(pl.add(pl.load(x, [0, 0], [16, 16]), pl.load(out, [0, 0], [16, 16])), [0, 0], out)
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            out_1, tid = pl.submit(self.main_incore, x, out)
            out_2, tid2 = pl.submit(self.main_incore_1, x, out_1, deps=[tid])
            return out_2

        @pl.function(type=pl.FunctionType.InCore)
        def main_incore(self, x: pl.Tensor[[16, 16], pl.FP32],
                        out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            out_1 = pl.store(pl.exp(pl.load(x, [0, 0], [16, 16])), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.InCore)
        def main_incore_1(self, x: pl.Tensor[[16, 16], pl.FP32],
                          out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            out_1 = pl.store(pl.add(pl.load(x, [0, 0], [16, 16]), pl.load(out, [0, 0], [16, 16])), [0, 0], out)
            return out

    after = passes.OutlineIncoreScopes()(Before, verify_well_formed=True)
    # The pass binds a submit's TaskId before its tensor results; the parser binds them in
    # tuple order. Both print as `out_1, tid = pl.submit(...)`: compare through the printer.
    assert_equal(pl.parse_program(ir.python_print(after)), Expected)
    # The scope's deps= left the scope: the ManualDepsOnSubmitOnly property now holds.
    assert passes.verify_property(passes.IRProperty.ManualDepsOnSubmitOnly, Before) != []
    assert passes.verify_property(passes.IRProperty.ManualDepsOnSubmitOnly, after) == []


def test_program_without_scopes_is_unchanged():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32],
              out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            out2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            out2 = self.k(x, out)
            return out

    assert_pass(passes.OutlineIncoreScopes(), Before, Before)
