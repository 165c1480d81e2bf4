"""Every orchestration file generated from the test programs compiles with
`g++ -std=c++17 -Wall -Werror -c` against runtime/include/pto_orchestration_api.h: the spec
programs of tests/python/spec_programs, and the chip-level orchestrations of the HOST goldens and of
examples/ (the golden cases are compiled by test_golden.py)."""

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


def _chip_orchestrations(path):
    """(function name, generated C++) of every chip-level Orchestration function the file's programs define."""
    from pypto import host
    for prog in cli.load_programs(path).values():
        hosts = set(host.host_functions(prog))
        for fn in codegen.orchestration_functions(prog):
            if fn not in hosts:
                yield fn, codegen.generate_orchestration(prog, fn).code


CHIP_SOURCES = sorted(glob.glob(os.path.join(REPO, "tests", "golden", "host_*", "host_program.py")) +
                      [p for p in glob.glob(os.path.join(REPO, "examples", "*.py"))
                       if os.path.basename(p) != "demo.py"])     # demo.py runs online_softmax.py


@pytest.mark.parametrize("path", CHIP_SOURCES, ids=[os.path.relpath(p, REPO) for p in CHIP_SOURCES])
def test_chip_orchestrations_of_host_goldens_and_examples_compile(path):
    """The chip-level orchestrations that test_golden.py does not see (those of the HOST goldens, whose
    own test compiles only the HOST file, and of examples/) compile -Wall -Werror against the header
    that has the real PTO2 runtime's shapes (no default Tensor, rt_submit_dummy_task -> TaskOutputTensors),
    with the exported entry points (issue 13, "The real runtime header")."""
    found = 0
    for fn, code in _chip_orchestrations(path):
        found += 1
        assert code.count('__attribute__((visibility("default")))') == 2, code
        ok, log = compile_cpp(code, "%s_%s" % (os.path.basename(os.path.dirname(path)), fn))
        assert ok, "%s %s:\n%s\n%s" % (path, fn, log, code)
    assert found, "%s defines no chip-level Orchestration function" % path
