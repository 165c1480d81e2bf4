"""Golden tests of distributed HOST codegen: tests/golden/host_*/host_program.py (DSL in) ->
expected_host.cpp (C++ against runtime/include/pto_l3_api.h out).

Each case defines one @pl.program with one HOST-level Orchestration function (plus the
chip-level functions it submits). The generated file must equal expected_host.cpp, ignoring
blank and comment-only lines, and compile with `g++ -std=c++17 -Wall -Werror -c`.
(The files are named host_program.py / expected_host.cpp so that test_golden.py, which
handles single-Orchestration cases named program.py, does not pick these up.)

    PYPTO_UPDATE_GOLDEN=1 python -m pytest -q tests/python/test_host_l3_golden.py
"""

from __future__ import annotations

import os

import pytest

from codegen_test_util import GOLDEN_DIR, compile_cpp, load_single_program, significant_lines

CASES = sorted(d for d in os.listdir(GOLDEN_DIR) if os.path.isfile(os.path.join(GOLDEN_DIR, d, "host_program.py")))
UPDATE = os.environ.get("PYPTO_UPDATE_GOLDEN") == "1"


def _generate(case: str):
    from pypto import host
    program = load_single_program(os.path.join(GOLDEN_DIR, case, "host_program.py"))
    funcs = host.host_functions(program)
    assert len(funcs) == 1, "HOST golden case %s must have exactly one HOST-level Orchestration function" % case
    return host.generate_host_orchestration(program, funcs[0])


def test_cases_exist():
    assert {"host_basic", "host_control_flow", "host_taskid_arrays"} <= set(CASES)


@pytest.mark.parametrize("case", CASES)
def test_host_golden(case):
    result = _generate(case)
    path = os.path.join(GOLDEN_DIR, case, "expected_host.cpp")
    if UPDATE:
        with open(path, "w") as f:
            f.write(result.code)
    assert os.path.isfile(path), "missing %s (run with PYPTO_UPDATE_GOLDEN=1)" % path
    with open(path) as f:
        expected = f.read()
    assert significant_lines(result.code) == significant_lines(expected), (
        "generated code for %s differs from %s:\n%s" % (case, path, result.code))
    assert result.files == {"host/%s.cpp" % result.func_name: result.code}


@pytest.mark.parametrize("case", CASES)
def test_host_golden_compiles(case):
    code = _generate(case).code
    assert '#include "pto_l3_api.h"' in code
    ok, log = compile_cpp(code, case)
    assert ok, log


def test_target_ids_number_chip_orchestrations_in_order():
    from pypto import host
    program = load_single_program(os.path.join(GOLDEN_DIR, "host_control_flow", "host_program.py"))
    assert host.target_ids(program) == {"chip_scale": 0, "chip_add": 1}
    r = _generate("host_control_flow")
    assert r.target_ids == {"chip_scale": 0, "chip_add": 1}
    assert [(s.name, s.kind, s.direction, s.slot) for s in r.signature] == [
        ("x", "tensor", "In", 0), ("acc", "tensor", "InOut", 1), ("tmp", "tensor", "Out", 2),
        ("alpha", "scalar", "In", 0), ("steps", "scalar", "In", 1), ("scale_first", "scalar", "In", 2)]
