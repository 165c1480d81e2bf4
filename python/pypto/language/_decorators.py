"""``@pl.function``: the marker a method of a ``@pl.program`` class carries.

The parser (``pypto.frontend``) reads the options from the decorator's AST and recognises the
marker by identity, so this module imports nothing of the parser; ``@pl.program`` and the text
entry points live in ``pypto.language._parse``::

    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, ...): ...
"""

from __future__ import annotations

import difflib
import inspect

from pypto.errors import PyptoError
from pypto.language._types import FunctionType, Level, Role
from pypto.language._unknown import caller_location

# The keywords of @pl.function, for the did-you-mean of a misspelt one (`typ=`).
FUNCTION_OPTIONS = ("type", "level", "role", "core_type", "attrs", "param_slots", "group_waits", "group_signals",
                    "auto_scope", "task_ids", "returned_params", "group_aic", "group_aiv", "task_statements",
                    "batched_creates", "array_backings", "non_negative_vars", "call_operands", "open_calls",
                    "cut_calls", "carried_operands")


def unknown_option_help(name: str) -> str:
    """The help of an unknown @pl.function keyword: the closest option, else the list."""
    close = difflib.get_close_matches(name or "", FUNCTION_OPTIONS, n=1, cutoff=0.6)
    return f"did you mean '{close[0]}='?" if close else "options: " + ", ".join(o + "=" for o in FUNCTION_OPTIONS)


def not_a_plain_method(obj, where: dict) -> PyptoError:
    """The error for @pl.function over something that is not a def: a class, or a method already
    wrapped by another decorator (@property, @classmethod, @staticmethod), located `where`."""
    if inspect.isclass(obj):
        return PyptoError(f"@pl.function must decorate a method of a @pl.program class, got class '{obj.__name__}'",
                          help="decorate the class with @pl.program and each of its methods with "
                               "@pl.function(type=...)", **where)
    kind = type(obj).__name__
    return PyptoError(f"@pl.function must decorate a plain method (def), got a {kind}",
                      help=f"remove @{kind}: a DSL function is a plain def in a @pl.program class, "
                           "with @pl.function as its only decorator", **where)


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
             role: Role | None = None, core_type=None, attrs=None, param_slots=None, group_waits=None,
             group_signals=None, auto_scope: bool = True, task_ids=None, returned_params=None,
             group_aic=None, group_aiv=None, task_statements=None, batched_creates=None,
             array_backings=None, non_negative_vars=None, call_operands=None, open_calls=None,
             cut_calls=None, carried_operands=None, **unknown):
    """Mark a method of a ``@pl.program`` class: ``@pl.function(type=pl.FunctionType.InCore)``.
    ``core_type=``, ``attrs=``, ``param_slots=``, ``group_waits=`` / ``group_signals=``,
    ``task_ids=`` / ``returned_params=``, ``group_aic=`` / ``group_aiv=``, ``task_statements=`` and
    ``batched_creates=`` / ``array_backings=`` / ``non_negative_vars=`` / ``call_operands=`` / ``open_calls=`` / ``cut_calls=`` / ``carried_operands=`` are pass results as printed IR spells them (the parser reads them from the decorator's AST).
    ``auto_scope=False`` leaves runtime scope placement to the author's ``with pl.scope():``
    blocks (spec anchor_features §4). Misuse (an option passed positionally, the decorator
    applied twice) is reported by the parser with its location; an unknown keyword (`typ=`) or
    a decorated class, property, classmethod or staticmethod raises a located PyptoError here."""
    if unknown:
        name = next(iter(unknown))
        raise PyptoError(f"@pl.function has no option '{name}'", help=unknown_option_help(name),
                         **caller_location(1))

    def wrap(f, depth=1):                     # depth: the frame of the decorator, from wrap
        if isinstance(f, FunctionMarker):      # @pl.function twice: the parser reports it
            f = f.fn
        if not inspect.isfunction(f):
            raise not_a_plain_method(f, caller_location(depth))
        return FunctionMarker(f, type, level, role)
    if fn is not None and not callable(fn) or isinstance(fn, (FunctionType, Level, Role)):
        return wrap                           # @pl.function(pl.FunctionType.X): located by the parser
    return wrap(fn, 2) if fn is not None else wrap
