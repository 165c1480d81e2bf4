"""Expression handlers: one function per ``ast`` expression node, dispatched by ``eval_expr``.

    x + 1            BinaryExpr(Add, x, ConstInt 1)
    t[i, j]          tensor.read(t, MakeTuple(i, j))    (tensor) / TupleGetItem (tuple) /
                     array.get_element(arr, k)          (array)
    N_BRANCHES       ConstInt 4                          (module constant / closure value)
    None             system.task_invalid()               (the "no producer yet" TaskId)
"""

from __future__ import annotations

import ast

from pypto._core import ir
from pypto.frontend import irtypes, registry
from pypto.frontend.context import _MISSING
from pypto.frontend.pyeval import PyEvalFailure, constant_sequence_node, eval_py, fold_failure, try_eval_py
from pypto.frontend.shape_access import shape_subscript
from pypto.language import _types as T

_BINOPS = {ast.Add: "Add", ast.Sub: "Sub", ast.Mult: "Mul", ast.Div: "Div", ast.FloorDiv: "FloorDiv",
           ast.Mod: "Mod", ast.BitAnd: "BitAnd", ast.BitOr: "BitOr", ast.BitXor: "BitXor", ast.LShift: "Shl",
           ast.RShift: "Shr"}
CMPOPS = {ast.Eq: "Eq", ast.NotEq: "Ne", ast.Lt: "Lt", ast.LtE: "Le", ast.Gt: "Gt", ast.GtE: "Ge"}
_TILE_OP_FOR = {"Add": "pl.add", "Sub": "pl.sub", "Mul": "pl.mul", "Div": "pl.div"}


_INDEX, _FP32 = ir.DataType.INDEX, ir.DataType.FP32


def const_from_py(ctx, value, node):
    """A compile-time Python value used as an expression -> IR constant (or None -> task_invalid)."""
    span = ctx.span(node)
    if isinstance(value, bool):
        return ir.ConstBool.make(value, span)
    if isinstance(value, int):
        if not -(1 << 63) <= value < (1 << 63):
            raise ctx.error(node, f"integer {value} does not fit in 64 bits",
                            help="DSL integers are int64: use a value between -2**63 and 2**63 - 1")
        return ir.ConstInt.make(value, _INDEX, span)
    if isinstance(value, float):
        return ir.ConstFloat.make(value, _FP32, span)
    if value is None:
        return ir.Call.make_op("system.task_invalid", [], {}, span)
    if isinstance(value, T.DynamicDim):
        return ctx.prog.dynamic_var(value.name, span)
    return _MISSING


def _name(ctx, node: ast.Name):
    v = ctx.lookup(node.id)
    if v is not None:
        return v
    py = ctx.resolve_py(node.id)
    if py is _MISSING:
        raise ctx.unknown_name_error(node)
    c = const_from_py(ctx, py, node)
    if c is _MISSING:
        raise ctx.error(node, f"'{node.id}' is a Python {type(py).__name__}, not a value the DSL can use",
                        help="module constants must be int, float or bool; tensors must be function parameters")
    return c


def _constant(ctx, node: ast.Constant):
    c = const_from_py(ctx, node.value, node)
    if c is _MISSING:
        raise ctx.error(node, f"unsupported literal {node.value!r}", help="literals must be int, float, bool or None")
    return c


def _attribute(ctx, node: ast.Attribute):
    try:
        py = eval_py(ctx, node)
    except PyEvalFailure as f:
        if f.reason == "attr":
            raise ctx.error(node, f"'{ast.unparse(node.value)}' has no attribute '{f.attr}'") from None
        if f.reason == "local" and node.attr == "shape":
            raise ctx.error(node, f"'{ast.unparse(node)}' is a tuple of extents, not a value",
                            help=f"index it ({ast.unparse(node)}[0]) or unpack it (m, n = {ast.unparse(node)})") from None
        if f.reason == "local" and node.attr == "base":
            raise ctx.error(node, f"'{ast.unparse(node.value)}' has no attribute 'base'",
                            help="only a pl.reserve_buffer / pl.import_peer_buffer result has .base") from None
        raise ctx.error(node, f"unsupported expression '{ast.unparse(node)}'",
                        help="attributes are only used for pl.* names and module constants") from None
    c = const_from_py(ctx, py, node)
    if c is _MISSING:
        raise ctx.error(node, f"'{ast.unparse(node)}' is not a value", help="did you mean to call it?")
    return c


