"""Source spans of the DSL parser: columns count characters (ast reports UTF-8 byte offsets),
and the C++ fast path `ir.AstSpans` (nodes on one ASCII line) agrees with the Python general
path `Source._span` wherever it answers."""

import ast
import textwrap

import pytest

import pypto.language as pl
from pypto._core import ir
from pypto.errors import PyptoError
from pypto.frontend.diagnostics import Source

T = "pl.Tensor[[16, 16], pl.FP32]"

PROGRAM = textwrap.dedent(f"""\
    import pypto.language as pl


    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel_add(self, a: {T}, b: {T}, c: pl.Out[{T}]) -> {T}:
            c = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]),
                                pl.load(b, [0, 0], [16, 16])), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: {T}, b: {T}, d: pl.Out[{T}]) -> {T}:
            größe = pl.create_tensor([16, 16], dtype=pl.FP32)
            größe = self.kernel_add(a, b, größe)
            d = self.kernel_add(größe, b, d)
            return d
    """)


def _key(span):
    return (span.file, span.line, span.col, span.end_line, span.end_col, span.source_line)


def test_error_column_counts_characters_on_a_non_ascii_line():
    src = PROGRAM.replace("d = self.kernel_add(größe, b, d)", "d = self.kernel_add(größe, bb, d)")
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(src, "t.py")
    e = ei.value
    text = "        d = self.kernel_add(größe, bb, d)"
    col = text.index("bb") + 1                              # 36 in characters, 38 in UTF-8 bytes
    assert "unknown name 'bb'" in e.message
    assert (e.line, e.col, e.end_col) == (src.splitlines().index(text) + 1, col, col + 2)
    assert e.source_line == text


def test_ir_spans_on_a_non_ascii_line_count_characters():
    prog = pl.parse_program(PROGRAM, "t.py")
    stmts = ir.flatten_stmts(prog.get("main").body)
    assign = stmts[1]                                       # größe = self.kernel_add(a, b, größe)
    assert assign.var.name == "größe"
    assert (assign.span.col, assign.span.end_col) == (9, 45)
    assert (assign.var.span.col, assign.var.span.end_col) == (9, 14)
    assert (assign.value.span.col, assign.value.span.end_col) == (17, 45)
    assert assign.span.source_line == "        größe = self.kernel_add(a, b, größe)"


def _nodes_with_odd_positions():
    """Synthetic nodes: missing, partial, negative, out-of-range and multi-line positions."""
    out = [ast.Name("x", ast.Load())]
    for line in (0, 1, 2, 3, 4, 9):
        for col, end_col in ((0, 1), (2, 50), (-1, 3), (1, -2), (3, None)):
            for end_line in (line, line + 1, None):
                n = ast.Name("x", ast.Load())
                n.lineno, n.col_offset, n.end_lineno, n.end_col_offset = line, col, end_line, end_col
                out.append(n)
    return out


@pytest.mark.parametrize("line_offset", [0, 2, -1])
def test_fast_path_agrees_with_the_general_path(line_offset):
    lines = PROGRAM.splitlines(keepends=True) + ["x = 1\r\n", "y = 2\n\n"]
    src = Source("t.py", lines, line_offset)
    fast = ir.AstSpans("t.py", lines, line_offset)
    nodes = list(ast.walk(ast.parse(PROGRAM))) + list(ast.walk(ast.parse("x = 1\ny = 2\n"))) + \
        _nodes_with_odd_positions()
    answered = 0
    for node in nodes:
        s = fast.of(node)
        if s is not None:
            answered += 1
            assert _key(s) == _key(src._span(node)), ast.dump(node, include_attributes=True)
        assert _key(src.span(node)) == _key(src._span(node))
    assert answered > 100


def test_fast_path_declines_non_ascii_and_multi_line_nodes():
    lines = PROGRAM.splitlines(keepends=True)
    fast = ir.AstSpans("t.py", lines, 0)
    mod = ast.parse(PROGRAM)
    for node in ast.walk(mod):
        if not hasattr(node, "lineno"):
            continue
        one_ascii_line = node.lineno == node.end_lineno and lines[node.lineno - 1].isascii()
        assert (fast.of(node) is not None) == one_ascii_line, ast.dump(node)
