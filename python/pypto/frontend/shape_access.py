"""`x.shape[k]`, `len(x)` and `m, n = x.shape` on tensors and tiles, as in NumPy.

    x.shape[0]     -> pl.tensor.dim(x, 0)   (a tensor: the orchestration folds it onto the
                                           declared extent, a constant or the pl.dynamic symbol)
    t.shape[1]     -> 16                    (a tile: its static extent)
    len(x)         -> x.shape[0]
    m, n = x.shape -> m = x.shape[0]; n = x.shape[1]

The axis is a compile-time integer (negative counts from the end, as in Python); `x.dtype` is
read by pyeval as the value's dtype (`pl.cast(t, x.dtype)`).
"""

from __future__ import annotations

import ast

from pypto._core import ir
from pypto.frontend import irtypes
from pypto.frontend.pyeval import try_eval_py

_INDEX = ir.DataType.INDEX


def shaped_value(ctx, node: ast.AST):
    """The tensor or tile `node` names when it is `<name>.shape` of one, else None."""
    if not (isinstance(node, ast.Attribute) and node.attr == "shape" and isinstance(node.value, ast.Name)):
        return None
    v = ctx.lookup(node.value.id)
    if v is None:
        return None
    if not isinstance(v.type, (ir.TensorType, ir.TileType)):
        raise ctx.error(node, f"'{node.value.id}' is {irtypes.describe(v.type)}: only tensors and tiles have a .shape")
    return v


def dim(ctx, v, axis: int, node: ast.AST):
    """Extent `axis` of tensor or tile `v` (axis already checked to be in range)."""
    extent = v.type.shape[axis]
    if isinstance(v.type, ir.TileType) or ctx.is_orchestration:
        return extent          # a tile's extent; the orchestration folds pl.tensor.dim the same way
    sp = ctx.span(node)
    return ir.Call.make_op("tensor.dim", [v, ir.ConstInt.make(axis, _INDEX, sp)], {}, sp)


def checked_axis(ctx, v, axis_node: ast.AST, name: str) -> int:
    """The non-negative axis a compile-time index `axis_node` names in `v`'s shape, or a located error."""
    k = try_eval_py(ctx, axis_node, None)
    if isinstance(k, bool) or not isinstance(k, int):
        raise ctx.error(axis_node, f"the index of {name}.shape must be an integer constant",
                        help=f"e.g. {name}.shape[0]; a run-time axis is not supported")
    rank = len(v.type.shape)
    if not -rank <= k < rank:
        raise ctx.error(axis_node, f"{name}.shape[{k}] is out of range: {name} has rank {rank}")
    return k % rank


def shape_subscript(ctx, node: ast.Subscript):
    """`x.shape[k]` -> its extent, or None when `node` is not a shape subscript."""
    v = shaped_value(ctx, node.value)
    if v is None:
        return None
    return dim(ctx, v, checked_axis(ctx, v, node.slice, node.value.value.id), node)


def len_call(ctx, node: ast.Call):
    """`len(x)`: the first extent of a tensor or tile."""
    if len(node.args) != 1 or node.keywords or not isinstance(node.args[0], ast.Name):
        raise ctx.error(node, "len() takes one tensor or tile name: len(x)")
    v = ctx.lookup(node.args[0].id)
    if v is None:
        raise ctx.unknown_name_error(node.args[0])
    if not isinstance(v.type, (ir.TensorType, ir.TileType)) or not v.type.shape:
        raise ctx.error(node.args[0], f"len() needs a tensor or tile of rank 1 or more, got {irtypes.describe(v.type)}")
    return dim(ctx, v, 0, node)


def unpack_shape(ctx, targets: ast.AST, value_node: ast.AST):
    """`m, n = x.shape` -> [(name node, extent)], or None when the value is not a .shape."""
    v = shaped_value(ctx, value_node)
    if v is None:
        return None
    rank = len(v.type.shape)
    if len(targets.elts) != rank:
        raise ctx.error(targets, f"{value_node.value.id}.shape has {rank} extents but {len(targets.elts)} names are unpacked")
    return [(t, dim(ctx, v, k, value_node)) for k, t in enumerate(targets.elts)]