def require_scalar(ctx, e, node, what):
    """`e` as a scalar operand (of an operator, a condition, an index), or a located error."""
    if not isinstance(e.type, ir.ScalarType):
        raise ctx.error(node, f"{what} must be a scalar, got {irtypes.describe(e.type)}")
    return scalar_operand(ctx, e)


_ELEMENT_READS = {"tensor.read": "elem", "array.get_element": "slot"}


def scalar_operand(ctx, e):
    """In orchestration and HOST code, an element read used as an operand (`x[i, 0] > 0`,
    `w[k] + 1`) is bound to a name first, `x_elem = x[i, 0]`: their generators print expressions of
    names and literals (a read is a call into the runtime). Kernels read in place."""
    if ctx.is_orchestration and isinstance(e, ir.Call) and e.is_op and e.callee in _ELEMENT_READS:
        base = e.args[0]
        v = ir.Var.make((base.name if isinstance(base, ir.Var) else "value") + "_" + _ELEMENT_READS[e.callee],
                        e.type, e.span)
        ctx.emit(ir.AssignStmt.make(v, e, e.span))
        return v
    return e


def has_element_read(ctx, node: ast.AST) -> bool:
    """Whether evaluating `node` in this function binds an element read first (scalar_operand):
    then an `and` / `or` evaluates it lazily, as Python does."""
    return ctx.is_orchestration and any(
        isinstance(n, ast.Subscript) or (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                                         and n.func.attr in ("read", "get_element"))
        for n in ast.walk(node))


def _binop(ctx, node: ast.BinOp):
    opname = _BINOPS.get(type(node.op))
    if isinstance(node.op, ast.Pow):       # no IR op: only the power of compile-time numbers (2 ** K)
        v = try_eval_py(ctx, node, _MISSING)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return const_from_py(ctx, v, node)
        if all(isinstance(try_eval_py(ctx, n, None), (int, float)) for n in (node.left, node.right)):
            raise ctx.error(node, f"'{ast.unparse(node)}' does not fit in 64 bits (or is not a finite float)",
                            help="DSL integers are int64: a power must stay between -2**63 and 2**63 - 1")
        raise ctx.error(node, f"'{ast.unparse(node)}': ** is only computed between compile-time numbers "
                        "(literals and module constants, e.g. 2 ** K)",
                        help="for a run-time value multiply (x * x), or use pl.exp / pl.log on tiles")
    if opname is None:
        raise ctx.error(node, f"unsupported operator '{ast.unparse(node)}'", help="supported: + - * / // % & | ^ << >>")
    _refuse_unfoldable(ctx, node)
    operands = []
    for n in (node.left, node.right):      # left to right, each bound before the next is read
        e = eval_expr(ctx, n)
        if not isinstance(e.type, ir.ScalarType):
            hint = _TILE_OP_FOR.get(opname)
            raise ctx.error(n, f"operator '{ast.unparse(node)}' needs scalar operands, got {irtypes.describe(e.type)}",
                            help=f"use {hint}(a, b) for tiles" if hint else "operators apply to scalars only")
        operands.append(scalar_operand(ctx, e))
    return ir.BinaryExpr.make(getattr(ir.BinaryOp, opname), *operands, ctx.span(node))


def _refuse_unfoldable(ctx, node):
    """A located error when `node` applies an operator to compile-time numbers that Python would
    not give an int64 for (beyond int64, a division by zero, a negative shift)."""
    failure = fold_failure(ctx, node)
    if failure is not None:
        message, help = failure  # noqa: A001
        raise ctx.error(node, message, help=help)


