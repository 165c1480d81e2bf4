"""anchor_features.md §13 — pl.yield_ placement: last *effective* statement of a loop / branch
(pass, docstrings and ... may follow), a function-level `x = pl.yield_(v)` read as `x = v` with
a PyptoWarning, and an init_values loop without a yield (synthesized from the header names)."""
import warnings

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import ir
from pypto.frontend.diagnostics import PyptoWarning

from test_diagnostics import body_check, program


def run(src, n=3):
    compiled = pypto.compile(pl.parse_program(src, "t.py"))
    a = np.random.default_rng(0).standard_normal((16, 16)).astype(np.float32)
    b = np.random.default_rng(1).standard_normal((16, 16)).astype(np.float32)
    d = np.zeros_like(a)
    compiled(a, b, d, np.zeros((16, 16), np.int32), n)
    return a, b, d


def test_inert_statements_after_the_yield_are_ignored():
    body = ("for i, (x,) in pl.range(0, n, 1, init_values=(d,)):\n"
            "    x2 = self.kernel_add(a, x, x)\n"
            "    y = pl.yield_(x2)\n"
            "    pass\n"
            "    '''the sum so far'''\n"
            "    ...\n"
            "if n > 1:\n"
            "    r = pl.yield_(y)\n"
            "    pass\n"
            "else:\n"
            "    r = pl.yield_(d)\n"
            "    ...\n"
            "return r")
    plain = body.replace("    pass\n", "").replace("    '''the sum so far'''\n", "").replace("    ...\n", "")
    p1, p2 = pl.parse_program(program(body), "t.py"), pl.parse_program(program(plain), "t.py")
    assert ir.structural_equal(p1, p2)
    a, b, d = run(program(body), n=3)
    np.testing.assert_allclose(d, 3 * a, rtol=1e-5, atol=1e-5)


def test_statement_after_the_yield_is_an_error():
    body_check("for i, (x,) in pl.range(0, 4, 1, init_values=(d,)):\n"
               "    y = pl.yield_(x)  #!\n    pass\n    x2 = self.kernel_add(a, b, x)\nreturn d",
               "pl.yield_(...) must be the last statement of a loop or if/else body: the statements after it would "
               "not be carried", "y = pl.yield_", help="move the pl.yield_ down")


def test_statement_after_the_yield_in_a_branch_is_an_error():
    body_check("if n > 0:\n    r = pl.yield_(a)  #!\n    t = self.kernel_add(a, b, d)\nelse:\n    r = pl.yield_(b)\n"
               "return d", "the statements after it would not be carried", "r = pl.yield_")


def test_function_level_yield_is_a_plain_assignment_with_a_warning():
    body = ("s = pl.yield_(a)  #!\n"
            "u, v = pl.yield_(b, s)\n"
            "d = self.kernel_add(s, v, d)\n"
            "d = self.kernel_add(u, d, d)\n"
            "return d")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        p = pl.parse_program(program(body), "t.py")
    msgs = [str(x.message) for x in w if issubclass(x.category, PyptoWarning)]
    assert len(msgs) == 2 and "pl.yield_ outside a loop or branch is read as a plain assignment 's = ...'" in msgs[0]
    assert "'u, v = ...'" in msgs[1] and "t.py:" in msgs[0]
    assert "pl.yield_" not in ir.python_print(p)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PyptoWarning)
        a, b, d = run(program(body))
    np.testing.assert_allclose(d, 2 * a + b, rtol=1e-5, atol=1e-5)


def test_function_level_bare_yield_and_scoped_yield_stay_errors():
    body_check("pl.yield_(a)  #!\nreturn d", "pl.yield_(...) must be the last statement of a loop or if/else body",
               "pl.yield_")
    body_check("with pl.scope():\n    s = pl.yield_(a)  #!\n    d = self.kernel_add(s, b, d)\nreturn d",
               "pl.yield_(...) must be the last statement of a loop or if/else body", "s = pl.yield_")


def test_init_values_loop_without_yield_synthesizes_it():
    body = ("for i, (x,) in pl.range(0, n, 1, init_values=(d,)):\n"
            "    x = self.kernel_add(a, x, x)\n"
            "return d")
    p = pl.parse_program(program(body), "t.py")
    text = ir.python_print(p)
    assert "x_1 = self.kernel_add(a, x, x)" in text.replace(": pl.Tensor[[16, 16], pl.FP32]", "")
    assert "pl.yield_(x_1)" in text
    a, b, d = run(program(body), n=3)
    np.testing.assert_allclose(d, 3 * a, rtol=1e-5, atol=1e-5)   # d is written in place by each call


def test_init_values_loop_without_yield_binds_nothing_after():
    body_check("for i, (x,) in pl.range(0, n, 1, init_values=(d,)):\n"
               "    x = self.kernel_add(a, x, x)\n"
               "d = self.kernel_add(x, b, d)  #!\n"
               "return d", "unknown name 'x'", "x, b, d)")
