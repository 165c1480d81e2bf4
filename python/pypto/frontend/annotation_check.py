"""`x: T = e` when T is not structurally identical to e's type (anchor_features.md §14).

    i: pl.Scalar[pl.INT64] = pl.tensor.dim(x, 0)      # INDEX value, INT64 annotation -> pl.cast(e, INT64)
    acc: pl.Tile[[64, 64], pl.FP32] = pl.matmul(a, b)  # omitted memory space: the value stays Acc
    t: pl.Tile[[16, 16], pl.FP32, pl.MemorySpace.Mat] = pl.load(x, [0, 0], [16, 16])   # retargets the load

Compared: kind, dtype (INDEX matches every integer dtype both ways), rank and static dims (a dynamic dim on
either side matches). Anything else is a located error naming the inferred type.
"""

from __future__ import annotations

import ast

from pypto._core import ir
from pypto.frontend import irtypes
from pypto.frontend.annotations import expand_alias, tile_annotation_space
from pypto.frontend.diagnostics import a_or_an

# Ops whose result memory space an annotation may choose (they take an optional target_memory=).
_RETARGETABLE = ("tile.load", "tile.create", "tile.full")


def _is_index_pair(a, b) -> bool:
    """INDEX on one side and any integer dtype on the other."""
    index = ir.DataType.INDEX
    return (a == index and ir.is_integer(b)) or (b == index and ir.is_integer(a))


def _dims_match(ann_shape, val_shape) -> bool:
    if len(ann_shape) != len(val_shape):
        return False
    for x, y in zip(ann_shape, val_shape):
        if isinstance(x, ir.ConstInt) and isinstance(y, ir.ConstInt) and x.value != y.value:
            return False
    return True


def _annotation_items(ctx, node: ast.AST) -> int:
    """Number of items in `pl.Tensor[...]` (3 when the layout is given)."""
    node = expand_alias(ctx, node)
    if not isinstance(node, ast.Subscript):
        return 0
    return len(node.slice.elts) if isinstance(node.slice, ast.Tuple) else 1


def _mismatch(ctx, st, ann, value, what: str):
    name = st.target.id
    return ctx.error(st.annotation, f"'{name}' is annotated {irtypes.type_str(ann)} but the value is "
                     f"{irtypes.describe(value.type)}: {what}",
                     help=f"write {name}: {irtypes.type_str(value.type)} = ..., or drop the annotation "
                     "(it is optional)")


def _retarget(ctx, st, ann, value):
    """An explicit, different tile memory space: rebuild a load/create with that target_memory."""
    if isinstance(value, ir.Call) and value.is_op and value.callee in _RETARGETABLE \
            and "target_memory" not in value.attrs:
        attrs = dict(value.attrs)
        attrs["target_memory"] = ann.memory.name
        return ir.Call.make_op(value.callee, list(value.args), attrs, value.span)
    raise _mismatch(ctx, st, ann, value,
                    f"its memory space is {value.type.memory.name}, not {ann.memory.name}")


def reconcile_annotation(ctx, st: ast.AnnAssign, ann, value):
    """The value to bind for `x: ann = value` whose types differ, or a located error.

    Example: for `n: pl.Scalar[pl.INT32] = pl.tensor.dim(x, 0)` returns `Cast(dim, INT32)`.
    """
    vt = value.type
    if irtypes.kind_of(ann) != irtypes.kind_of(vt):
        raise _mismatch(ctx, st, ann, value, f"{a_or_an(irtypes.kind_of(vt))} is not {a_or_an(irtypes.kind_of(ann))}")
    if isinstance(ann, ir.ScalarType):
        if _is_index_pair(ann.dtype, vt.dtype):
            return ir.Cast.make(value, ann.dtype, ctx.span(st.value))
        raise _mismatch(ctx, st, ann, value, f"dtype {ann.dtype.name} differs from {vt.dtype.name}")
    if isinstance(ann, (ir.TensorType, ir.TileType)):
        if ann.dtype != vt.dtype:
            raise _mismatch(ctx, st, ann, value, f"dtype {ann.dtype.name} differs from {vt.dtype.name}")
        if not _dims_match(ann.shape, vt.shape):
            raise _mismatch(ctx, st, ann, value, "the rank or a static dimension differs")
        if isinstance(ann, ir.TensorType):
            if _annotation_items(ctx, st.annotation) == 3 and ann.layout != vt.layout:   # layout given
                raise _mismatch(ctx, st, ann, value, f"layout {ann.layout.name} differs from {vt.layout.name}")
            return value
        if tile_annotation_space(ctx, st.annotation) is not None and ann.memory != vt.memory:
            return _retarget(ctx, st, ann, value)
        return value   # omitted memory space: keeps the inferred one (e.g. Acc from pl.matmul)
    raise _mismatch(ctx, st, ann, value, "the types differ")
