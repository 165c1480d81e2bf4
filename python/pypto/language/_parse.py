"""``@pl.program`` and the text entry points ``pl.parse_program`` / ``pl.parse_function``.

``@pl.program`` parses the decorated class from its source (``inspect``), resolving names in
the class's defining scope, and returns the IR ``Program``; see ``pypto.frontend.program``.

    prog = pl.parse_program(pypto.ir.python_print(prog))
"""

from __future__ import annotations

import sys

from pypto.errors import PyptoError, user_errors_at_the_call
from pypto.frontend.program import parse_function_text, parse_program_text, program  # noqa: F401


@user_errors_at_the_call
def parse_program(text: str, filename: str = "<string>"):
    """Parse DSL text (a module holding one ``@pl.program`` class, possibly with module-level
    constants and ``M = pl.dynamic("M")`` above it) into an IR Program.

        prog = pl.parse_program(pypto.ir.python_print(prog))
    """
    _check_text_args("parse_program", text, filename)
    return parse_program_text(text, filename)


def _check_text_args(what: str, text, filename) -> None:
    """A PyptoError for a ``text`` that is no str (123, a class: an AttributeError "'int' object
    has no attribute 'splitlines'") or a ``filename`` that is no str."""
    if not isinstance(text, str):
        raise PyptoError("pl.%s takes the program's source text (a str), got %s" % (what, type(text).__name__),
                         help="pass the text (open(path).read(), or pypto.ir.python_print(program)); a class is "
                              "decorated with @pl.program instead" if what == "parse_program" else
                              "pass the text of the function")
    if not isinstance(filename, str):
        raise PyptoError("pl.%s: filename= names the text's file in messages (a str), got %s"
                         % (what, type(filename).__name__), help="e.g. filename=\"prog.py\"")


@user_errors_at_the_call
def parse_function(text: str, filename: str = "<string>"):
    """Parse the text of one ``@pl.function`` method (optionally indented) into an IR Function.
    It may not call other functions of a program (there is none); ``pl`` names the DSL namespace.

        fn = pl.parse_function(pypto.ir.python_print(fn))
    """
    _check_text_args("parse_function", text, filename)
    # This module is only ever imported by pypto.language, so the namespace is loaded (a lookup,
    # not an import: pypto.language imports this module).
    return parse_function_text(text, filename, sys.modules["pypto.language"])
