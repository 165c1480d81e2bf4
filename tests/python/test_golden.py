"""Golden tests: tests/golden/<case>/program.py (DSL in) -> expected.cpp (C++ out).

Each case's program defines one @pl.program with one Orchestration function. The generated
file must equal expected.cpp, ignoring blank and comment-only lines, and must compile with
`g++ -std=c++17 -Wall -Werror -c` against runtime/include/pto_orchestration_api.h.

Regenerate the expected files after an intended change, then review the diff:

    PYPTO_UPDATE_GOLDEN=1 python -m pytest -q tests/python/test_golden.py
"""

from __future__ import annotations

import os

import pytest

from codegen_test_util import GOLDEN_DIR, compile_cpp, load_single_program, significant_lines

CASES = sorted(d for d in os.listdir(GOLDEN_DIR) if os.path.isfile(os.path.join(GOLDEN_DIR, d, "program.py")))
UPDATE = os.environ.get("PYPTO_UPDATE_GOLDEN") == "1"


def _generate(case: str):
    from pypto import codegen
    program = load_single_program(os.path.join(GOLDEN_DIR, case, "program.py"))
    funcs = codegen.orchestration_functions(program)
    assert len(funcs) == 1, "golden case %s must have exactly one Orchestration function" % case
    return codegen.generate_orchestration(program, funcs[0])


def test_cases_exist():
    expected = {"orch_basic", "directions", "scalars", "aliasing", "tuples", "mixed_kernels", "tensor_create",
                "tensor_read", "tensor_slice", "tensor_transpose", "tensor_dim", "tensor_assemble", "dynamic_dims",
                "for_loops", "if_else", "nested_loops"}
    assert expected <= set(CASES)


@pytest.mark.parametrize("case", CASES)
def test_golden(case):
    result = _generate(case)
    path = os.path.join(GOLDEN_DIR, case, "expected.cpp")
    if UPDATE:
        with open(path, "w") as f:
            f.write(result.code)
    assert os.path.isfile(path), "missing %s (run with PYPTO_UPDATE_GOLDEN=1)" % path
    with open(path) as f:
        expected = f.read()
    assert significant_lines(result.code) == significant_lines(expected), (
        "generated code for %s differs from %s:\n%s" % (case, path, result.code))


@pytest.mark.parametrize("case", CASES)
def test_golden_compiles(case):
    """-Wall -Werror, and built for a hidden-visibility shared object the entry points stay exported
    (issue 13; test_codegen_compiles.py links one such .so and reads it with nm)."""
    ok, log = compile_cpp(_generate(case).code, case,
                          exported=("aicpu_orchestration_config", "aicpu_orchestration_entry"))
    assert ok, log
