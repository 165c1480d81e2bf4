"""Where the program-validity checks run (issue 11, "one VerifyProgram pass (or a few, by topic)
that runs before any backend"): three verify passes in src/transforms, by backend, each run by
its backend's entry point on what it is asked to print, before it prints anything. They are not
in the default pipeline, and these tests pin why:

- VerifyKernelProgram is the CPU kernel backend's check: a kernel only an accelerator backend
  can run (pl.Layout.DN) still gets its orchestration C++, and kernel_cpu.generate refuses it;
- the orchestration checks are per entry: one Orchestration function of a program compiles while
  another one is still invalid, and that one is refused when it is the entry, with the same
  located error the pass reports for the whole program.
"""

import pytest

import pypto.language as pl
from pypto import codegen
from pypto._core import kernel_cpu
from pypto.errors import PyptoError
from pypto.ir import passes

T = "pl.Tensor[[16, 16], pl.FP32]"


def _program(kernel_param: str, other_body: str):
    src = ("import pypto.language as pl\n\n\n@pl.program\nclass P:\n"
           "    @pl.function(type=pl.FunctionType.InCore)\n"
           f"    def k(self, {kernel_param}, y: pl.Out[{T}]) -> {T}:\n"
           "        y2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)\n"
           "        return y2\n\n"
           "    @pl.function(type=pl.FunctionType.Orchestration)\n"
           f"    def main(self, a: {T}, b: pl.Out[{T}]) -> {T}:\n"
           "        b2 = self.k(a, b)\n"
           "        return b2\n\n"
           "    @pl.function(type=pl.FunctionType.Orchestration)\n"
           f"    def other(self, a: {T}, b: pl.Out[{T}]) -> {T}:\n"
           f"        b2 = {other_body}\n"
           "        return b2\n")
    return pl.parse_program(src, "t.py")


def test_the_kernel_check_belongs_to_the_cpu_kernel_backend():
    p = _program(f"x: pl.Tensor[[16, 16], pl.FP32, pl.Layout.DN]", "self.k(a, b)")
    code = codegen.generate_orchestration(p, "main").code
    assert "rt_submit_aiv_task" in code   # the orchestration C++ of an accelerator's kernel
    with pytest.raises(PyptoError, match="pl.Layout.DN .* is not supported by the CPU kernel backend"):
        kernel_cpu.generate(codegen.run_pipeline(p), "k")
    with pytest.raises(PyptoError, match="pl.Layout.DN"):   # in the pipeline it would refuse the above
        passes.VerifyKernelProgram()(codegen.run_pipeline(p))


def test_the_orchestration_checks_run_per_entry_before_printing():
    p = _program(f"x: {T}", "self.main(a, b)")   # an Orchestration function is no task
    assert "rt_submit_aiv_task" in codegen.generate_orchestration(p, "main").code
    with pytest.raises(PyptoError) as entry:
        codegen.generate_orchestration(p, "other")
    with pytest.raises(PyptoError) as whole:
        passes.VerifyOrchestrationProgram()(codegen.run_pipeline(p))
    assert "calls 'main'" in entry.value.message and (entry.value.line, entry.value.col) == (18, 14)
    assert str(whole.value) == str(entry.value)
