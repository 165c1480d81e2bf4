"""UpgradeWrittenParamDirections: a kernel parameter declared In that the body writes becomes
Out (InOut when also read); callers follow; an Orchestration's In parameter is refused."""

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import codegen
from pypto.ir import passes
from pypto._core.ir import ParamDirection as PD

from pass_test_util import assert_pass


def test_written_param_becomes_out_and_read_written_param_inout():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Tensor[[16, 16], pl.FP32],
              d: pl.Tensor[[16, 16], pl.FP32]) -> tuple[pl.Tensor[[16, 16], pl.FP32], pl.Tensor[[16, 16], pl.FP32]]:
            c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            d = pl.store(pl.add(pl.load(d, [0, 0], [16, 16]), 1.0), [0, 0], d)
            return c, d

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
              d: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> tuple[pl.Tensor[[16, 16], pl.FP32], pl.Tensor[[16, 16], pl.FP32]]:
            c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            d = pl.store(pl.add(pl.load(d, [0, 0], [16, 16]), 1.0), [0, 0], d)
            return c, d

    assert_pass(passes.UpgradeWrittenParamDirections(), Before, Expected)


def test_write_through_a_loop_carry_and_a_later_read_of_the_stored_value_is_inout():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
            for i, (acc,) in pl.range(2, init_values=(c,)):
                acc2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], acc)
                acc3 = pl.yield_(acc2)
            t = pl.load(acc3, [0, 0], [16, 16])
            c2 = pl.store(t, [0, 0], acc3)
            return c2

    after = passes.UpgradeWrittenParamDirections()(Before)
    assert after.get("k").param_directions == [PD.In, PD.InOut]


def test_declared_directions_and_read_only_params_never_change():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
              d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            d = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], d)
            return d

    after = passes.UpgradeWrittenParamDirections()(Before)
    assert after.get("k").param_directions == [PD.In, PD.InOut, PD.Out]


def test_a_group_param_passed_into_an_upgraded_slot_follows():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.AIV)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
            c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Group)
        def g(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
            c = self.k(a, c)
            return c

    after = passes.UpgradeWrittenParamDirections()(Before)
    assert after.get("k").param_directions == [PD.In, PD.Out]
    assert after.get("g").param_directions == [PD.In, PD.Out]


@pl.program
class WritesItsInput:
    @pl.function(type=pl.FunctionType.InCore)
    def produce(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.exp(pl.load(x, [0, 0], [16, 16])), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def consume(self, y: pl.Tensor[[16, 16], pl.FP32],
                out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        out = pl.store(pl.add(pl.load(y, [0, 0], [16, 16]), pl.load(y, [0, 0], [16, 16])), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.create_tensor([16, 16], dtype=pl.FP32)
        y = self.produce(x, y)
        out = self.consume(y, out)
        return out


def test_the_written_param_is_submitted_as_an_output():
    funcs = codegen.orchestration_functions(WritesItsInput)
    code = codegen.generate_orchestration(WritesItsInput, funcs[0]).code
    assert "params_t0.add_output(y)" in code, code   # was add_input: later readers were not ordered after it


@pytest.mark.parametrize("race_check", [False, True])
def test_written_param_program_runs_ordered(race_check):
    x = np.random.default_rng(1).standard_normal((16, 16)).astype(np.float32)
    out = np.zeros((16, 16), np.float32)
    stats = pypto.compile(WritesItsInput)(x, out, race_check=race_check)
    assert stats.races == 0
    np.testing.assert_allclose(out, 2 * np.exp(x), rtol=1e-5)


def test_an_entry_in_param_passed_to_an_upgraded_slot_is_upgraded_and_written():
    # anchor_features §16 A: the fixed point runs over every non-InCore function, the entry's
    # parameters too, as in the reference compiler (it was refused: the caller's In array would
    # be written). The slot was declared In and inferred Out, so the parser cannot warn here.
    @pl.program
    class Bad:
        @pl.function(type=pl.FunctionType.InCore)
        def produce(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
            y = pl.store(pl.exp(pl.load(x, [0, 0], [16, 16])), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
            y = self.produce(x, y)  # the line
            return y

    compiled = pypto.compile(Bad)
    assert "y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]" in pypto.ir.python_print(codegen.run_pipeline(Bad))
    x = np.random.default_rng(2).standard_normal((16, 16)).astype(np.float32)
    y = np.zeros((16, 16), np.float32)
    compiled(x, y)
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)
    with pytest.raises(pypto.PyptoError, match="read-only but is written"):
        y.setflags(write=False)
        compiled(x, y)


def test_before_expected_a_loop_carried_write_then_read_is_inout_and_declared_directions_stay():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Tensor[[16, 16], pl.FP32],
              d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            for i, (acc,) in pl.range(2, init_values=(c,)):
                acc2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], acc)
                acc3 = pl.yield_(acc2)
            t = pl.load(acc3, [0, 0], [16, 16])
            d2 = pl.store(t, [0, 0], d)
            return d2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
              d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            for i, (acc,) in pl.range(2, init_values=(c,)):
                acc2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], acc)
                acc3 = pl.yield_(acc2)
            t = pl.load(acc3, [0, 0], [16, 16])
            d2 = pl.store(t, [0, 0], d)
            return d2

    assert_pass(passes.UpgradeWrittenParamDirections(), Before, Expected)


def test_before_expected_a_group_and_its_kernel_follow_the_write():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.AIV)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
            c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Group)
        def g(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
            c = self.k(a, c)
            return c

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.AIV)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Group)
        def g(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c = self.k(a, c)
            return c

    assert_pass(passes.UpgradeWrittenParamDirections(), Before, Expected)
