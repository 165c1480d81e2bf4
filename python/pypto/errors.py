"""The two kinds of pypto error (``DependencyError`` is a kind of ``PyptoError``).

``PyptoError`` — the user's program is wrong. Raised by the DSL frontend (Python) and by the
C++ core (``pypto::ir::UserError``, translated by the extension module). Its ``str()`` is the
rendered diagnostic, identical to C++ ``UserError::render`` (src/ir/error.cpp)::

    error: unknown kernel 'kernel_ad' --> prog.py:12:13
       |
    12 |         c = self.kernel_ad(a, b)
       |             ^^^^^^^^^^^^^^
    help: did you mean 'kernel_add'?

``InternalCompilerError`` — the compiler is wrong (a broken invariant, C++ ``InternalError``).

Example::

    from pypto.errors import PyptoError
    raise PyptoError("unknown dtype 'FP33'", file="prog.py", line=3, col=30, end_col=34,
                     source_line="    x: pl.Tensor[[16], pl.FP33]", help="use one of pl.FP16, pl.FP32, ...")
"""

from __future__ import annotations

import functools
import os
import sys
from typing import Optional

__all__ = ["PyptoError", "DependencyError", "InternalCompilerError", "render_diagnostic", "located_at",
           "user_errors_at_the_call", "user_stacklevel"]


def _caret_indent(source_line: str, col: int) -> str:
    """What goes before the caret: a space per character before ``col``, but a tab where the
    line has one, so the caret sits under the column whatever the terminal's tab width."""
    return "".join("\t" if ch == "\t" else " " for ch in source_line[:col - 1]).ljust(col - 1)


def render_diagnostic(message: str, file: Optional[str] = None, line: int = 0, col: int = 0,
                      end_line: Optional[int] = None, end_col: int = 0, source_line: str = "",
                      help: str = "") -> str:
    """Render a diagnostic exactly as C++ ``pypto::ir::UserError::render`` does.

    ``line``/``col`` are 1-based; ``end_col`` is 1-based exclusive; ``end_line`` defaults to
    ``line``. A ``line`` of 0 means "location unknown": only the message and help are shown.

    >>> print(render_diagnostic("bad", "f.py", 2, 5, end_col=8, source_line="    abc = 1"))
    error: bad --> f.py:2:5
      |
    2 |     abc = 1
      |     ^^^
    """
    if end_line is None:
        end_line = line
    out = "error: " + message
    if line > 0:
        out += " --> %s:%d:%d" % (file if file else "<unknown>", line, col)
        line_no = str(line)
        pad = " " * len(line_no)
        if source_line:
            out += "\n" + pad + " |"
            out += "\n" + line_no + " | " + source_line
            c = max(col, 1)
            width = 1
            if end_line == line and end_col > c:
                width = end_col - c
            elif end_line > line:
                width = max(1, len(source_line) - c + 1)
            out += "\n" + pad + " | " + _caret_indent(source_line, c) + "^" * width
    if help:
        out += "\nhelp: " + help
    return out


class PyptoError(Exception):
    """A mistake in the user's program, with its source location.

    Attributes: ``message``, ``file``, ``line``, ``col``, ``end_line``, ``end_col``,
    ``source_line``, ``help``. ``str(err)`` / ``err.render()`` give the full diagnostic.
    """

    def __init__(self, message: str, file: Optional[str] = None, line: int = 0, col: int = 0,
                 end_col: int = 0, source_line: str = "", help: str = "",
                 end_line: Optional[int] = None):
        self.message = message
        self.file = file
        self.line = int(line or 0)
        self.col = int(col or 0)
        self.end_line = self.line if end_line is None else int(end_line)
        self.end_col = int(end_col or 0)
        self.source_line = source_line or ""
        self.help = help or ""
        super().__init__(self.render())

    def render(self) -> str:
        """The diagnostic text: ``error: <message> --> file:line:col``, source line, caret, help."""
        return render_diagnostic(self.message, self.file, self.line, self.col, self.end_line,
                                 self.end_col, self.source_line, self.help)

    def __str__(self) -> str:
        return self.render()

    @classmethod
    def from_ast(cls, message: str, node, file: Optional[str] = None, source_lines=None,
                 help: str = "", line_offset: int = 0) -> "PyptoError":
        """Build an error located at a Python ``ast`` node.

        ``source_lines`` is the list of lines of the parsed text (without newlines); the
        node's ``lineno`` (+ ``line_offset``, for source extracted from a larger file) picks
        the line shown. Python's 0-based ``col_offset`` becomes the 1-based ``col``.

        >>> import ast
        >>> n = ast.parse("x = foo(1)").body[0].value
        >>> str(PyptoError.from_ast("unknown name 'foo'", n, "p.py", ["x = foo(1)"]))
        "error: unknown name 'foo' --> p.py:1:5\\n  |\\n1 | x = foo(1)\\n  |     ^^^^^^"
        """
        lineno = getattr(node, "lineno", 0) or 0
        col = (getattr(node, "col_offset", 0) or 0) + 1
        end_lineno = getattr(node, "end_lineno", None) or lineno
        end_col = (getattr(node, "end_col_offset", None) or 0) + 1
        text = ""
        if source_lines is not None and 1 <= lineno <= len(source_lines):
            text = source_lines[lineno - 1].rstrip("\n")
        if lineno == 0:
            return cls(message, file=file, help=help)
        return cls(message, file=file, line=lineno + line_offset, col=col, end_col=end_col,
                   source_line=text, help=help, end_line=end_lineno + line_offset)