def _unaryop(ctx, node: ast.UnaryOp):
    _refuse_unfoldable(ctx, node)
    if isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and isinstance(node.operand.value, (int, float)) and not isinstance(node.operand.value, bool):
        return const_from_py(ctx, -node.operand.value, node)
    if isinstance(node.op, ast.UAdd):
        return eval_expr(ctx, node.operand)
    a = require_scalar(ctx, eval_expr(ctx, node.operand), node.operand, "the operand")
    if isinstance(node.op, ast.USub):
        return ir.UnaryExpr.make(ir.UnaryOp.Neg, a, ctx.span(node))
    if isinstance(node.op, ast.Not):
        return ir.UnaryExpr.make(ir.UnaryOp.Not, a, ctx.span(node))
    if isinstance(node.op, ast.Invert):
        return ir.UnaryExpr.make(ir.UnaryOp.BitNot, a, ctx.span(node))
    raise ctx.error(node, f"unsupported operator in '{ast.unparse(node)}'")


def _boolop(ctx, node: ast.BoolOp):
    if any(isinstance(n, ast.IfExp) for v in node.values[1:] for n in ast.walk(v)) or \
            any(has_element_read(ctx, v) for v in node.values[1:]):
        return registry.handler("lazy_boolop")(ctx, node)
    op = ir.BinaryOp.And if isinstance(node.op, ast.And) else ir.BinaryOp.Or
    ctx.push_block()
    vals = [require_scalar(ctx, eval_expr(ctx, v), v, "an operand of and/or") for v in node.values]
    stmts = ctx.pop_block()
    if any(v.type.dtype != ir.DataType.BOOL for v in vals):
        # Python's value: `n or 5` is n (5 when n is 0), not a bool; parsed again, lazily
        return registry.handler("lazy_boolop")(ctx, node)
    for s in stmts:
        ctx.emit(s)
    acc = vals[0]
    for v in vals[1:]:
        acc = ir.BinaryExpr.make(op, acc, v, ctx.span(node))
    return acc


def _compare(ctx, node: ast.Compare):
    """`a < b`; a chain `a < b <= c` is `a < b and b <= c`, as in Python (b evaluated once: its value
    is used by both comparisons)."""
    for op in node.ops:
        if type(op) not in CMPOPS:
            raise ctx.error(node, f"unsupported comparison '{ast.unparse(node)}'", help="supported: == != < <= > >=")
    if any(isinstance(n, ast.IfExp) for v in node.comparators[1:] for n in ast.walk(v)) or \
            any(has_element_read(ctx, v) for v in node.comparators[1:]):
        return registry.handler("lazy_compare")(ctx, node)
    operands = [node.left] + list(node.comparators)
    vals = [require_scalar(ctx, eval_expr(ctx, v), v, "a comparison operand") for v in operands]
    acc = None
    for op, a, b in zip(node.ops, vals, vals[1:]):
        cmp = ir.BinaryExpr.make(getattr(ir.BinaryOp, CMPOPS[type(op)]), a, b, ctx.span(node))
        acc = cmp if acc is None else ir.BinaryExpr.make(ir.BinaryOp.And, acc, cmp, ctx.span(node))
    return acc


def index_exprs(ctx, sub: ast.Subscript) -> list:
    items = sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice]
    out = []
    for it in items:
        if isinstance(it, ast.Slice):
            raise ctx.error(it, "slices are not supported in subscripts",
                            help="use pl.tensor.slice(t, shapes, offsets) for a sub-tensor")
        out.append(require_scalar(ctx, eval_expr(ctx, it), it, "an index"))
    return out


