"""Python's int(), float(), bool() and abs() on DSL scalars.

    int(x)    -> pl.cast(x, pl.INDEX)   (the dtype of integer literals; a float truncates toward zero)
    float(x)  -> pl.cast(x, pl.FP32)    (the dtype of float literals)
    bool(x)   -> pl.cast(x, pl.BOOL)    (the truth of a number: x != 0)
    abs(x)    -> max(x, -x) on a signed integer (wrapped: abs of the dtype's MIN is MIN, as the
                 dtype holds Python's 2**63), x itself on an unsigned one, max(x, -x) + 0.0 on a
                 float (the + 0.0 turns -0.0 into 0.0; NaN stays NaN)

Of compile-time values (`int(N / 2)`, `abs(-3)`) each is the constant Python computes, so it
may be a shape or a size. The conversions follow pl.cast where Python would raise: a float out of
an integer's range saturates, NaN gives 0.
"""

from __future__ import annotations

import ast
import builtins

from pypto._core import ir
from pypto.frontend import irtypes
from pypto.frontend.exprs import const_from_py, eval_expr, scalar_operand
from pypto.frontend.pyeval import try_eval_py

_MISSING = object()
_CONVERSIONS = {builtins.int: ir.DataType.INDEX, builtins.float: ir.DataType.FP32, builtins.bool: ir.DataType.BOOL}
SCALAR_BUILTINS = (builtins.int, builtins.float, builtins.bool, builtins.abs)


def scalar_builtin_call(ctx, node: ast.Call, fn):
    """`int(x)`, `float(x)`, `bool(x)`, `abs(x)` (fn is the builtin) -> an IR scalar expression."""
    name = fn.__name__
    if len(node.args) != 1 or node.keywords:
        raise ctx.error(node, f"{name}() takes one scalar argument in a DSL function",
                        help=f"e.g. {name}(n)" + (": int(x, base) and the like are Python-only" if fn is int else ""))
    v = try_eval_py(ctx, node, _MISSING)
    if v is not _MISSING and isinstance(v, (bool, int, float)):
        return const_from_py(ctx, v, node)
    x = eval_expr(ctx, node.args[0])
    if not isinstance(x.type, ir.ScalarType) or x.type.dtype == ir.DataType.TASK_ID:
        hint = "use pl.abs(t) for a tile" if fn is builtins.abs else f"use pl.cast(t, pl.{_CONVERSIONS[fn].name}) for a tile"
        raise ctx.error(node.args[0], f"{name}() needs a number or a bool, got {irtypes.describe(x.type)}", help=hint)
    x, sp = scalar_operand(ctx, x), ctx.span(node)
    if fn is not builtins.abs:
        return ir.Cast.make(x, _CONVERSIONS[fn], sp)
    return _abs(x, sp)


def _abs(x, sp):
    d = x.type.dtype
    if d == ir.DataType.BOOL:
        return ir.Cast.make(x, ir.DataType.INDEX, sp)             # Python: abs(True) is 1
    if d.name.startswith("UINT"):
        return x
    m = ir.BinaryExpr.make(ir.BinaryOp.Max, x, ir.UnaryExpr.make(ir.UnaryOp.Neg, x, sp), sp)
    if d.name.startswith("INT") or d == ir.DataType.INDEX:
        return m
    plus_zero = ir.BinaryExpr.make(ir.BinaryOp.Add, m, ir.ConstFloat.make(0.0, ir.DataType.FP32, sp), sp)
    return plus_zero if plus_zero.type.dtype == d else ir.Cast.make(plus_zero, d, sp)
