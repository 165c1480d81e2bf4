"""``@pl.program``, ``@pl.function`` and the text entry points ``pl.parse_program`` /
``pl.parse_function``.

``@pl.program`` parses the decorated class from its source (``inspect``), resolving names
in the class's defining scope (closure values, the caller's locals, module globals), and
returns the IR ``Program``::

    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, ...): ...
    # P is a pypto._core.ir.Program named "P"
"""

from __future__ import annotations

import sys

from pypto.language._types import FunctionType, Level, Role


class FunctionMarker:
    """What ``@pl.function(...)`` leaves in the class body: the Python function and options.
    The parser reads the options from the decorator's AST; this object keeps the function so
    its closure values can be resolved."""

    def __init__(self, fn, type=None, level=None, role=None):  # noqa: A002 - DSL spelling
        self.fn, self.type, self.level, self.role = fn, type, level, role
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.fn.__name__} is a DSL function: decorate its class with @pl.program")


def function(fn=None, *, type: FunctionType = FunctionType.Opaque, level: Level | None = None,  # noqa: A002
             role: Role | None = None, attrs: dict | None = None):
    """Mark a method of a ``@pl.program`` class: ``@pl.function(type=pl.FunctionType.InCore)``.
    Misuse (an option passed positionally, the decorator applied twice) is reported by the
    parser with its location, so this wrapper only records the function."""
    def wrap(f):
        if isinstance(f, FunctionMarker):      # @pl.function twice: the parser reports it
            f = f.fn
        return FunctionMarker(f, type, level, role)
    if fn is not None and not callable(fn) or isinstance(fn, (FunctionType, Level, Role)):
        return wrap                           # @pl.function(pl.FunctionType.X): located by the parser
    return wrap(fn) if fn is not None else wrap


def program(cls=None):
    """Parse a class of ``@pl.function`` methods into an IR Program (returned in its place).
    ``@pl.program()`` is accepted as a spelling of ``@pl.program``."""
    from pypto.frontend import parse_class
    caller = sys._getframe(1)
    if cls is None:
        captured = dict(caller.f_locals) if caller.f_code.co_name != "<module>" else {}
        del caller
        return lambda c: parse_class(c, captured)
    try:
        captured = dict(caller.f_locals) if caller.f_code.co_name != "<module>" else {}
    finally:
        del caller
    return parse_class(cls, captured)


def parse_program(text: str, filename: str = "<string>"):
    """Parse DSL text (a module holding one ``@pl.program`` class, possibly with module-level
    constants and ``M = pl.dynamic("M")`` above it) into an IR Program.

        prog = pl.parse_program(pypto.ir.python_print(prog))
    """
    from pypto.frontend import parse_program_text
    return parse_program_text(text, filename)


def parse_function(text: str, filename: str = "<string>"):
    """Parse the text of one ``@pl.function`` method (optionally indented) into an IR Function.
    It may not call other functions of a program (there is none)."""
    from pypto.frontend import parse_function_text
    return parse_function_text(text, filename)

