"""Type annotations -> IR types.

    pl.Tensor[[16, M], pl.FP32]            TensorType([ConstInt 16, Var M], FP32)
    pl.Tensor[[16, 16], pl.FP16, pl.Layout.DN]
    pl.Tile[[16, 16], pl.FP32, pl.MemorySpace.Left]
    pl.Out[pl.Tensor[...]] / pl.InOut[...] (parameters only) -> direction Out / InOut
    pl.Scalar[pl.INDEX]    pl.Array[4, pl.TASK_ID]    tuple[T1, T2] (returns)
    X = pl.Tensor[[16, 16], pl.FP32] at module level, then x: X   (a type alias: expand_alias)
"""

from __future__ import annotations

import ast
import enum
import types

from pypto._core import ir
from pypto.frontend.diagnostics import did_you_mean
from pypto.frontend.pyeval import PyEvalFailure, constant_sequence_node, dotted, eval_py, try_eval_py
from pypto.language import _types as T

_MAX_EXTENT = 1 << 63     # shape entries are INDEX (int64) values

_FORMS = ("pl.Tensor[[d0, d1], pl.FP32]", "pl.Tile[[d0, d1], pl.FP32]", "pl.Scalar[pl.FP32]",
          "pl.Array[N, pl.TASK_ID]", "pl.Out[pl.Tensor[...]]", "pl.InOut[pl.Tensor[...]]")


def _malformed(ctx, node, what=""):
    text = ast.unparse(node)
    msg = f"malformed type annotation '{text}'" + (f": {what}" if what else "")
    return ctx.error(node, msg, help="write one of " + ", ".join(_FORMS))


def expand_alias(ctx, node: ast.AST) -> ast.AST:
    """A name or attribute whose compile-time value is a type (``X = pl.Tensor[[16, M], pl.FP32]``
    at module level, or ``tuple[X, Y]``) -> the annotation it stands for, as if written at `node`
    (every rebuilt node is located there); any other node as it is.

        x: X   reads as   x: pl.Tensor[[16, M], pl.FP32]
    """
    if not isinstance(node, (ast.Name, ast.Attribute)):
        return node
    v = try_eval_py(ctx, node, None)
    if not isinstance(v, T._Spec) and not (isinstance(v, types.GenericAlias) and v.__origin__ is tuple):
        return node
    return _rebuilt(v, node)


def _rebuilt(v, at: ast.AST) -> ast.AST:
    """The annotation AST that evaluates to the Python value `v` (a _Spec and what it holds)."""
    if isinstance(v, T._Spec):
        head, item = getattr(T, v.kind), v.item
    elif isinstance(v, types.GenericAlias):
        head, item = v.__origin__, v.__args__
    else:
        head = None
    if head is not None:
        sub = ast.Tuple(elts=[_rebuilt(x, at) for x in item], ctx=ast.Load()) if isinstance(item, tuple) \
            else _rebuilt(item, at)
        out = ast.Subscript(value=ast.Constant(value=head), slice=ast.copy_location(sub, at), ctx=ast.Load())
    elif isinstance(v, (list, tuple)):
        elts = [_rebuilt(x, at) for x in v]
        out = ast.List(elts=elts, ctx=ast.Load()) if isinstance(v, list) else ast.Tuple(elts=elts, ctx=ast.Load())
    elif isinstance(v, (T.TileView, T.MemRef)):
        out = ast.Call(func=ast.Constant(value=type(v)), args=[_rebuilt(x, at) for x in v.args],
                       keywords=[ast.keyword(arg=k, value=_rebuilt(x, at)) for k, x in v.kwargs.items()])
    elif isinstance(v, enum.Enum):
        out = ast.Attribute(value=ast.Constant(value=type(v)), attr=v.name, ctx=ast.Load())   # pl.Layout.DN
    else:
        out = ast.Constant(value=v)
    for n in ast.walk(out):
        ast.copy_location(n, at)
    return out


