"""Generated C++ must not depend on pointer values or hash iteration order.

Every golden program (tests/golden and tests/golden_auto_deps) is compiled with the dependency
switch off and on, then again in the same process after other programs were compiled and
allocations of many sizes moved the heap (node addresses of the second run differ from the
first), and once more in a fresh process: all runs must give byte-identical C++. Before the fix,
AutoDeriveTaskDependencies visited a view's roots (a std::set of Var pointers) in address order,
so anchor_escaping_alloc's `add_merged2` / `add_merged3` dependency lines could swap.
"""
import json
import os
import random
import subprocess
import sys

import pytest

from codegen_test_util import GOLDEN_DIR, REPO, load_single_program

AUTO_DIR = os.path.join(REPO, "tests", "golden_auto_deps")


def _cases():
    out = []
    for root in (GOLDEN_DIR, AUTO_DIR):
        for d in sorted(os.listdir(root)):
            if os.path.isfile(os.path.join(root, d, "program.py")):
                out.append(os.path.join(root, d, "program.py"))
    return out


def _generate(path, switch):
    """{function name: C++} of every Orchestration function of the program in `path`."""
    from pypto import codegen
    program = load_single_program(path)
    prepared = codegen.run_pipeline(program, analyze_auto_scopes_for_deps=switch)
    return {f: codegen.generate_orchestration(prepared, f, run_passes=False).code
            for f in codegen.orchestration_functions(prepared)}


def _generate_all(paths):
    out = {}
    for p in paths:
        for switch in (False, True):
            try:
                out["%s|%s" % (p, switch)] = _generate(p, switch)
            except Exception as e:   # a case the switch refuses: its message must be stable too
                out["%s|%s" % (p, switch)] = "error: %s" % e
    return out


def _perturb(seed):
    """Allocations of many sizes kept alive, so later IR nodes land at other addresses."""
    rng = random.Random(seed)
    return [bytearray(rng.randrange(16, 4096)) for _ in range(2000)]


def test_same_output_within_one_process_and_across_processes():
    paths = _cases()
    first = _generate_all(paths)
    keep = _perturb(1)
    rotated = paths[len(paths) // 2:] + paths[:len(paths) // 2]   # other programs in between, other order
    _generate_all(rotated)
    keep += _perturb(2)
    second = _generate_all(list(reversed(paths)))
    for key in first:
        assert first[key] == second[key], "output of %s changed within one process" % key
    script = ("import json, sys; sys.path.insert(0, %r); import test_codegen_determinism as t; "
              "print(json.dumps(t._generate_all(%r)))" % (os.path.dirname(os.path.abspath(__file__)), paths))
    cp = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO)
    assert cp.returncode == 0, cp.stderr
    fresh = json.loads(cp.stdout.strip().splitlines()[-1])
    for key in first:
        assert first[key] == fresh[key], "output of %s differs in a fresh process" % key
    del keep


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_escaping_alloc_stable_under_heap_perturbation(seed):
    path = os.path.join(GOLDEN_DIR, "anchor_escaping_alloc", "program.py")
    want = _generate(path, True)
    keep = []
    for k in range(6):
        keep += _perturb(seed * 10 + k)
        _generate_all([os.path.join(AUTO_DIR, "if_branches", "program.py")])
        assert _generate(path, True) == want