def _subscript(ctx, node: ast.Subscript):
    extent = shape_subscript(ctx, node)          # x.shape[k]
    if extent is not None:
        return extent
    base = eval_expr(ctx, node.value)
    t = base.type
    span = ctx.span(node)
    if isinstance(t, ir.TensorType):
        idx = index_exprs(ctx, node)
        return ir.Call.make_op("tensor.read", [base, ir.MakeTuple.make(idx, span)], {}, span)
    if isinstance(t, ir.TupleType):
        k = try_eval_py(ctx, node.slice, None)
        if isinstance(k, bool) or not isinstance(k, int):
            raise ctx.error(node.slice, "a tuple index must be an integer constant")
        n = len(t.elements)
        if not -n <= k < n:
            raise ctx.error(node.slice, f"tuple index {k} out of range for a tuple of {n} elements")
        return ir.TupleGetItem.make(base, k % n, span)
    if isinstance(t, ir.ArrayType):
        if isinstance(node.slice, ast.Tuple):
            raise ctx.error(node.slice, "an array takes one index")
        idx = index_exprs(ctx, node)[0]
        return ir.Call.make_op("array.get_element", [base, idx], {}, span)
    if isinstance(t, ir.TileType):
        return _tile_subscript(ctx, node, base, t, span)
    raise ctx.error(node, f"cannot index {irtypes.describe(t)}",
                    help="subscripts apply to tensors (element read), tiles, tuples and arrays")


def _tile_subscript(ctx, node: ast.Subscript, base, t, span):
    """The reference's tile sugar (reference_ops.md §9, §10): `t[i, j]` is `pl.tile.read(t, [i, j])`;
    `t[0:16, :]` / `t[r:r + 8, 0:32]` is `pl.tile.slice(t, [16, N], [0, 0])`; an integer index among
    slices drops its axis (`t[0:8, 3]` is `pl.tile.slice(t, [8, 1], [0, 3], drop_dims=[1])`, a [1, 8]
    tile); a run-time extent from a constant start (`t[0:n, :]`) windows the rest of the axis with
    valid extent `n - start` (`pl.tile.slice(t, [16, N], [0, 0], [n, N])`)."""
    items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if not any(isinstance(it, ast.Slice) for it in items):
        return ir.Call.make_op("tile.read", [base, ir.MakeTuple.make(index_exprs(ctx, node), span)], {}, span)
    if len(items) != len(t.shape):
        raise ctx.error(node.slice, f"a tile slice needs one 'start:stop' or index per axis ({len(t.shape)})",
                        help="e.g. t[0:16, :] or t[0:8, 3]; write pl.tile.slice(t, shape, offset) for other forms")
    shape, offset, valid, drop = [], [], [], []
    for axis, it in enumerate(items):
        if not isinstance(it, ast.Slice):   # an index: a window of extent 1 whose axis is dropped
            offset.append(require_scalar(ctx, eval_expr(ctx, it), it, "an index"))
            shape.append(ir.ConstInt.make(1, ir.DataType.INDEX, span))
            valid.append(shape[-1])
            drop.append(ir.ConstInt.make(axis, ir.DataType.INDEX, span))
            continue
        if it.step is not None:
            raise ctx.error(it.step, "a tile slice has no step")
        start = ir.ConstInt.make(0, ir.DataType.INDEX, span) if it.lower is None else \
            require_scalar(ctx, eval_expr(ctx, it.lower), it.lower, "a slice start")
        extent = _static_extent(ctx, it, t.shape[axis])
        if extent is None:
            extent, v = _run_time_extent(ctx, it, start, t.shape[axis])
            valid.append(v)
        else:
            valid.append(ir.ConstInt.make(extent, ir.DataType.INDEX, span))
        if extent <= 0:
            raise ctx.error(it, f"the extent of slice '{ast.unparse(it)}' must be positive",
                            help="write start:start + <constant>, or use constant bounds")
        shape.append(ir.ConstInt.make(extent, ir.DataType.INDEX, span))
        offset.append(start)
    args = [base, ir.MakeTuple.make(shape, span), ir.MakeTuple.make(offset, span)]
    if any(not (isinstance(v, ir.ConstInt) and isinstance(s, ir.ConstInt) and v.value == s.value)
           for v, s in zip(valid, shape)):
        args.append(ir.MakeTuple.make(valid, span))
    return ir.Call.make_op("tile.slice", args, {"drop_dims": drop} if drop else {}, span)