def ir_dtype(ctx, node: ast.AST):
    """A dtype spelling (pl.FP32) -> ir.DataType."""
    try:
        v = eval_py(ctx, node)
    except PyEvalFailure as f:
        if f.reason == "attr" and isinstance(node, ast.Attribute):
            raise ctx.error(node, f"unknown dtype '{dotted(node) or node.attr}'",
                            help=did_you_mean(node.attr, T.DTYPE_NAMES) or
                            "dtypes are " + ", ".join("pl." + n for n in T.DTYPE_NAMES)) from None
        raise ctx.error(node, f"expected a dtype such as pl.FP32, got '{ast.unparse(node)}'",
                        help="dtypes are " + ", ".join("pl." + n for n in T.DTYPE_NAMES)) from None
    if not isinstance(v, T.DataType):
        raise ctx.error(node, f"expected a dtype such as pl.FP32, got '{ast.unparse(node)}'",
                        help="dtypes are " + ", ".join("pl." + n for n in T.DTYPE_NAMES))
    return getattr(ir.DataType, v.name)


def _enum_arg(ctx, node, enum_cls, what):
    try:
        v = eval_py(ctx, node)
    except PyEvalFailure:
        v = None
    if not isinstance(v, enum_cls):
        names = [m.name for m in enum_cls]
        raise ctx.error(node, f"expected a {what} (pl.{enum_cls.__name__}.X), got '{ast.unparse(node)}'",
                        help=f"{what}s are " + ", ".join(f"pl.{enum_cls.__name__}.{n}" for n in names))
    return getattr(getattr(ir, enum_cls.__name__), v.name)


def shape_expr(ctx, node: ast.AST):
    """One shape entry: an int (literal or constant), a pl.dynamic symbol, or an integer Var."""
    if isinstance(node, ast.Name):
        local = ctx.lookup(node.id)
        if local is not None:
            if isinstance(local.type, ir.ScalarType) and ir.is_integer(local.type.dtype):
                return local
            raise ctx.error(node, f"shape entry '{node.id}' is not an integer scalar")
    try:
        v = eval_py(ctx, node)
    except PyEvalFailure as f:
        if f.reason == "unknown":
            raise ctx.unknown_name_error(node) from None
        v = None
    if isinstance(v, bool) or not isinstance(v, (int, T.DynamicDim)):
        raise ctx.error(node, f"shape entries must be integers or pl.dynamic symbols, got '{ast.unparse(node)}'",
                        help='declare a dynamic dimension with M = pl.dynamic("M") at module level')
    if isinstance(v, T.DynamicDim):
        return ctx.prog.dynamic_var(v.name, ctx.span(node))
    if v < 0:
        raise ctx.error(node, f"shape entry {v} is negative: an extent is at least 0",
                        help="write the number of elements along this dimension")
    if v >= _MAX_EXTENT:
        raise ctx.error(node, f"shape entry {v} is too large: an extent must be below 2^63",
                        help="shapes are INDEX (int64) values")
    return ir.ConstInt.make(v, ir.DataType.INDEX, ctx.span(node))


def _shape(ctx, node: ast.AST, ann: ast.AST):
    node = constant_sequence_node(ctx, node)       # SHAPE = [16, 16] at module level: pl.Tensor[SHAPE, ...]
    if not isinstance(node, (ast.List, ast.Tuple)):
        raise _malformed(ctx, ann, "the shape must be a list such as [16, 16]")
    return [shape_expr(ctx, e) for e in node.elts]


def _items(node: ast.Subscript):
    s = node.slice
    return list(s.elts) if isinstance(s, ast.Tuple) else [s]


