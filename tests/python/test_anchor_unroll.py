"""anchor_features.md §12, pl.unroll: the loop is ForKind.Unroll in parsed IR (printed pl.unroll) and
UnrollLoops (first pass) copies its body per iteration value. Golden C++: tests/golden/anchor_unroll/."""
import os

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import ir
from pypto.ir import passes

from codegen_test_util import GOLDEN_DIR, load_single_program
from test_diagnostics import body_check


def golden():
    return load_single_program(os.path.join(GOLDEN_DIR, "anchor_unroll", "program.py"))


def test_unroll_e2e_numpy():
    compiled = pypto.compile(golden())
    x = np.random.default_rng(12).standard_normal((12, 16)).astype(np.float32)
    y = np.full((4, 16), -9.0, np.float32)
    compiled(x, y)
    s = x[0:4] + x[4:8] + x[8:12]
    np.testing.assert_allclose(y, np.maximum(s, 0), rtol=1e-6, atol=1e-6)


def test_parsed_ir_keeps_the_unroll_loop_and_the_pass_removes_it():
    p = golden()
    text = ir.python_print(p)
    assert "pl.unroll(1, 3, 1" in text and "pl.unroll(-4, 0, 1" in text and "pl.unroll(0, 0, 1" in text
    assert passes.default_pipeline()[0].name == "UnrollLoops"
    out = passes.UnrollLoops()(p)
    after = ir.python_print(out)
    assert "pl.unroll" not in after
    assert after.count("self.row(") == 4 and "self.row(s_1, -4 + 4, y)" in after
    assert "pl.load(x, [2 * 4, 0], [4, 16])" in after   # the second kernel copy, k = 2


def test_unroll_orchestration_has_no_loop():
    cpp = pypto.compile(golden()).files["orchestration/main.cpp"]
    assert "for (" not in cpp and cpp.count("rt_submit_aiv_task(1,") == 4


def test_unroll_with_init_values_is_refused():
    body_check("for i in pl.unroll(2, init_values=(d,)):  #!\n    d = self.kernel_add(a, b, d)\nreturn d",
               "pl.unroll cannot be combined with init_values", "(d,)")


def test_unroll_with_runtime_bound_is_refused():
    body_check("for i in pl.unroll(n):  #!\n    d = self.kernel_add(a, b, d)\nreturn d",
               "pl.unroll requires compile-time constant integer bounds, got 'n'", "n)")


def test_unroll_zero_step_is_refused():
    body_check("for i in pl.unroll(0, 4, 0):  #!\n    d = self.kernel_add(a, b, d)\nreturn d",
               "pl.unroll step must not be 0", "0):")


def test_unroll_chunk_outside_auto_chunk_is_refused():
    # chunk= belongs to a pl.auto_chunk scope (anchor_features §7; test_anchor_auto_chunk.py)
    body_check("for i in pl.unroll(4, chunk=2):  #!\n    d = self.kernel_add(a, b, d)\nreturn d",
               "chunk= on pl.unroll is only valid inside", "2):")


def test_break_in_unroll_is_refused():
    body_check("for i in pl.unroll(4):\n    break  #!\nreturn d", "break", "break")


# -- printed form round-trips (anchor_features.md §12: every attribute prints and re-parses) -----
def test_unroll_with_carries_prints_implicit_carries_and_reparses():
    p = golden()
    text = ir.python_print(p)
    # both the orchestration (y) and the kernel (acc) unroll loops carry values
    assert text.count("implicit_carries=(") == 3 and "pl.unroll(1, 3, 1, init_values" not in text
    reparsed = pl.parse_program(text)
    ok, why = ir.structural_equal_explain(p, reparsed)
    assert ok, why
    assert ir.python_print(reparsed) == text
    # the re-parsed program still unrolls and computes the same
    compiled = pypto.compile(reparsed)
    x = np.random.default_rng(5).standard_normal((12, 16)).astype(np.float32)
    y = np.zeros((4, 16), np.float32)
    compiled(x, y)
    np.testing.assert_allclose(y, np.maximum(x[0:4] + x[4:8] + x[8:12], 0), rtol=1e-6, atol=1e-6)


def test_implicit_carries_is_an_unroll_keyword_only():
    body_check("for i, (e,) in pl.range(2, implicit_carries=(d,)):  #!\n    f = self.kernel_add(a, b, e)\n"
               "    g = pl.yield_(f)\nreturn g", "pl.range has no keyword 'implicit_carries'", "(d,)")


