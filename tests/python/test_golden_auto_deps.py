"""Golden tests of analyze_auto_scopes_for_deps=True: tests/golden_auto_deps/<case>/program.py ->
expected.cpp (same conventions as test_golden.py: blank and comment-only lines ignored; the
code must compile with -Wall -Werror). Cases: a fully covered region lowered to a compiler-owned
MANUAL scope (manual_chain), a partially covered one (partial), a fallback (fallback), a hand-placed pl.scope() kept AUTO with
edges on top (hand_scope), a
cross-scope hoist (cross_scope_hoist), loop-carried edges (loop_carried) and a fan-in from a
pl.range of independent instances through an array of TaskId slots (range_fan_in), kernel calls
under an if with TaskIds merged as if results (if_branches), a pl.parallel whose iterations
conflict run in order (parallel_conflict). Each also runs
race-checked and equal to its switch-off build.

    PYPTO_UPDATE_GOLDEN=1 python -m pytest -q tests/python/test_golden_auto_deps.py
"""
import os
import warnings

import numpy as np
import pytest

import pypto
from pypto import codegen

from codegen_test_util import REPO, compile_cpp, load_single_program, significant_lines

DIR = os.path.join(REPO, "tests", "golden_auto_deps")
CASES = sorted(d for d in os.listdir(DIR) if os.path.isfile(os.path.join(DIR, d, "program.py")))
UPDATE = os.environ.get("PYPTO_UPDATE_GOLDEN") == "1"
VERDICT = {"manual_chain": "manual", "partial": "auto", "fallback": "fallback", "cross_scope_hoist": "manual",
           "loop_carried": "manual", "range_fan_in": "manual", "if_branches": "manual", "hand_scope": "auto",
           "parallel_conflict": "manual"}


def _program(case):
    return load_single_program(os.path.join(DIR, case, "program.py"))


def test_cases_exist():
    assert set(VERDICT) <= set(CASES)


@pytest.mark.parametrize("case", CASES)
def test_golden_auto_deps(case):
    program = _program(case)
    prepared = codegen.run_pipeline(program, analyze_auto_scopes_for_deps=True)
    assert prepared.get("main").attrs["auto_deps"].startswith(VERDICT[case])
    code = codegen.generate_orchestration(prepared, "main", run_passes=False).code
    path = os.path.join(DIR, case, "expected.cpp")
    if UPDATE:
        with open(path, "w") as f:
            f.write(code)
    with open(path) as f:
        assert significant_lines(code) == significant_lines(f.read()), code
    ok, log = compile_cpp(code, "auto_deps_" + case)
    assert ok, log


@pytest.mark.parametrize("case", CASES)
def test_golden_auto_deps_runs_clean_and_equal(case):
    program = _program(case)
    off, on = pypto.compile(program), pypto.compile(program, analyze_auto_scopes_for_deps=True)
    a = off.random_inputs(seed=3)
    b = [x.copy() if isinstance(x, np.ndarray) else x for x in a]
    off(*a, aiv_workers=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        on(*b, aiv_workers=2, race_check=True)
    for x, y in zip(a, b):
        if isinstance(x, np.ndarray):
            assert np.array_equal(x, y)


def _all_inputs():
    import glob
    from codegen_test_util import GOLDEN_DIR
    paths = sorted(glob.glob(os.path.join(DIR, "*", "program.py")) + glob.glob(os.path.join(GOLDEN_DIR, "*", "program.py")))
    return [p for p in paths if "/host_" not in p]


@pytest.mark.parametrize("path", _all_inputs(), ids=lambda p: os.path.basename(os.path.dirname(p)))
def test_switch_on_pipeline_output_round_trips(path):
    # The printed IR (what PYPTO_DUMP_IR shows: edges, carries, compiler MANUAL scopes, verdict)
    # parses back to a structurally equal program.
    import pypto.language as pl
    from pypto import ir
    lowered = codegen.run_pipeline(load_single_program(path), analyze_auto_scopes_for_deps=True)
    text = ir.python_print(lowered)
    again = pl.parse_program(text)
    ok, why = ir.structural_equal_explain(lowered, ir.Program.make(lowered.name, list(again.functions),
                                                                    list(again.dynamic_dims), again.span))
    assert ok, why + "\n" + text


@pytest.mark.parametrize("n", [1, 5])
def test_if_branches_both_ways_race_checked(n):
    # Both branches of if_branches run (n > 2 and not), race-checked and equal to switch-off.
    program = _program("if_branches")
    off, on = pypto.compile(program), pypto.compile(program, analyze_auto_scopes_for_deps=True)
    a = off.random_inputs(seed=5)
    a[-1] = n
    b = [x.copy() if isinstance(x, np.ndarray) else x for x in a]
    off(*a, aiv_workers=2)
    on(*b, aiv_workers=2, race_check=True)
    assert all(np.array_equal(x, y) for x, y in zip(a, b) if isinstance(x, np.ndarray))