def parse_type(ctx, node: ast.AST, allow_direction: bool = False, allow_tuple: bool = False):
    """Annotation -> (ir type, ir.ParamDirection). Raises a located PyptoError when malformed."""
    node = expand_alias(ctx, node)
    if not isinstance(node, ast.Subscript):
        raise _malformed(ctx, node)
    try:
        head = eval_py(ctx, node.value)
    except PyEvalFailure as f:
        if f.reason == "attr":
            raise ctx.error(node.value, f"unknown type '{dotted(node.value)}'",
                            help=did_you_mean(f.attr, ["Tensor", "Tile", "Scalar", "Array", "Out", "InOut"]) or
                            "write one of " + ", ".join(_FORMS)) from None
        raise _malformed(ctx, node) from None
    items = _items(node)
    In = ir.ParamDirection.In
    if head in (T.Out, T.InOut):
        if not allow_direction:
            raise ctx.error(node, f"pl.{head.kind}[...] is only allowed on function parameters",
                            help="annotate the value with the inner type")
        if len(items) != 1:
            raise _malformed(ctx, node, f"pl.{head.kind} takes one type")
        inner, _ = parse_type(ctx, items[0])
        if not isinstance(inner, ir.TensorType):
            raise _malformed(ctx, node, f"pl.{head.kind} wraps a pl.Tensor")
        return inner, getattr(ir.ParamDirection, head.kind)
    if head is T.Tile:
        if len(items) < 2:
            raise _malformed(ctx, node, "pl.Tile takes [shape], dtype, and optionally a memory space, "
                             "pl.TileView(...) and pl.MemRef(...)")
        shape = _shape(ctx, items[0], node)
        mem = tile_annotation_space(ctx, node, shape)
        valid = next((_tile_view(ctx, it, shape) for it in items[2:] if _call_of(ctx, it, T.TileView)), None)
        return ir.TileType.make(shape, ir_dtype(ctx, items[1]), mem or ir.MemorySpace.Vec, valid or []), In
    if head is T.Tensor:
        if len(items) not in (2, 3):
            raise _malformed(ctx, node, "pl.Tensor takes [shape], dtype, and an optional layout")
        shape = _shape(ctx, items[0], node)
        dtype = ir_dtype(ctx, items[1])
        if len(items) == 3 and isinstance(try_eval_py(ctx, items[2], None), T.TileLayoutMarker):
            raise ctx.error(items[2], f"{ast.unparse(items[2])} is a fractal tile layout, not a tensor layout",
                            help="tensor layouts are pl.Layout.ND (default) and pl.Layout.DN")
        layout = _enum_arg(ctx, items[2], T.Layout, "layout") if len(items) == 3 else ir.Layout.ND
        return ir.TensorType.make(shape, dtype, layout), In
    if head is T.Scalar:
        if len(items) != 1:
            raise _malformed(ctx, node, "pl.Scalar takes one dtype")
        return ir.ScalarType.make(ir_dtype(ctx, items[0])), In
    if head is T.Array:
        if len(items) != 2:
            raise _malformed(ctx, node, "pl.Array takes a size and a dtype")
        try:
            n = eval_py(ctx, items[0])
        except PyEvalFailure:
            n = None
        if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
            raise _malformed(ctx, node, "the array size must be a positive integer constant")
        return ir.ArrayType.make(n, ir_dtype(ctx, items[1])), In
    if head is tuple and allow_tuple:
        return ir.TupleType.make([parse_type(ctx, e)[0] for e in items]), In
    raise _malformed(ctx, node)


_TILE_ITEMS_HELP = ("pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[8, 16]), "
                    "pl.MemRef(0, 1024)]")
_VIEW_KEYWORDS = ("valid_shape", "stride", "start_offset")


def _call_of(ctx, node: ast.AST, cls) -> bool:
    return isinstance(node, ast.Call) and try_eval_py(ctx, node.func, None) is cls


def _int_literal(ctx, node: ast.AST, what: str, minimum: int) -> int:
    v = try_eval_py(ctx, node, None)
    if type(v) is not int or v < minimum:
        raise ctx.error(node, f"{what} must be an int literal >= {minimum}, got '{ast.unparse(node)}'")
    return v


def _valid_entry(ctx, el: ast.AST):
    """One valid_shape entry: a shape entry, or an integer scalar expression (``min(M - r, 32)``, as the
    printer writes a dynamic valid extent)."""
    if isinstance(el, (ast.Name, ast.Constant, ast.Attribute)):
        return shape_expr(ctx, el)
    from pypto.frontend.exprs import eval_expr   # the expression translator imports this module
    e = eval_expr(ctx, el)
    if not (isinstance(e.type, ir.ScalarType) and ir.is_integer(e.type.dtype)):
        raise ctx.error(el, f"valid_shape entries must be integer scalars, got '{ast.unparse(el)}'")
    return e


