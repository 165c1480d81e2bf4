"""Shared check of the DSL Before / Expected pass tests (tests/python/test_pass_*.py)."""

from pypto import ir


def assert_pass(pass_, before, expected):
    """Run ``pass_`` on the ``before`` Program and require a result structurally equal to
    ``expected`` (Var names and spans are ignored; structure, types, directions, attrs and
    stamped results are compared). Returns the result for further checks."""
    after = pass_(before, verify_well_formed=True)
    assert_equal(after, expected, pass_.name)
    return after


def assert_equal(after, expected, what="pass"):
    """``after`` is structurally equal to ``expected`` (program names aside: the classes are
    named Before / Expected, and a pass does not rename the program)."""
    expected = ir.Program.make(after.name, list(expected.functions), list(expected.dynamic_dims), expected.span)
    ok, why = ir.structural_equal_explain(after, expected)
    assert ok, f"{what}: result differs from Expected: {why}\n--- result ---\n{ir.python_print(after)}"
