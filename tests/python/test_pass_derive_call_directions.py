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
            d = self.k(a, e, arg_directions=[pl.NoDep, pl.InOut])   # e's buffer (d) was written above
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


# ---- Out -> InOut promotion (R-seq, R-prior, R-enclosing) ----

def _program_text(loop):
    return f'''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             io: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        b = pl.create_tensor([16, 16], dtype=pl.FP32)
        for i in {loop}(4):
            b = self.k(a, b)
        for j in {loop}(4):
            b = self.k(a, b)
        for m in {loop}(4):
            t = pl.create_tensor([16, 16], dtype=pl.FP32)
            t = self.k(b, t)
        io = self.k(a, io)
        o = self.k(b, o)
        return o
'''


def _call_dirs(loop):
    from pypto import ir
    prog = pl.parse_program(_program_text(loop))
    after = passes.DeriveCallDirections()(passes.UpgradeWrittenParamDirections()(prog))
    text = ir.python_print(after)
    return [line.split("arg_directions=")[1].rstrip(")") for line in text.splitlines() if "arg_directions=" in line]


def test_buffer_written_by_two_parallel_loops_is_out_then_inout():
    # first loop: Out; second loop: InOut (R-prior); a buffer created in the loop body: Out;
    # the InOut parameter: InOut (R-enclosing); the Out parameter written once: Out.
    assert _call_dirs("pl.parallel") == ["[pl.In, pl.Out]", "[pl.In, pl.InOut]", "[pl.In, pl.Out]",
                                         "[pl.In, pl.InOut]", "[pl.In, pl.Out]"]


def test_buffer_written_in_sequential_loops_is_inout_in_both():
    # pl.range: b (created before the loops) is InOut in both (R-seq); so is t, created inside the
    # loop body: the spec's R-seq asks only for an enclosing sequential loop (docs/dsl.md §16).
    assert _call_dirs("pl.range") == ["[pl.In, pl.InOut]", "[pl.In, pl.InOut]", "[pl.In, pl.InOut]",
                                      "[pl.In, pl.InOut]", "[pl.In, pl.Out]"]


def test_promotion_is_idempotent():
    prog = pl.parse_program(_program_text("pl.parallel"))
    once = passes.DeriveCallDirections()(passes.UpgradeWrittenParamDirections()(prog))
    from pypto import ir
    assert ir.structural_equal_explain(passes.DeriveCallDirections()(once), once)[0]


def test_promoted_program_runs_under_the_race_checker():
    import numpy as np
    import pypto
    compiled = pypto.compile(pl.parse_program(_program_text("pl.parallel")))
    a = np.random.default_rng(3).standard_normal((16, 16)).astype(np.float32)
    o = np.zeros((16, 16), np.float32)
    io = np.zeros((16, 16), np.float32)
    stats = compiled(a, o, io, race_check=True)
    assert stats.races == 0
    np.testing.assert_array_equal(o, a)
    np.testing.assert_array_equal(io, a)
