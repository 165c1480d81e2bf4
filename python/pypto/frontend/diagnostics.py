"""Source positions and located errors for the parser.

``Source`` maps Python ``ast`` positions of the parsed snippet back to the user's file (line
offset, original line text) and builds IR Spans and ``PyptoError``s::

    src = Source("prog.py", file_lines, line_offset=41)
    raise src.error(node, "unknown name 'x'", help="did you mean 'y'?")
"""

from __future__ import annotations

import ast
import difflib
import warnings

from pypto._core import ir
from pypto.errors import PyptoError


class PyptoWarning(UserWarning):
    """Base of the DSL's warnings: the program is valid but something in it has no effect."""


class NoDepInManualScopeWarning(PyptoWarning):
    """``pl.no_dep(x)`` inside ``pl.manual_scope()``: has no effect (the scope already opts out
    of automatic dependency tracking). The IR keeps the NoDep direction; nothing else changes."""


class Source:
    """The text being parsed: its file name, all lines of the file, and the offset to add to
    ``ast`` line numbers (the snippet may start in the middle of the file)."""

    def __init__(self, file: str, lines: list[str], line_offset: int = 0):
        self.file = file
        self.lines = lines
        self.line_offset = line_offset
        # A span is built for every IR node: nodes on one ASCII line are done in C++.
        self._one_ascii_line_span = ir.AstSpans(file, lines, line_offset).of
        self._line_info: dict[int, tuple[str, bool]] = {}   # line -> (text, is ASCII)

    def line_text(self, line: int) -> str:
        return self.lines[line - 1].rstrip("\n") if 0 < line <= len(self.lines) else ""

    def _info(self, line: int) -> tuple[str, bool]:
        info = self._line_info.get(line)
        if info is None:
            text = self.line_text(line)
            info = self._line_info[line] = (text, text.isascii())
        return info

    def _col(self, line: int, byte_col: int) -> int:
        """1-based character column of the UTF-8 byte offset `byte_col` (what ast reports)."""
        text, ascii_only = self._info(line)
        if ascii_only and byte_col >= 0:
            return min(byte_col, len(text)) + 1
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore")) + 1

    def span(self, node: ast.AST) -> ir.Span:
        s = self._one_ascii_line_span(node)
        return self._span(node) if s is None else s

    def _span(self, node: ast.AST) -> ir.Span:
        """The general case: ast columns are UTF-8 byte offsets, Span columns characters."""
        line = getattr(node, "lineno", 0)
        if not line:
            return ir.Span(self.file)
        line += self.line_offset
        end_line = (getattr(node, "end_lineno", None) or node.lineno) + self.line_offset
        col = self._col(line, node.col_offset)
        end_col = getattr(node, "end_col_offset", None)
        end_col = self._col(end_line, end_col) if end_col is not None else col + 1
        return ir.Span(self.file, line, col, end_line, end_col, self._info(line)[0])

    def error(self, node: ast.AST | None, message: str, help: str = "") -> PyptoError:  # noqa: A002
        if node is None or not getattr(node, "lineno", 0):
            return PyptoError(message, file=self.file, line=0, col=0, end_line=0, end_col=0, source_line="",
                              help=help)
        s = self.span(node)
        end_col = s.end_col if s.end_line == s.line else len(s.source_line) + 1
        return PyptoError(message, file=self.file, line=s.line, col=s.col, end_line=s.end_line, end_col=end_col,
                          source_line=s.source_line, help=help)

    def warn(self, node: ast.AST, message: str, category=PyptoWarning) -> None:
        s = self.span(node)
        warnings.warn_explicit(f"{message} --> {self.file}:{s.line}:{s.col}", category, self.file, s.line)


def did_you_mean(name: str, candidates) -> str:
    """'did you mean 'x'?' for the closest candidate, or '' when nothing is close."""
    close = difflib.get_close_matches(name, sorted(set(candidates)), n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else ""


def a_or_an(word: str) -> str:
    """'an Orchestration', 'an AIC', 'a tensor': the article for a word spliced into a message.
    Every word that reaches here (function types, IR kinds) starts with a vowel sound exactly
    when it starts with a vowel letter."""
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"
