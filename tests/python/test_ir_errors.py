"""pypto.errors: PyptoError renders exactly like C++ UserError::render, and C++ errors reach
Python as PyptoError / InternalCompilerError with their location fields."""

import ast

import pytest

from pypto import ir
from pypto.errors import InternalCompilerError, PyptoError, render_diagnostic

CASES = [
    # message, file, line, col, end_line, end_col, source_line, help
    ("unknown kernel 'kernel_ad'", "prog.py", 12, 13, 12, 27, "        c = self.kernel_ad(a, b)",
     "did you mean 'kernel_add'?"),
    ("single caret", "p.py", 3, 5, 3, 0, "    x = 1", ""),
    ("end before col", "p.py", 3, 5, 3, 2, "    x = 1", ""),
    ("spans two lines", "p.py", 9, 3, 10, 4, "  foo(a,", "close the call"),
    ("line 100 gutter", "big.py", 100, 1, 100, 4, "abc = 1", ""),
    ("no source text", "p.py", 4, 2, 4, 5, "", "a help"),
    ("no file", "", 2, 1, 2, 3, "ab", ""),
    ("tab indent keeps the caret under the column", "p.py", 4, 3, 4, 6, "\t\tfoo(a)", ""),
    ("non-ASCII before the column", "p.py", 2, 9, 2, 12, "s = 'é'; foo", ""),
    ("non-ASCII line spanning two lines", "p.py", 2, 3, 3, 1, "  é(ü,", ""),
    ("unknown location", "", 0, 0, 0, 0, "", "some help"),
    ("unknown location, no help", "", 0, 0, 0, 0, "", ""),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_python_rendering_matches_cpp(case):
    msg, file, line, col, end_line, end_col, src, help_ = case
    cpp = ir.render_user_error(msg, ir.Span(file, line, col, end_line, end_col, src), help_)
    py = PyptoError(msg, file=file or None, line=line, col=col, end_col=end_col, source_line=src, help=help_,
                    end_line=end_line)
    assert str(py) == cpp
    assert py.render() == cpp
    assert render_diagnostic(msg, file or None, line, col, end_line, end_col, src, help_) == cpp


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_cpp_user_error_arrives_as_pypto_error(case):
    msg, file, line, col, end_line, end_col, src, help_ = case
    span = ir.Span(file, line, col, end_line, end_col, src)
    with pytest.raises(PyptoError) as ei:
        ir.raise_user_error(msg, span, help_)
    err = ei.value
    assert str(err) == ir.render_user_error(msg, span, help_)
    assert (err.message, err.line, err.col, err.end_col, err.source_line, err.help) == (
        msg, line, col, end_col, src, help_)
    assert err.file == (file or None)


def test_caret_follows_tabs_and_characters():
    tabs = render_diagnostic("m", "p.py", 4, 3, 4, 6, "\t\tfoo(a)")
    assert tabs.splitlines()[-1] == "  | \t\t^^^"
    wide = render_diagnostic("m", "p.py", 2, 9, 2, 12, "s = 'é'; foo")
    assert wide.splitlines()[-1] == "  | " + " " * 8 + "^^^"


def test_documented_format():
    err = PyptoError("unknown dtype 'FP33'", file="prog.py", line=3, col=30, end_col=34,
                     source_line="    x: pl.Tensor[[16], pl.FP33]", help="use pl.FP32")
    assert str(err) == ("error: unknown dtype 'FP33' --> prog.py:3:30\n"
                        "  |\n"
                        "3 |     x: pl.Tensor[[16], pl.FP33]\n"
                        "  |                              ^^^^\n"
                        "help: use pl.FP32")
    assert isinstance(err, Exception)


def test_from_ast_points_at_the_node():
    text = "def f():\n    y = foo(1)\n"
    call = ast.parse(text).body[0].body[0].value
    err = PyptoError.from_ast("unknown name 'foo'", call, "p.py", text.splitlines(), help="define foo")
    assert (err.line, err.col, err.end_col) == (2, 9, 15)
    assert str(err) == ("error: unknown name 'foo' --> p.py:2:9\n"
                        "  |\n"
                        "2 |     y = foo(1)\n"
                        "  |         ^^^^^^\n"
                        "help: define foo")
    shifted = PyptoError.from_ast("m", call, "p.py", text.splitlines(), line_offset=10)
    assert shifted.line == 12


def test_internal_compiler_error_is_distinct():
    assert not issubclass(InternalCompilerError, PyptoError)
    with pytest.raises(InternalCompilerError):
        ir.ConstFloat.make(1.0, ir.DataType.INT32)
