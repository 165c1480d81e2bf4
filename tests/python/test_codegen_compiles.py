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


def test_entry_points_exported_under_hidden_visibility(tmp_path):
    """The real PTO2 runtime loads the entry from a shared object built with hidden visibility:
    the generated aicpu_orchestration_config/entry must still be exported (and the if/else
    Tensor result must compile without a default-constructed Tensor)."""
    import shutil
    import subprocess

    from codegen_test_util import GOLDEN_DIR, RUNTIME_INCLUDE, load_single_program

    assert shutil.which("nm"), "nm (binutils, installed with g++) is needed to read the exported symbols"
    prog = load_single_program(os.path.join(GOLDEN_DIR, "if_else", "program.py"))
    (fn,) = codegen.orchestration_functions(prog)
    code = codegen.generate_orchestration(prog, fn).code
    src, lib = tmp_path / "orch.cpp", tmp_path / "liborch.so"
    src.write_text(code)
    cp = subprocess.run(["g++", "-std=c++17", "-Wall", "-Werror", "-fPIC", "-shared", "-fvisibility=hidden",
                         "-I", RUNTIME_INCLUDE, str(src), "-o", str(lib)], capture_output=True, text=True)
    assert cp.returncode == 0, cp.stdout + cp.stderr + code
    syms = subprocess.run(["nm", "-D", "--defined-only", str(lib)], capture_output=True, text=True).stdout
    exported = {line.split()[-1] for line in syms.splitlines() if line.strip()}
    assert {"aicpu_orchestration_config", "aicpu_orchestration_entry"} <= exported, syms
