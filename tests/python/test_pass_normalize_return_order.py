"""NormalizeReturnOrder: a return value that writes back a tensor parameter becomes that
parameter Var (DSL Before / Expected, compared with structural_equal)."""

import pytest

import pypto.language as pl
from pypto.errors import InternalCompilerError
from pypto.ir import passes

from pass_test_util import assert_pass


def test_kernel_returns_its_out_param_instead_of_the_store_result():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            t = pl.load(a, [0, 0], [16, 16])
            c2 = pl.store(t, [0, 0], c)
            return c2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            t = pl.load(a, [0, 0], [16, 16])
            c2 = pl.store(t, [0, 0], c)
            return c

    after = assert_pass(passes.NormalizeReturnOrder(), Before, Expected)
    assert passes.verify_property(passes.IRProperty.ReturnParamsExplicit, after) == []
    assert passes.verify_property(passes.IRProperty.ReturnParamsExplicit, Before) != []


def test_orchestration_return_traced_through_a_kernel_call():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32],
                 d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            r = self.k(a, d)
            return r

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c_1 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32],
                 d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            r = self.k(a, d)
            return d

    assert_pass(passes.NormalizeReturnOrder(), Before, Expected)


def test_fresh_tensor_and_scalar_returns_are_kept():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, n: pl.Scalar[pl.INDEX]) -> tuple[pl.Tensor[[16, 16], pl.FP32], pl.Scalar[pl.INDEX]]:
            t = pl.create_tensor([16, 16], dtype=pl.FP32)
            m = n + 1
            return t, m

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, n: pl.Scalar[pl.INDEX]) -> tuple[pl.Tensor[[16, 16], pl.FP32], pl.Scalar[pl.INDEX]]:
            t = pl.create_tensor([16, 16], dtype=pl.FP32)
            m = n + 1
            return t, m

    assert_pass(passes.NormalizeReturnOrder(), Before, Expected)


def test_pass_object_declares_its_contract():
    p = passes.NormalizeReturnOrder()
    assert p.name == "NormalizeReturnOrder"
    assert p.required == [] and p.produced == ["ReturnParamsExplicit"] and p.invalidated == []
    # UnrollLoops (anchor_features §12) runs first, then the auto_chunk passes (§7), then outlining
    assert [q.name for q in passes.default_pipeline()][:5] == ["UnrollLoops", "SplitChunkedLoops",
                                                               "InterchangeChunkLoops", "OutlineClusterScopes",
                                                               "OutlineIncoreScopes"]


def test_a_pass_refuses_input_lacking_its_requirement():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c2

    with pytest.raises(InternalCompilerError, match="requires ReturnParamsExplicit"):
        passes.ClassifyIterArgCarry()(Before)


def test_a_store_written_in_the_return_is_bound_first_not_dropped():
    # `return pl.store(...)` traced to nothing (the tracer followed Vars only): the kernel
    # fallback then replaced the store by its Out param, dropping it, and the caller's return
    # failed ReturnParamsExplicit (an internal compiler error for a valid program).
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            return pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32],
                 d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            return self.k(a, d)

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c_1 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32],
                 d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            d_1 = self.k(a, d)
            return d

    after = assert_pass(passes.NormalizeReturnOrder(), Before, Expected)
    assert passes.verify_property(passes.IRProperty.ReturnParamsExplicit, after) == []


def test_a_store_written_in_the_return_runs():
    import numpy as np
    import pypto

    @pl.program
    class Inline:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            return pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(a, [0, 0], [16, 16])), [0, 0], c)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32],
                 d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            d = self.k(a, d)
            return d

    prog = pypto.compile(Inline)
    try:
        a = np.arange(256, dtype=np.float32).reshape(16, 16)
        d = np.zeros_like(a)
        prog(a, d, race_check=True)
        np.testing.assert_array_equal(d, a + a)
    finally:
        prog.close()
