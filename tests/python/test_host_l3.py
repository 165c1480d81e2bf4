"""Distributed HOST orchestration: the checks of the HOST lowering (spec README "Distributed
HOST orchestration"). Frontend rejections of pl.submit options other than deps= (each with
its message and exact line:col) and codegen rejections of what L3 cannot express: submitting
a kernel directly, ops other than submits / control flow / TaskId values, non-HOST functions
(TaskId arrays and task_dummy barriers: test_host_l3_taskids.py).
"""

import os
import re
import textwrap

import pytest

import pypto.language as pl
from pypto import host
from pypto.errors import PyptoError

T = "pl.Tensor[[16], pl.FP32]"

PRELUDE = f'''import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel_add(self, a: {T}, b: {T}, c: pl.Out[{T}]) -> {T}:
        c = pl.store(pl.add(pl.load(a, [0], [16]), pl.load(b, [0], [16])), [0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def kernel_inc(self, c: pl.InOut[{T}]) -> {T}:
        c = pl.store(pl.add(pl.load(c, [0], [16]), 1.0), [0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_add(self, a: {T}, b: {T}, c: pl.Out[{T}]) -> {T}:
        c = self.kernel_add(a, b, c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_inc(self, c: pl.InOut[{T}]) -> {T}:
        c = self.kernel_inc(c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)
    def main(self, a: {T}, b: {T}, d: pl.Out[{T}], e: pl.InOut[{T}]) -> {T}:
'''


def host_src(body: str) -> str:
    return PRELUDE + textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8) + "\n"


def check(src: str, message: str, at: str, help: str | None = None, codegen: bool = False):
    """Expect a PyptoError containing `message` at `at` on the line marked `#!`."""
    with pytest.raises(PyptoError) as ei:
        prog = pl.parse_program(src, "t.py")
        if codegen:
            host.generate_host_orchestration(prog, "main")
    e = ei.value
    lines = src.splitlines()
    marked = [i + 1 for i, line in enumerate(lines) if "#!" in line]
    assert len(marked) == 1
    ln = marked[0]
    col = lines[ln - 1].index(at) + 1
    assert message in e.message, f"\nwant: {message}\ngot:  {e.message}"
    assert (e.file, e.line) == ("t.py", ln), f"\n{e}"
    if not codegen:
        assert e.col == col, f"\n{e}"
    if help is not None:
        assert help in e.help, f"\nwant help: {help}\ngot:       {e.help}"


# -- frontend: only deps= ---------------------------------------------------------------------
def test_host_submit_rejects_predicate():
    check(host_src("d, t = pl.submit(self.chip_add, a, b, d, predicate=(e[0] > 0))  #!\nreturn d"),
          "predicate= is not supported by pl.submit in a HOST-level orchestration", "e[0] > 0", help="only deps=")


def test_host_submit_rejects_timing_slot():
    check(host_src("d, t = pl.submit(self.chip_add, a, b, d, timing_slot=3)  #!\nreturn d"),
          "timing_slot= is not supported by pl.submit in a HOST-level orchestration", "3)", help="only deps=")


def test_host_submit_rejects_allow_early_resolve():
    check(host_src("d, t = pl.submit(self.chip_add, a, b, d, allow_early_resolve=True)  #!\nreturn d"),
          "allow_early_resolve= is not supported by pl.submit in a HOST-level orchestration", "True)")


@pytest.mark.parametrize("kw", ["core_num=2", "sync_start=True"])
def test_host_submit_has_no_launch_spec(kw):
    check(host_src(f"d, t = pl.submit(self.chip_add, a, b, d, {kw})  #!\nreturn d"),
          f"pl.submit has no keyword '{kw.split('=')[0]}'", kw.split("=")[1] + ")")


def test_host_spmd_submit_unavailable():
    check(host_src("d, t = pl.spmd_submit(self.chip_add, a, b, d, core_num=2, deps=[])  #!\nreturn d"),
          "pl.spmd_submit is not available in a HOST-level orchestration", "pl.spmd_submit")


def test_host_submit_must_pass_inout_arg():
    check(host_src("e, t = pl.submit(self.chip_inc)  #!\nreturn d"),
          "pl.submit in a HOST-level orchestration must pass every argument of 'chip_inc' (1), got 0", "pl.submit",
          help="pass the pl.Out arguments too")


# -- codegen: what the L3 runtime cannot express --------------------------------------------
def test_host_cannot_submit_a_kernel_directly():
    check(host_src("d, t = pl.submit(self.kernel_add, a, b, d)  #!\nreturn d"),
          "a HOST-level orchestration can only submit chip-level Orchestration functions; 'kernel_add' is InCore",
          "pl.submit", help="submit that", codegen=True)


def test_host_rejects_tensor_ops():
    check(host_src(f"tmp = pl.create_tensor([16], dtype=pl.FP32)  #!\n"
                   "d, t = pl.submit(self.chip_add, a, tmp, d)\nreturn d"),
          "is not supported in a HOST-level orchestration", "pl.create_tensor", codegen=True)


