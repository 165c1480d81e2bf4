"""Small helpers over IR types for the parser's checks and messages.

    kind_of(ir.ScalarType.make(ir.DataType.FP32))   # "scalar"
    type_str(t)                                     # "pl.Tensor[[16, 16], pl.FP32]"
"""

from __future__ import annotations

from pypto._core import ir


_KIND_OF_CLASS = {ir.ScalarType: "scalar", ir.TensorType: "tensor", ir.TileType: "tile", ir.TupleType: "tuple",
                  ir.ArrayType: "array"}


def kind_of(t) -> str:
    """'scalar' | 'tensor' | 'tile' | 'tuple' | 'array'."""
    kind = _KIND_OF_CLASS.get(type(t))     # IR types arrive as their most-derived class
    if kind is not None:
        return kind
    if isinstance(t, ir.ScalarType):
        return "scalar"
    if isinstance(t, ir.TensorType):
        return "tensor"
    if isinstance(t, ir.TileType):
        return "tile"
    if isinstance(t, ir.TupleType):
        return "tuple"
    if isinstance(t, ir.ArrayType):
        return "array"
    raise TypeError(f"not an IR type: {t!r}")


def is_scalar(t, *dtypes) -> bool:
    return isinstance(t, ir.ScalarType) and (not dtypes or t.dtype in dtypes)


def is_int_scalar(t) -> bool:
    return isinstance(t, ir.ScalarType) and ir.is_integer(t.dtype)


def is_task_id_scalar(t) -> bool:
    return isinstance(t, ir.ScalarType) and t.dtype == ir.DataType.TASK_ID


def is_task_id_array(t) -> bool:
    return isinstance(t, ir.ArrayType) and t.dtype == ir.DataType.TASK_ID


def shape_str(shape) -> str:
    """`[16, M]`: a shape as the DSL spells it, for messages."""
    parts = []
    for e in shape:
        if isinstance(e, ir.ConstInt):
            parts.append(str(e.value))
        elif isinstance(e, ir.Var):
            parts.append(e.name)
        else:
            try:
                parts.append(ir.python_print(e))   # an expression: `min(M - r, 32)`
            except Exception:  # noqa: BLE001 - a message must not fail
                parts.append(repr(e))
    return "[" + ", ".join(parts) + "]"


def type_str(t) -> str:
    """The DSL spelling of a type, for messages."""
    if isinstance(t, ir.ScalarType):
        return f"pl.Scalar[pl.{t.dtype.name}]"
    if isinstance(t, ir.TensorType):
        lay = "" if t.layout == ir.Layout.ND else f", pl.Layout.{t.layout.name}"
        return f"pl.Tensor[{shape_str(t.shape)}, pl.{t.dtype.name}{lay}]"
    if isinstance(t, ir.TileType):
        mem = "" if t.memory == ir.MemorySpace.Vec else f", pl.MemorySpace.{t.memory.name}"
        valid = f", pl.TileView(valid_shape={shape_str(t.valid_shape)})" if t.valid_shape else ""
        return f"pl.Tile[{shape_str(t.shape)}, pl.{t.dtype.name}{mem}{valid}]"
    if isinstance(t, ir.TupleType):
        return "tuple[" + ", ".join(type_str(e) for e in t.elements) + "]"
    if isinstance(t, ir.ArrayType):
        return f"pl.Array[{t.size}, pl.{t.dtype.name}]"
    return repr(t)


def describe(t) -> str:
    """'a tensor (pl.Tensor[[16], pl.FP32])' — kind plus spelling, for 'expected X, got Y'."""
    article = {"scalar": "a scalar", "tensor": "a tensor", "tile": "a tile", "tuple": "a tuple",
               "array": "an array"}[kind_of(t)]
    return f"{article} ({type_str(t)})"
