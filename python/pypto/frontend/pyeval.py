"""Evaluate the compile-time Python part of an expression: names of the defining scope,
attribute chains (``pl.FunctionType.InCore``, ``pl.FP32``) and literals.

    eval_py(ctx, node)   # -> Python object, or raises PyEvalFailure
"""

from __future__ import annotations

import ast

from pypto.frontend.context import _MISSING


class PyEvalFailure(Exception):
    """The node is not a compile-time Python value. ``reason`` is 'local' (an IR value),
    'unknown' (no such name), 'attr' (no such attribute), or 'form' (not a name/attr/literal)."""

    def __init__(self, node, reason, base=None, attr=""):
        super().__init__(reason)
        self.node, self.reason, self.base, self.attr = node, reason, base, attr


def eval_py(ctx, node: ast.AST):
    """The Python value of a Name / Attribute chain / Constant in the parser's Python scope."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = eval_py(ctx, node.operand)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return -v
        raise PyEvalFailure(node, "form")
    if isinstance(node, ast.Name):
        if ctx.lookup(node.id) is not None:
            raise PyEvalFailure(node, "local")
        v = ctx.resolve_py(node.id)
        if v is _MISSING:
            raise PyEvalFailure(node, "unknown")
        return v
    if isinstance(node, ast.Attribute):
        base = eval_py(ctx, node.value)
        try:
            return getattr(base, node.attr)
        except AttributeError:
            raise PyEvalFailure(node, "attr", base, node.attr) from None
    raise PyEvalFailure(node, "form")


def try_eval_py(ctx, node: ast.AST, default=_MISSING):
    """eval_py, or `default` when the node is not a compile-time value."""
    try:
        return eval_py(ctx, node)
    except PyEvalFailure:
        return default


def dotted(node: ast.AST) -> str:
    """'pl.tile.add' for an attribute chain (for messages); '' otherwise."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr}" if base else ""
    return ""