def _tile_view(ctx, call: ast.Call, shape: list):
    """Checks ``pl.TileView(valid_shape=[..], stride=[..], start_offset=k)`` against the tile's shape;
    returns the valid_shape exprs (None when not given). Stride and start_offset are a CPU no-op."""
    valid = None
    if call.args:
        raise ctx.error(call.args[0], "pl.TileView takes keyword arguments only: " + ", ".join(_VIEW_KEYWORDS))
    for kw in call.keywords:
        if kw.arg not in _VIEW_KEYWORDS:
            raise ctx.error(kw.value if kw.arg else call, f"pl.TileView has no keyword '{kw.arg}' here",
                            help="keywords: " + ", ".join(_VIEW_KEYWORDS) + "; fractal layout fields (blayout, "
                                 "slayout, fractal, pad) are refused like pl.NZ: the CPU has no fractal layouts")
        if kw.arg == "start_offset":
            _int_literal(ctx, kw.value, "start_offset=", 0)
            continue
        if not isinstance(kw.value, (ast.List, ast.Tuple)) or len(kw.value.elts) != len(shape):
            raise ctx.error(kw.value, f"{kw.arg}= must be a list of {len(shape)} entries (the tile's rank), got "
                            f"'{ast.unparse(kw.value)}'")
        if kw.arg == "valid_shape":
            valid = []
        for k, el in enumerate(kw.value.elts):
            if kw.arg == "stride":
                _int_literal(ctx, el, "a stride", 1)
                continue
            e = _valid_entry(ctx, el)
            dim = shape[k]
            if isinstance(e, ir.ConstInt) and isinstance(dim, ir.ConstInt) and e.value > dim.value:
                raise ctx.error(el, f"valid_shape entry {e.value} exceeds the tile's dimension {k} ({dim.value})",
                                help="the valid region lies inside the tile")
            valid.append(e)
    return valid


def _memref(ctx, call: ast.Call):
    """Checks ``pl.MemRef([space,] addr, size[, id])``; returns the space it names, or None."""
    if call.keywords:
        raise ctx.error(call.keywords[0].value, "pl.MemRef takes positional arguments: ([memory space,] addr, "
                        "size[, id])")
    args, space = list(call.args), None
    if args and isinstance(try_eval_py(ctx, args[0], None), T.MemorySpace):
        space = _enum_arg(ctx, args.pop(0), T.MemorySpace, "memory space")
    if len(args) not in (2, 3):
        raise ctx.error(call, f"pl.MemRef takes ([memory space,] addr, size[, id]), got {len(call.args)} arguments",
                        help="e.g. pl.MemRef(0, 1024) next to pl.Mem.Vec")
    for what, el, lo in zip(("addr", "size", "id"), args, (0, 1, 0)):
        _int_literal(ctx, el, f"pl.MemRef {what}", lo)
    return space


def tile_annotation_space(ctx, node: ast.Subscript, shape: list | None = None):
    """The memory space a ``pl.Tile[...]`` annotation gives explicitly, or None; checks its items after
    the dtype (anchor_features §14): at most one memory space (``pl.Mem.X`` / ``pl.MemorySpace.X``),
    ``pl.TileView(...)`` and ``pl.MemRef(...)`` (which needs an explicit space); layout markers such as
    ``pl.NZ`` are refused. Views and addresses are a no-op on the CPU.

        tile_annotation_space(ctx, <pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat]>)  ->  ir.MemorySpace.Mat
    """
    items = _items(expand_alias(ctx, node))
    mem, seen, memref = None, set(), None
    for it in items[2:]:
        kind = ("view" if _call_of(ctx, it, T.TileView) else "memref" if _call_of(ctx, it, T.MemRef) else "space")
        if kind in seen:
            raise ctx.error(it, f"a tile annotation takes one {'memory space' if kind == 'space' else ast.unparse(it.func)}",
                            help="write " + _TILE_ITEMS_HELP)
        seen.add(kind)
        if kind == "view":
            if shape is not None:
                _tile_view(ctx, it, shape)
        elif kind == "memref":
            memref = (it, _memref(ctx, it))
        else:
            v = try_eval_py(ctx, it, None)
            if isinstance(v, (T.TileLayoutMarker, T.Layout)):
                raise ctx.error(it, f"a tile annotation takes no layout marker ('{ast.unparse(it)}')",
                                help="tile layouts are not part of a tile's type (the reference's parser refuses "
                                     "them too); drop it")
            mem = _enum_arg(ctx, it, T.MemorySpace, "memory space")
    if memref is not None:
        it, space = memref
        if space is not None and mem is not None and space != mem:
            raise ctx.error(it, f"pl.MemRef names memory space {space.name} but the annotation names {mem.name}")
        mem = mem or space
        if mem is None:
            raise ctx.error(it, "pl.MemRef needs an explicit memory space in the annotation",
                            help="write " + _TILE_ITEMS_HELP)
    return mem


def parse_return_types(ctx, node: ast.AST | None) -> list:
    """Return annotation -> list of IR types ([] for none / `-> None`)."""
    if node is None or (isinstance(node, ast.Constant) and node.value is None):
        return []
    t, _ = parse_type(ctx, node, allow_tuple=True)
    return list(t.elements) if isinstance(t, ir.TupleType) else [t]