class DependencyError(PyptoError, ValueError):
    """A user edge that cannot be resolved (``deps=`` names a TaskId whose scope has closed).

    Also a ``ValueError``, as the spec raises ``pypto::ValueError`` for it; the message is
    the located diagnostic of every PyptoError::

        try:
            codegen.generate_orchestration(prog, "main")
        except ValueError as e:   # or PyptoError, or DependencyError
            print(e)
    """


class InternalCompilerError(Exception):
    """A bug in the compiler (a broken internal invariant); please report it."""


def user_errors_at_the_call(entry_point):
    """Decorate a public entry point (``@pl.program``, ``pl.parse_program``, ``pypto.compile``): a
    located PyptoError leaves it without pypto's internal frames and without the exception it
    was raised while handling, so ``python prog.py`` shows the user's own call and the
    diagnostic, not 20 frames of the parser. A PyptoError caused by another exception (an
    internal parser error, a failing module-level statement) and every other exception (an
    InternalCompilerError is a bug) keep their whole traceback."""
    @functools.wraps(entry_point)
    def entry(*args, **kwargs):
        try:
            return entry_point(*args, **kwargs)
        except PyptoError as error:
            if error.line <= 0 or error.__cause__ is not None:
                raise
            raise error.with_traceback(None) from None
    return entry


def user_stacklevel() -> int:
    """``warnings.warn``'s ``stacklevel`` for the first frame outside the pypto package, counted
    from the caller of this function: a warning about a call points at the user's line however
    many pypto frames (wrappers such as ``user_errors_at_the_call`` included) lie between.

        warnings.warn(RaceWarning(message), stacklevel=user_stacklevel())
    """
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def located_at(obj) -> dict:
    """PyptoError keyword arguments locating an IR node (its ``span``) or a Python class or
    function (its source lines), for errors about a whole program; {} when unknown.

        raise PyptoError("program 'P' has no Orchestration function", **located_at(program))
    """
    span = getattr(obj, "span", None)
    if span is not None and getattr(span, "line", 0):
        return dict(file=span.file, line=span.line, col=span.col, end_line=span.line,
                    end_col=span.end_col if span.end_line == span.line else len(span.source_line) + 1,
                    source_line=span.source_line)
    try:
        import inspect
        lines, start = inspect.getsourcelines(obj)
        text = lines[0].rstrip("\n")
        col = len(text) - len(text.lstrip()) + 1
        return dict(file=inspect.getsourcefile(obj), line=start, col=col, end_line=start, end_col=len(text) + 1,
                    source_line=text)
    except (OSError, TypeError):
        return {}


def not_picklable(what: str, rebuild: str) -> TypeError:
    """The TypeError a built program raises when pickled (multiprocessing with the spawn or
    forkserver start method pickles what it passes to a worker) or copied: it holds a loaded library and
    running worker threads, which no other process can use. ``rebuild`` says what to call in the
    worker instead (the build cache makes it a lookup, not a compile).

        raise not_picklable("CompiledProgram", "pypto.compile(Program)")
    """
    return TypeError("a %s cannot be pickled or copied (it holds a loaded library and the runtime's worker threads): "
                     "call %s in each process instead; the build cache makes that a lookup, not a compile"
                     % (what, rebuild))
