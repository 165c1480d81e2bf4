"""The pypto IR from Python: node classes, enums, the printer and structural equality.

Everything here is the C++ IR (``include/pypto/ir``) bound in ``pypto._core.ir``; this module
re-exports it and adds documented entry points::

    import pypto.language as pl
    from pypto import ir

    prog = pl.parse_program(text)
    print(ir.python_print(prog))          # DSL text that parses back to an equal program
    assert ir.structural_equal(prog, pl.parse_program(ir.python_print(prog)))

Nodes compare by identity (``==`` is "the same C++ node"); types compare structurally.
"""

from __future__ import annotations

from typing import Tuple

from pypto._core import ir as _ir
from pypto._core.ir import *  # noqa: F401,F403  (node classes, enums, Span, make factories)

_NODE_NAMES = [n for n in dir(_ir) if not n.startswith("_")]
__all__ = sorted(set(_NODE_NAMES) | {"python_print", "structural_equal", "structural_equal_explain",
                                     "structural_hash"})


def python_print(node) -> str:
    """DSL text of a Program, Function, Stmt, Expr or Type.

    A Program prints as a complete module (``import pypto.language as pl``, dynamic dims,
    ``@pl.program class ...``) that ``pl.parse_program`` parses back to an equal program.

    >>> from pypto import ir
    >>> ir.python_print(ir.ScalarType.make(ir.DataType.INDEX))
    'pl.Scalar[pl.INDEX]'
    """
    return _ir.python_print(node)


def structural_equal(a, b) -> bool:
    """True when ``a`` and ``b`` have the same structure (vars matched by definition
    position, names and spans ignored). Nodes of different categories are never equal."""
    return _ir.structural_equal(a, b)


def structural_equal_explain(a, b) -> Tuple[bool, str]:
    """``(equal, why)`` for two Programs: ``why`` says where the first difference is
    (empty when equal)."""
    return _ir.structural_equal_explain(a, b)


def structural_hash(node) -> int:
    """A hash consistent with :func:`structural_equal`."""
    return _ir.structural_hash(node)


from pypto.ir import passes  # noqa: E402,F401  (pypto.ir.passes.<PassName>()(program))
