"""DSL spellings that used to parse and then do nothing (issue 11, "Dead ends"): each is now
refused with a located error where it is written, or documented for what it is.

  pl.FunctionType.Inline / Spmd, role=pl.Role.*, level=pl.Level.CLUSTER   refused by the parser
  pl.Layout.DN on a kernel tensor parameter                               refused by VerifyKernelProgram
  backend.set_backend_type                                                a label: same generated code
"""
import os

import pytest

import pypto.language as pl
from pypto import backend, codegen
from pypto._core import kernel_cpu
from pypto.errors import PyptoError

from codegen_test_util import GOLDEN_DIR, load_single_program

T = "pl.Tensor[[16, 16], pl.FP32]"


def kernel_program(decorator: str, param: str = f"x: {T}") -> str:
    return ("import pypto.language as pl\n\n\n@pl.program\nclass P:\n"
            f"    {decorator}\n"
            f"    def k(self, {param}, y: pl.Out[{T}]) -> {T}:\n"
            "        y2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)\n"
            "        return y\n")


def located(src: str, at: str, line: int, run=None) -> PyptoError:
    """The PyptoError of parsing (or `run` on the parsed program), located at `at` on `line`."""
    with pytest.raises(PyptoError) as ei:
        prog = pl.parse_program(src, "t.py")
        if run:
            run(prog)
    e = ei.value
    col = src.splitlines()[line - 1].index(at) + 1
    assert (e.file, e.line, e.col) == ("t.py", line, col), str(e)
    assert str(e).startswith(f"error: {e.message} --> t.py:{line}:{col}")
    return e


@pytest.mark.parametrize("kind", ["Inline", "Spmd"])
def test_inline_and_spmd_function_types_are_refused(kind):
    e = located(kernel_program(f"@pl.function(type=pl.FunctionType.{kind})"), f"pl.FunctionType.{kind}", 6)
    assert e.message == f"pl.FunctionType.{kind} is not supported"
    assert e.help


def test_spmd_help_points_at_the_scope():
    e = located(kernel_program("@pl.function(type=pl.FunctionType.Spmd)"), "pl.FunctionType.Spmd", 6)
    assert "pl.spmd(n)" in e.help


@pytest.mark.parametrize("role", ["Orchestrator", "Worker"])
def test_role_is_refused(role):
    e = located(kernel_program(f"@pl.function(type=pl.FunctionType.InCore, role=pl.Role.{role})"),
                f"pl.Role.{role}", 6)
    assert e.message == f"role=pl.Role.{role} is not supported: no pass or code generator reads it"
    assert "drop role=" in e.help


def test_cluster_level_on_a_function_is_refused():
    e = located(kernel_program("@pl.function(type=pl.FunctionType.InCore, level=pl.Level.CLUSTER)"),
                "pl.Level.CLUSTER", 6)
    assert e.message == "level=pl.Level.CLUSTER is not supported on a function"
    assert "pl.cluster()" in e.help


def test_cluster_level_on_pl_at_is_refused():
    src = (kernel_program("@pl.function(type=pl.FunctionType.InCore)")
           + f"\n    @pl.function(type=pl.FunctionType.Orchestration)\n"
             f"    def main(self, x: {T}, y: pl.Out[{T}]) -> {T}:\n"
             "        with pl.at(level=pl.Level.CLUSTER):\n"
             "            y = self.k(x, y)\n"
             "        return y\n")
    e = located(src, "pl.Level.CLUSTER", 13)
    assert e.message == "pl.at(level=pl.Level.CLUSTER) is not supported"


def test_dn_layout_on_a_kernel_parameter_is_refused_before_printing():
    src = kernel_program("@pl.function(type=pl.FunctionType.InCore)", f"x: pl.Tensor[[16, 16], pl.FP32, pl.Layout.DN]")
    e = located(src, "x: pl.Tensor", 7, run=lambda p: kernel_cpu.generate(p, "k"))
    assert e.message == ("pl.Layout.DN (a column-major view) is not supported by the CPU kernel backend: "
                         "parameter 'x' of kernel 'k'")
    assert "ND layout" in e.help
    # The layout still parses and prints (it is IR); only running it is refused.
    assert "pl.Layout.DN" in str(pl.parse_program(src, "t.py"))


def test_backend_type_is_a_label_that_does_not_change_the_generated_code():
    orch_basic = load_single_program(os.path.join(GOLDEN_DIR, "orch_basic", "program.py"))
    old = backend.get_backend_type()
    try:
        cpu = codegen.generate_orchestration(orch_basic, orch_basic.orch_basic)
        backend.set_backend_type(backend.BackendType.Ascend950)
        other = codegen.generate_orchestration(orch_basic, orch_basic.orch_basic)
    finally:
        backend.set_backend_type(old)
    assert other.backend is backend.BackendType.Ascend950 and cpu.backend is backend.BackendType.CPU
    assert other.code == cpu.code
    assert "label" in backend.set_backend_type.__doc__