def _run_time_extent(ctx, it: ast.Slice, start, dim):
    """(window extent, valid extent expr) of a tile slice `a:b` whose extent is not a constant: the window
    runs from the constant start `a` to the end of the axis, and `b - a` elements of it are valid."""
    lo = 0 if it.lower is None else _const_int(ctx, it.lower)
    if lo is None or it.upper is None or not isinstance(dim, ir.ConstInt):
        raise ctx.error(it, f"the extent of slice '{ast.unparse(it)}' is a run-time value, which needs a "
                        "constant start and a tile of constant extent",
                        help="write start:start + <constant>, or slice from a constant start: t[0:n, :] "
                             "(a window to the end of the axis with n valid rows)")
    stop = require_scalar(ctx, eval_expr(ctx, it.upper), it.upper, "a slice stop")
    sp = ctx.span(it)
    v = stop if lo == 0 else ir.BinaryExpr.make(ir.BinaryOp.Sub, stop, start, sp)
    return dim.value - lo, v


def _static_extent(ctx, it: ast.Slice, dim):
    """stop - start of a tile slice when it is a compile-time constant (`a:b`, `:`, `i:i + 8`), else None."""
    lo = 0 if it.lower is None else _const_int(ctx, it.lower)
    hi = (dim.value if isinstance(dim, ir.ConstInt) else None) if it.upper is None else _const_int(ctx, it.upper)
    if lo is not None and hi is not None:
        return hi - lo
    up = it.upper
    if isinstance(up, ast.BinOp) and isinstance(up.op, ast.Add) and it.lower is not None \
            and ast.dump(up.left) == ast.dump(it.lower):
        return _const_int(ctx, up.right)
    return None


def _const_int(ctx, node: ast.AST):
    """The compile-time int `node` denotes (a literal or module constant, not a DSL value), else None."""
    if isinstance(node, ast.Name) and ctx.lookup(node.id) is not None:
        return None
    v = try_eval_py(ctx, node, None)
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _call(ctx, node: ast.Call):
    return registry.handler("call")(ctx, node)


def _ifexp(ctx, node: ast.IfExp):
    return registry.handler("ifexp")(ctx, node)


def _unsupported(ctx, node):
    what = type(node).__name__
    helps = {"Lambda": "define a @pl.function instead",
             "List": "list literals are only allowed as op arguments (shapes, offsets) and deps=",
             "Tuple": "tuples are only allowed as op arguments, return values and unpacking targets",
             "Dict": "dict literals are only allowed for attrs=", "JoinedStr": "strings are not values in the DSL",
             "Set": "set literals are not DSL values; op arguments (shapes, offsets) are list literals: [16, 16]",
             "NamedExpr": "assign on a line of its own (n = 3), then use the name",
             "Starred": "pass each value as an argument of its own",
             "Await": "DSL functions are plain def methods: there is nothing to await",
             **dict.fromkeys(("ListComp", "SetComp", "DictComp", "GeneratorExp"),
                             "comprehensions are not DSL values: write a loop (for i in pl.range(n): ...) "
                             "or, for a shape, a list literal")}
    return ctx.error(node, f"unsupported Python expression ({what}) '{ast.unparse(node)}'", help=helps.get(what, ""))


HANDLERS = {
    ast.Name: _name, ast.Constant: _constant, ast.Attribute: _attribute, ast.BinOp: _binop,
    ast.UnaryOp: _unaryop, ast.BoolOp: _boolop, ast.Compare: _compare, ast.Subscript: _subscript,
    ast.Call: _call, ast.IfExp: _ifexp,
}


def eval_expr(ctx, node: ast.AST):
    """An ``ast`` expression -> IR Expr (raises a located PyptoError on misuse)."""
    if type(node) is ast.Name:          # the most common expression: a value bound in the function
        v = ctx.lookup(node.id)
        if v is not None:
            return v
    h = HANDLERS.get(type(node))
    if h is None:
        raise _unsupported(ctx, node)
    return h(ctx, node)


def eval_arg(ctx, node: ast.AST):
    """An op argument: like eval_expr, but a list/tuple literal, or a module constant holding one
    (`SHAPE = [16, 16]`), becomes a MakeTuple."""
    node = constant_sequence_node(ctx, node)
    if isinstance(node, (ast.List, ast.Tuple)):
        return ir.MakeTuple.make([eval_expr(ctx, e) for e in node.elts], ctx.span(node))
    return eval_expr(ctx, node)

