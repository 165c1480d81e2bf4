"""VerifyOrchestrationProgram (a verify pass): every chip-level Orchestration function of a
prepared program is checked against what the L2 code generator can express. A valid program
comes back unchanged (DSL Before / Expected, Expected being the prepared program as printed and
re-parsed); an invalid one is refused with the located UserError generate_orchestration reports
(it runs the same per-function check, VerifyOrchestrationFunction, first)."""

import pytest

import pypto.language as pl
from pypto import codegen, ir
from pypto.errors import PyptoError
from pypto.ir import passes

from pass_test_util import assert_equal
from test_verify_group_kernels import _program as group_program


def _prepared_and_expected(before):
    """Runs the pass on the prepared `before`; the result equals the prepared program as a
    separately parsed DSL Expected."""
    prepared = codegen.run_pipeline(before)
    expected = pl.parse_program(ir.python_print(prepared))
    return prepared, expected


def test_a_task_in_a_loop_passes_unchanged():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16], pl.FP32], c: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
            c = pl.store(pl.add(pl.load(a, [0], [16]), 1.0), [0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16], pl.FP32], c: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
            for i in pl.range(0, 4, 1):
                c = self.k(a, c)
            return c

    prepared, expected = _prepared_and_expected(Before)
    after = passes.VerifyOrchestrationProgram()(prepared)
    assert_equal(after, expected, "VerifyOrchestrationProgram")
    assert passes.verify_property(passes.IRProperty.OrchestrationProgramVerified, after) == []


def test_scalars_branches_and_dynamic_dims_pass_unchanged():
    M = pl.dynamic("M")

    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[M], pl.FP32], n: pl.Scalar[pl.INDEX],
              c: pl.Out[pl.Tensor[[M], pl.FP32]]) -> pl.Tensor[[M], pl.FP32]:
            c = pl.store(pl.load(a, [0], [16]), [0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[M], pl.FP32], n: pl.Scalar[pl.INDEX],
                 c: pl.Out[pl.Tensor[[M], pl.FP32]]) -> pl.Tensor[[M], pl.FP32]:
            if n > 2:
                c = self.k(a, n // 2, c)
            else:
                c = self.k(a, n % 3, c)
            return c

    prepared, expected = _prepared_and_expected(Before)
    after = passes.VerifyOrchestrationProgram()(prepared)
    assert_equal(after, expected, "VerifyOrchestrationProgram")
    assert passes.verify_property(passes.IRProperty.OrchestrationProgramVerified, after) == []


def test_a_group_and_every_chip_level_function_pass_unchanged():
    prog = group_program("        out = self.act(c, out)")   # helper and main: two Orchestration functions
    prepared, expected = _prepared_and_expected(prog)
    after = passes.VerifyOrchestrationProgram()(prepared)
    assert_equal(after, expected, "VerifyOrchestrationProgram")
    assert passes.verify_property(passes.IRProperty.OrchestrationProgramVerified, after) == []
    assert after.get("grp").group_aiv == "act"


@pytest.mark.parametrize("body, message, help_text", [
    ("        out = self.act(c, out)\n        out = self.act2(c, out)",
     "Group function 'grp' calls two AIV kernels ('act' and 'act2')",
     "a Group body calls exactly one AIC kernel and one AIV kernel"),
    ("        out = self.helper(c, out)",
     "Group function 'grp' calls 'helper', which is not a kernel",
     "a Group body calls one AIC kernel and one AIV kernel"),
    ("        x = 1",
     "Group function 'grp' must call an AIC kernel and/or an AIV kernel",
     "AIC: FunctionType.AIC or an InCore kernel using Left/Right/Acc/Mat tiles; AIV otherwise"),
], ids=["two-aiv", "non-kernel", "no-kernel"])
def test_invalid_programs_are_refused_as_generate_orchestration_refuses_them(body, message, help_text):
    prepared = codegen.run_pipeline(group_program(body))
    errors = []
    for run in (lambda: passes.VerifyOrchestrationProgram()(prepared),
                lambda: codegen.generate_orchestration(prepared, "main", run_passes=False)):
        with pytest.raises(PyptoError) as ei:
            run()
        e = ei.value
        assert e.message == message and e.help == help_text
        errors.append((e.message, e.help, e.file, e.line, e.col))
    assert errors[0] == errors[1]
    assert errors[0][3] == 23   # the Group function's line
    assert passes.verify_property(passes.IRProperty.OrchestrationProgramVerified, prepared) == [
        "function 'main': " + message]


def test_an_unprepared_program_is_refused_before_the_check():
    prog = group_program("        out = self.act(c, out)")
    with pytest.raises(Exception, match="pass VerifyOrchestrationProgram requires [A-Za-z]+, which its input lacks"):
        passes.VerifyOrchestrationProgram()(prog)


def test_counted_loops_stamped_is_a_declared_requirement():
    # Both verifier passes check it (VerifyCodegenPreconditions) but their descriptors did not
    # list it: an input with a stale stamp failed as 'codegen preconditions do not hold' instead
    # of the contract error every other requirement gives.
    for make in (passes.VerifyOrchestrationProgram, passes.VerifyHostProgram):
        assert "CountedLoopsStamped" in make().required, make

    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16], pl.FP32], c: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
            c = pl.store(pl.add(pl.load(a, [0], [16]), 1.0), [0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16], pl.FP32], c: pl.Out[pl.Tensor[[16], pl.FP32]],
                 n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16], pl.FP32]:
            for i in pl.range(0, n, 4):    # a run-time stop, step 4: printed counted
                c = self.k(a, c)
            return c

    text = ir.python_print(codegen.run_pipeline(Before))
    assert "counted=True" in text
    stale = pl.parse_program(text.replace(", counted=True", ""))
    with pytest.raises(Exception, match="pass VerifyOrchestrationProgram requires CountedLoopsStamped, which its "
                                        "input lacks"):
        passes.VerifyOrchestrationProgram()(stale)
