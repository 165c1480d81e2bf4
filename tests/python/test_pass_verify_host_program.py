"""VerifyHostProgram (a verify pass): every HOST-level Orchestration function of a prepared
program is checked against what the HOST code generator can express. A valid program comes back
unchanged (DSL Before / Expected, Expected being the prepared program as printed and re-parsed);
an invalid one is refused with the located UserError generate_host_orchestration reports (it
runs the same per-function check, VerifyHostFunction, first)."""

import pytest

import pypto.language as pl
from pypto import codegen, host, ir
from pypto.errors import PyptoError
from pypto.ir import passes

from pass_test_util import assert_equal
from test_host_l3 import host_src


def _prepared_and_expected(body, replace=None):
    src = host_src(body)
    if replace:
        src = src.replace(*replace)
    prepared = codegen.run_pipeline(pl.parse_program(src, "t.py"))
    expected = pl.parse_program(ir.python_print(prepared))
    return prepared, expected


def test_submits_with_deps_pass_unchanged():
    prepared, expected = _prepared_and_expected("d, t = pl.submit(self.chip_add, a, b, d)\n"
                        "e, u = pl.submit(self.chip_inc, e, deps=[t])\nreturn d")
    after = passes.VerifyHostProgram()(prepared)
    assert_equal(after, expected, "VerifyHostProgram")
    assert passes.verify_property(passes.IRProperty.HostProgramVerified, after) == []


def test_a_loop_of_submits_passes_unchanged():
    prepared, expected = _prepared_and_expected("for i in pl.range(4):\n"
                        "    e, t = pl.submit(self.chip_inc, e)\nreturn d")
    after = passes.VerifyHostProgram()(prepared)
    assert_equal(after, expected, "VerifyHostProgram")
    assert passes.verify_property(passes.IRProperty.HostProgramVerified, after) == []


def test_a_branch_passes_unchanged():
    prepared, expected = _prepared_and_expected("if flag:\n    e, t = pl.submit(self.chip_inc, e)\nd, u = pl.submit(self.chip_add, a, b, d)\nreturn d",
                        ("e: pl.InOut[pl.Tensor[[16], pl.FP32]])",
                         "e: pl.InOut[pl.Tensor[[16], pl.FP32]], flag: pl.Scalar[pl.BOOL])"))
    after = passes.VerifyHostProgram()(prepared)
    assert_equal(after, expected, "VerifyHostProgram")
    assert passes.verify_property(passes.IRProperty.HostProgramVerified, after) == []


@pytest.mark.parametrize("body, message, help_text", [
    ("d, t = pl.submit(self.kernel_add, a, b, d)\nreturn d",
     "a HOST-level orchestration can only submit chip-level Orchestration functions; 'kernel_add' is InCore",
     "submit that"),
    ("tmp = pl.create_tensor([16], dtype=pl.FP32)\nd, t = pl.submit(self.chip_add, a, tmp, d)\nreturn d",
     "is not supported in a HOST-level orchestration", None),
], ids=["kernel-submitted", "tensor-op"])
def test_invalid_programs_are_refused_as_generate_host_orchestration_refuses_them(body, message, help_text):
    prepared = codegen.run_pipeline(pl.parse_program(host_src(body), "t.py"))
    errors = []
    for run in (lambda: passes.VerifyHostProgram()(prepared),
                lambda: host.generate_host_orchestration(prepared, "main", run_passes=False)):
        with pytest.raises(PyptoError) as ei:
            run()
        e = ei.value
        assert message in e.message and (help_text is None or help_text in e.help)
        errors.append((e.message, e.help, e.file, e.line, e.col))
    assert errors[0] == errors[1]
    assert errors[0][2] == "t.py"
    assert passes.verify_property(passes.IRProperty.HostProgramVerified, prepared) == [
        "function 'main': " + errors[0][0]]


def test_chip_level_functions_are_not_host_checked():
    # chip_add submits a kernel, which is right at chip level: only HOST functions are checked.
    prepared, expected = _prepared_and_expected("d, t = pl.submit(self.chip_add, a, b, d)\nreturn d")
    after = passes.VerifyHostProgram()(prepared)
    assert_equal(after, expected, "VerifyHostProgram")
    assert passes.verify_property(passes.IRProperty.HostProgramVerified, after) == []
    assert after.get("chip_add").level != ir.Level.HOST
