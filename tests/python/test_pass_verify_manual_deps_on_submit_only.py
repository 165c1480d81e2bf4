"""VerifyManualDepsOnSubmitOnly: user dependency edges live only on Submits (and the
system.task_dummy barrier); the pass leaves a valid program unchanged, stamps the
ManualDepsOnSubmitOnly property, and refuses a program that breaks it (DSL Before / Expected)."""

import pytest

import pypto.language as pl
from pypto.errors import InternalCompilerError
from pypto.ir import passes

from pass_test_util import assert_pass


def test_submits_and_a_barrier_with_deps_pass_unchanged():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32],
              out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            out2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.manual_scope():
                out, t1 = pl.submit(self.k, x, out)
                barrier = pl.system.task_dummy(deps=[t1])
                out, t2 = pl.submit(self.k, x, out, deps=[barrier])
            return out

    after = assert_pass(passes.VerifyManualDepsOnSubmitOnly(), Before, Before)
    assert passes.verify_property(passes.IRProperty.ManualDepsOnSubmitOnly, after) == []


def test_an_unoutlined_scope_with_deps_is_refused():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.at(level=pl.Level.CORE_GROUP) as tid:
                out = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], out)
            with pl.at(level=pl.Level.CORE_GROUP, deps=[tid]):
                out = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], out)
            return out

    with pytest.raises(InternalCompilerError, match="still carries deps="):
        passes.VerifyManualDepsOnSubmitOnly()(Before)
    # Outlining moves the deps onto a Submit: the same program then passes.
    outlined = passes.OutlineIncoreScopes()(Before)
    assert_pass(passes.VerifyManualDepsOnSubmitOnly(), outlined, outlined)


def test_task_id_arrays_in_loops_pass_unchanged():
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
                tids = pl.array.create(4, pl.TASK_ID)
                for i in pl.range(4):
                    out, tid = pl.submit(self.k, i * 16, out, deps=[None])
                    tids[i] = tid
                barrier = pl.system.task_dummy(deps=[tids])
                out, _ = pl.submit(self.k, 0, out, deps=[barrier, tids[1]])
            return out

    assert_pass(passes.VerifyManualDepsOnSubmitOnly(), Before, Before)