# -- pl.unroll in a HOST program (level=pl.Level.HOST); golden: tests/golden/host_unroll/ --------
def host_golden():
    return load_single_program(os.path.join(GOLDEN_DIR, "host_unroll", "host_program.py"))


def test_unroll_in_host_program_e2e_numpy():
    compiled = pypto.compile(host_golden())
    rng = np.random.default_rng(17)
    x = rng.standard_normal((16, 16)).astype(np.float32)
    acc = rng.standard_normal((16, 16)).astype(np.float32)
    ref = acc + (1 + 2 + 3) * x
    stats = compiled(x, acc)
    assert stats["tasks_executed"] == 3
    np.testing.assert_allclose(acc, ref, rtol=1e-5, atol=1e-5)


def test_unroll_in_host_program_has_no_loop_and_chains_the_edges():
    from pypto import host
    p = host_golden()
    assert "pl.unroll(1, 4, 1, implicit_carries=(" in ir.python_print(p)
    code = host.generate_host_orchestration(p, "host_main").code
    assert "for (" not in code and code.count("submit_next_level(0,") == 3
    assert "args_t1.add_dep_wait(prev);" in code and "args_t2.add_dep_wait(prev_1);" in code
    assert "(void)prev_2;" in code   # the last copy's TaskId is unused: no -Wunused-but-set-variable


def test_long_unroll_in_host_program_names_every_copy_with_the_next_free_suffix(tmp_path):
    # 2,999 copies of one TaskId name: prev, prev_1, ..., prev_2998, each copy waiting on the one
    # before (HostEmitter::fresh starts each search above the suffixes it took; a search from 0
    # per copy was quadratic in the copies and picked the same names).
    from pypto import host
    src = open(os.path.join(GOLDEN_DIR, "host_unroll", "host_program.py")).read()
    long_src = src.replace("STEPS = 4", "STEPS = 3000")
    assert long_src != src
    path = tmp_path / "host_unroll_long.py"
    path.write_text(long_src)
    code = host.generate_host_orchestration(load_single_program(str(path)), "host_main").code
    assert code.count("submit_next_level(0,") == 2999
    assert "args_t1.add_dep_wait(prev);" in code and "args_t2.add_dep_wait(prev_1);" in code
    assert "args_t2998.add_dep_wait(prev_2997);" in code and "(void)prev_2998;" in code
    assert "prev_2999" not in code


def test_unroll_in_host_program_refuses_runtime_bounds(tmp_path):
    src = open(os.path.join(GOLDEN_DIR, "host_unroll", "host_program.py")).read()
    bad = src.replace("pl.unroll(1, STEPS)", "pl.unroll(1, acc.shape[0])")
    assert bad != src
    path = tmp_path / "host_unroll_bad.py"
    path.write_text(bad)
    with pytest.raises(pypto.PyptoError, match=r"pl.unroll requires compile-time constant integer bounds, "
                                                r"got 'acc.shape\[0\]'"):
        load_single_program(str(path))


@pytest.mark.parametrize("bounds", ["1000000000000", "-9223372036854775808, 9223372036854775807", "9223372036854775807, -9223372036854775808, -1"])
def test_unroll_too_long_is_a_located_error_not_an_endless_expansion(bounds):
    from pypto.errors import PyptoError
    from test_diagnostics import program
    src = program(f"for i in pl.unroll({bounds}):  #!\n    d = self.kernel_add(a, b, d)\nreturn d")
    with pytest.raises(PyptoError) as ei:
        pypto.compile(pl.parse_program(src, "t.py"))
    e = ei.value
    assert "pl.unroll would copy its body" in e.message and "more than the limit of 1048576" in e.message, e
    assert e.file == "t.py" and "pl.range" in e.help, e


def test_unroll_near_int64_limits_with_few_trips_compiles():
    from test_diagnostics import program
    src = program("for i in pl.unroll(9223372036854775804, 9223372036854775807, 4611686018427387904):  #!\n    d = self.kernel_add(a, b, d)\nreturn d")
    cpp = pypto.compile(pl.parse_program(src, "t.py")).files["orchestration/main.cpp"]
    assert cpp.count("rt_submit_aiv_task(") == 1