def test_generate_host_rejects_chip_function():
    prog = pl.parse_program(host_src("d, t = pl.submit(self.chip_add, a, b, d)\nreturn d"), "t.py")
    with pytest.raises(PyptoError) as ei:
        host.generate_host_orchestration(prog, "chip_add")
    assert "is not a HOST-level Orchestration function" in ei.value.message


def test_host_loop_swapping_carries_goes_through_temporaries():
    """A yield that swaps two carries is one simultaneous assignment (the shared control-flow
    printer): before, HOST printed `t_1 = u_1; u_1 = t_1;`, losing t_1."""
    prog = pl.parse_program(host_src("""
        d, t = pl.submit(self.chip_add, a, b, d)
        e, u = pl.submit(self.chip_inc, e)
        for k in pl.range(3):
            e, w = pl.submit(self.chip_inc, e, deps=[t])
            x = t
            t = u
            u = x
        return d
    """), "t.py")
    code = host.generate_host_orchestration(prog, "main").code
    body = code[code.index("for (int64_t k"):]
    lines = [ln.strip() for ln in body.splitlines()]
    i = lines.index("auto t_1_next = u_1;")
    assert lines[i:i + 4] == ["auto t_1_next = u_1;", "auto u_1_next = t_1;", "t_1 = t_1_next;", "u_1 = u_1_next;"], body


def test_host_deps_lower_to_dep_waits():
    prog = pl.parse_program(host_src("""
        d, t = pl.submit(self.chip_add, a, b, d)
        e, u = pl.submit(self.chip_inc, e, deps=[t, None])
        e, v = pl.submit(self.chip_inc, e)
        return d
    """), "t.py")
    r = host.generate_host_orchestration(prog, "main")
    assert r.target_ids == {"chip_add": 0, "chip_inc": 1}
    code = r.code
    assert "TaskHandle t = submit_next_level(0, args_t0);" in code
    assert "args_t1.add_dep_wait(t);" in code           # fresh handle: unguarded
    assert code.count("add_dep_wait") == 1              # None dropped; no edge for v (per-target chain)
    assert "submit_next_level(1, args_t2);" in code
    assert "(void)u;" in code and "(void)v;" in code    # unused handles


@pytest.mark.parametrize("value", ["abc", "0", "-5", "nan", "inf", "1e400"])
def test_bad_l3_task_timeout_is_refused_naming_the_variable(monkeypatch, value):
    # Under MPI: text was a ValueError traceback on every rank; 0 or a negative value failed every
    # task as 'no completion message within 0 s (the rank died ...)'; nan never timed out.
    monkeypatch.setenv("PYPTO_L3_TASK_TIMEOUT_S", value)
    with pytest.raises(PyptoError, match=r"^error: PYPTO_L3_TASK_TIMEOUT_S='%s' is not a timeout: it must be a "
                                         r"positive number of seconds" % re.escape(value)):
        host.l3_task_timeout()


@pytest.mark.parametrize("value, seconds", [(None, 120.0), ("", 120.0), ("2.5", 2.5), (" 300 ", 300.0)])
def test_l3_task_timeout_values(monkeypatch, value, seconds):
    if value is None:
        monkeypatch.delenv("PYPTO_L3_TASK_TIMEOUT_S", raising=False)
    else:
        monkeypatch.setenv("PYPTO_L3_TASK_TIMEOUT_S", value)
    assert host.l3_task_timeout() == seconds


def test_pypto_run_mpi_refuses_a_bad_task_timeout_before_mpirun(monkeypatch, capsys):
    import subprocess

    from pypto import cli
    for k in [k for k in os.environ if k.startswith(("OMPI_COMM_WORLD", "PMI_"))]:
        monkeypatch.delenv(k)   # the launching process, not a rank
    monkeypatch.setenv("PYPTO_L3_TASK_TIMEOUT_S", "abc")
    monkeypatch.setattr(subprocess, "call", lambda *a, **k: pytest.fail("mpirun started despite the bad timeout"))
    two_chips = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                             "examples", "two_chips.py")
    assert cli.main(["run", two_chips, "--mpi"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pypto: error: PYPTO_L3_TASK_TIMEOUT_S='abc' is not a timeout"), err
    assert "Traceback" not in err


@pytest.mark.parametrize("chips,message", [(0, "chips must be at least 1, got 0"),
                                           (-(2 ** 63), "chips must be at least 1"),
                                           ("2", "chips must be a positive integer, got '2'"),
                                           (2.5, "chips must be a positive integer, got 2.5"),
                                           (True, "chips must be a positive integer, got True")])
def test_compile_host_refuses_a_bad_chip_count(chips, message):
    # before anything is built: a string or a float was a raw TypeError from the comparison
    from codegen_test_util import GOLDEN_DIR, load_single_program
    prog = load_single_program(os.path.join(GOLDEN_DIR, "host_basic", "host_program.py"))
    with pytest.raises(PyptoError, match=re.escape(message)):
        host.compile_host(prog, chips=chips)
