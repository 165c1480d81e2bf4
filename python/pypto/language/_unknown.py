"""Located errors for misspelt ``pl.<name>`` attributes evaluated by Python itself.

With ``@pl.program`` Python evaluates annotations and decorator arguments when the class is
defined, before the parser runs, so ``pl.FP33`` or ``pl.FunctionType.Incore`` would be a bare
AttributeError. The ``pl`` module and its enums raise ``UnknownDSLName`` instead: a
``PyptoError`` (located at the caller's line and column, with a did-you-mean help) that is
also an ``AttributeError``, so ``hasattr`` / ``getattr(..., default)`` keep working.
"""

from __future__ import annotations

import difflib
import enum
import linecache
import sys

from pypto.errors import PyptoError


class UnknownDSLName(PyptoError, AttributeError):
    """``pl.<name>`` (or ``pl.<Enum>.<name>``) does not exist."""


def unknown(qualname: str, candidates, depth: int = 2) -> UnknownDSLName:
    """The error for an unknown ``qualname``, located at the frame `depth` levels up."""
    last = qualname.rsplit(".", 1)[-1]
    close = difflib.get_close_matches(last, sorted(candidates), n=1, cutoff=0.6)
    help_ = f"did you mean '{qualname.rsplit('.', 1)[0]}.{close[0]}'?" if close else ""
    return UnknownDSLName(f"unknown DSL name '{qualname}'", help=help_, **caller_location(depth))


def caller_location(depth: int) -> dict:
    """PyptoError location keywords of the expression being evaluated `depth` frames up from
    the function calling this one (1: its caller), its columns from the bytecode position; {}
    when the stack is shallower.

        raise PyptoError("@pl.program must decorate a class", **caller_location(1))
    """
    try:
        frame = sys._getframe(depth + 1)
    except ValueError:
        return {}
    file, line = frame.f_code.co_filename, frame.f_lineno
    col, end_col = 0, 0
    try:
        pos = list(frame.f_code.co_positions())[frame.f_lasti // 2]
        if pos[0] == line and pos[2] is not None:
            col, end_col = pos[2] + 1, (pos[3] or pos[2]) + 1
    except (AttributeError, IndexError):
        pass
    text = linecache.getline(file, line).rstrip("\n")
    return dict(file=file, line=line, col=col or 1, end_col=end_col, source_line=text)


class DSLEnumMeta(enum.EnumMeta):
    """Enum metaclass whose missing members raise UnknownDSLName (``pl.Level.CORE_GRUOP``)."""

    def __repr__(cls) -> str:
        return f"pl.{cls.__name__}"      # as spelt in the DSL (messages that quote an annotation)

    def __getattr__(cls, name):
        if name.startswith("_"):
            raise AttributeError(name)
        raise unknown(f"pl.{cls.__name__}.{name}", cls.__members__)
