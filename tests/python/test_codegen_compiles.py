"""Every orchestration file generated from the test programs compiles with
`g++ -std=c++17 -Wall -Werror -c` against runtime/include/pto_orchestration_api.h: the spec
programs of tests/python/spec_programs (the golden cases are compiled by test_golden.py)."""

from __future__ import annotations

import glob
import os

import pytest

from pypto import cli, codegen

from codegen_test_util import REPO, compile_cpp

SPEC_DIR = os.path.join(REPO, "tests", "python", "spec_programs")
CASES = []
for path in sorted(glob.glob(os.path.join(SPEC_DIR, "*.py"))):
    CASES.append(os.path.basename(path)[:-3])


def _functions(name):
    programs = cli.load_programs(os.path.join(SPEC_DIR, name + ".py"))
    for var, prog in programs.items():
        for fn in codegen.orchestration_functions(prog):
            yield var, prog, fn


@pytest.mark.parametrize("name", CASES)
def test_spec_program_compiles(name):
    found = False
    for var, prog, fn in _functions(name):
        found = True
        result = codegen.generate_orchestration(prog, fn)
        ok, log = compile_cpp(result.code, "%s_%s" % (name, fn))
        assert ok, "%s.%s:\n%s\n%s" % (var, fn, log, result.code)
    assert found, "spec program %s has no Orchestration function to generate" % name
