"""Every pass of pypto.ir.passes has at least three DSL Before / Expected tests (issue 11: "Every
pass has DSL Before/Expected tests"): a test function counts for pass X when it calls
``assert_pass(passes.X(), Before, Expected)`` (pass_test_util.py), or runs ``passes.X()(Before)``
and compares the result with ``assert_equal(after, Expected)``. A new pass without them fails
here, naming it."""

from __future__ import annotations

import ast
import collections
import glob
import os

from pypto.ir import passes

MIN_TESTS = 3


def _callee(call: ast.Call) -> str:
    return call.func.id if isinstance(call.func, ast.Name) else ""


def _before_expected_tests() -> dict:
    """{pass name: set of "file::test" that compare its result with an Expected program}."""
    found = collections.defaultdict(set)
    for path in sorted(glob.glob(os.path.join(os.path.dirname(__file__), "test_*.py"))):
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        for fn in ast.walk(tree):
            if not (isinstance(fn, ast.FunctionDef) and fn.name.startswith("test_")):
                continue
            calls = [c for c in ast.walk(fn) if isinstance(c, ast.Call)]
            compares = any(_callee(c) == "assert_equal" for c in calls)
            for call in calls:
                # assert_pass(passes.X(), Before, Expected), or passes.X()(Before) in a test that
                # compares with assert_equal(after, Expected).
                made = call.args[0] if _callee(call) == "assert_pass" and call.args else \
                    call.func if compares and isinstance(call.func, ast.Call) else None
                if (isinstance(made, ast.Call) and isinstance(made.func, ast.Attribute)
                        and isinstance(made.func.value, ast.Name) and made.func.value.id == "passes"):
                    found[made.func.attr].add(os.path.basename(path) + "::" + fn.name)
    return found


def test_every_pass_has_three_before_expected_tests():
    found = _before_expected_tests()
    names = [n for n in passes.__all__ if n[:1].isupper() and n not in ("Pass", "IRProperty")]
    assert "NormalizeReturnOrder" in names and len(names) >= 28
    short = {n: len(found.get(n, ())) for n in names if len(found.get(n, ())) < MIN_TESTS}
    assert not short, "passes with fewer than %d Before/Expected tests: %s" % (MIN_TESTS, short)

