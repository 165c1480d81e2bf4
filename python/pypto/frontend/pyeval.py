"""Evaluate the compile-time Python part of an expression: names of the defining scope,
attribute chains (``pl.FunctionType.InCore``, ``pl.FP32``) and literals.

    eval_py(ctx, node)            # -> Python object, or raises PyEvalFailure
    try_eval_py(ctx, node, None)  # -> Python object, or None (never raises PyEvalFailure)

The parser peeks at the callee of every call (is it pl.submit? pl.yield_?), and most
callees (``self.kernel``) are not compile-time values, so resolution reports failure by
returning a record instead of raising: exceptions would dominate the parse time.
"""

from __future__ import annotations

import ast
import math

from pypto.frontend.context import _MISSING, plain_number
from pypto.language._types import DTYPES, SplitMode


class PyEvalFailure(Exception):
    """The node is not a compile-time Python value. ``reason`` is 'local' (an IR value),
    'unknown' (no such name), 'attr' (no such attribute), or 'form' (not a name/attr/literal)."""

    def __init__(self, node, reason, base=None, attr=""):
        super().__init__(reason)
        self.node, self.reason, self.base, self.attr = node, reason, base, attr


class _Failure(tuple):
    """A failed resolution, returned (not raised) by _resolve: (node, reason, base, attr),
    the arguments of the PyEvalFailure it becomes. A tuple, so making one is cheap."""

    __slots__ = ()


def _resolve(ctx, node: ast.AST):
    """The Python value of `node`, or a _Failure saying why it has none."""
    if isinstance(node, ast.Name):
        if ctx.lookup(node.id) is not None:
            return _Failure((node, "local", None, ""))
        v = ctx.resolve_py(node.id)
        return _Failure((node, "unknown", None, "")) if v is _MISSING else v
    if isinstance(node, ast.Attribute):
        if node.attr == "base" and isinstance(node.value, ast.Name) and ctx.lookup(node.value.id) is not None:
            return _pipe_buffer_base(ctx, node)
        if node.attr == "dtype" and isinstance(node.value, ast.Name):     # `x.dtype` of a DSL value: a dtype
            v = ctx.lookup(node.value.id)
            dt = getattr(v.type, "dtype", None) if v is not None else None
            if dt is not None:
                return DTYPES[dt.name]
        base = _resolve(ctx, node.value)
        if type(base) is _Failure:
            return base
        try:
            return plain_number(getattr(base, node.attr))
        except AttributeError:
            return _Failure((node, "attr", base, node.attr))
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Invert)):
        v = _resolve(ctx, node.operand)
        if type(v) is _Failure:
            return v
        if isinstance(node.op, ast.Invert) and type(v) is int:
            return ~v                      # ~ of an int64 stays in int64
        if isinstance(node.op, ast.USub) and isinstance(v, (int, float)) and not isinstance(v, bool) \
                and not (type(v) is int and v == _INT64_MIN):      # -(-2**63) is beyond int64
            return -v
    if isinstance(node, ast.BinOp) and type(node.op) in _INT_ONLY_OPS:
        a, b = _resolve(ctx, node.left), _resolve(ctx, node.right)
        for v in (a, b):
            if type(v) is _Failure:
                return v
        v = _int_op(type(node.op), a, b)
        if v is not None:
            return v
    if isinstance(node, ast.BinOp) and type(node.op) in _NUMBER_OPS:
        a = _resolve(ctx, node.left)
        if type(a) is _Failure:
            return a
        b = _resolve(ctx, node.right)
        if type(b) is _Failure:
            return b
        both_ints = type(a) is int and type(b) is int and not isinstance(node.op, ast.Div)   # int / int: a float
        v = _int_op(type(node.op), a, b) if both_ints else _float_op(type(node.op), a, b)
        if v is not None:
            return v
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        return _resolve_pow(ctx, node)
    if isinstance(node, ast.Call):
        return _resolve_builtin_call(ctx, node)
    if isinstance(node, (ast.Compare, ast.BoolOp, ast.IfExp)) or \
            (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)):
        return _resolve_logic(ctx, node)
    return _Failure((node, "form", None, ""))


def _resolve_pow(ctx, node: ast.BinOp):
    """`a ** b` of compile-time numbers, as Python computes it, when the result is an int64 or a
    finite float (`2 ** K`, `2 ** -1` is 0.5)."""
    a = _resolve(ctx, node.left)
    if type(a) is _Failure:
        return a
    b = _resolve(ctx, node.right)
    if type(b) is _Failure:
        return b
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b)):
        return _Failure((node, "form", None, ""))
    if type(a) is int and type(b) is int and b >= 0:
        if abs(a) > 1 and b >= 64:
            return _Failure((node, "form", None, ""))      # beyond int64 (never builds a huge int)
        v = a ** b
        return v if -(1 << 63) <= v < (1 << 63) else _Failure((node, "form", None, ""))
    try:
        v = float(a) ** float(b)
    except (ZeroDivisionError, OverflowError):
        return _Failure((node, "form", None, ""))
    return v if isinstance(v, float) and math.isfinite(v) else _Failure((node, "form", None, ""))


# Python builtins a compile-time value may be computed with (`int(N / 2)`, `min(N, 16)`).
_BUILTIN_CALLS = (int, float, bool, abs, min, max, round)


def _resolve_builtin_call(ctx, node: ast.Call):
    """int / float / bool / abs / min / max / round of compile-time numbers, as Python computes
    them (an int must fit int64, a float be finite)."""
    fn = _resolve(ctx, node.func)
    if type(fn) is _Failure:
        return fn
    if fn not in _BUILTIN_CALLS or node.keywords or not node.args:
        return _Failure((node, "form", None, ""))
    args = []
    for a in node.args:
        v = _resolve(ctx, a)
        if type(v) is _Failure:
            return v
        if not _is_number(v):
            return _Failure((node, "form", None, ""))
        args.append(v)
    try:
        v = fn(*args)
    except (TypeError, ValueError, OverflowError):
        return _Failure((node, "form", None, ""))
    if isinstance(v, bool) or (isinstance(v, float) and math.isfinite(v)) or \
            (type(v) is int and -(1 << 63) <= v < (1 << 63)):
        return v
    return _Failure((node, "form", None, ""))


_COMPARE_OPS = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
                ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b}


def _is_number(v) -> bool:
    return isinstance(v, (bool, int, float))


def _resolve_logic(ctx, node: ast.AST):
    """Comparisons, and / or / not and `a if c else b` of compile-time numbers, with Python's
    meaning (`16 if N > 8 else 8`); only the branch or operand Python would evaluate is resolved."""
    if isinstance(node, ast.IfExp):
        c = _resolve(ctx, node.test)
        if type(c) is _Failure or not _is_number(c):
            return c if type(c) is _Failure else _Failure((node, "form", None, ""))
        return _resolve(ctx, node.body if c else node.orelse)
    if isinstance(node, ast.UnaryOp):
        v = _resolve(ctx, node.operand)
        return v if type(v) is _Failure else (not v) if _is_number(v) else _Failure((node, "form", None, ""))
    if isinstance(node, ast.BoolOp):
        v = None
        for operand in node.values:
            v = _resolve(ctx, operand)
            if type(v) is _Failure or not _is_number(v):
                return v if type(v) is _Failure else _Failure((node, "form", None, ""))
            if bool(v) == isinstance(node.op, ast.Or):      # `or` stops at a true operand, `and` at a false one
                return v
        return v
    left = _resolve(ctx, node.left)
    for op, right_node in zip(node.ops, node.comparators):
        right = _resolve(ctx, right_node)
        for v in (left, right):
            if type(v) is _Failure:
                return v
        if not (_is_number(left) and _is_number(right)) or type(op) not in _COMPARE_OPS:
            return _Failure((node, "form", None, ""))
        if not _COMPARE_OPS[type(op)](left, right):
            return False
        left = right
    return True


# Arithmetic a compile-time value may be written with (`N * 2`, `SCALE / 2` for an attribute
# such as init_value=): integers exactly (_int_op), floats as Python's float64.
_NUMBER_OPS = {ast.Add: float.__add__, ast.Sub: float.__sub__, ast.Mult: float.__mul__, ast.Div: float.__truediv__,
               ast.FloorDiv: float.__floordiv__, ast.Mod: float.__mod__}


def _float_op(op: type, a, b):
    """`a op b` in float64 when either is a float (and neither a bool), else None (also for a
    division by zero or an overflow)."""
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b)):
        return None
    try:
        return _NUMBER_OPS[op](float(a), float(b))
    except (ZeroDivisionError, OverflowError):
        return None


# Integer arithmetic a compile-time value may be written with (`N * 2`, `(N - 1) // 4`): the
# DSL's own operators on ints, with Python's meaning (floor division and modulo).
_INT_ONLY_OPS = {ast.BitAnd: int.__and__, ast.BitOr: int.__or__, ast.BitXor: int.__xor__, ast.LShift: int.__lshift__,
                 ast.RShift: int.__rshift__}
_INT_OPS = {ast.Add: int.__add__, ast.Sub: int.__sub__, ast.Mult: int.__mul__, ast.FloorDiv: int.__floordiv__,
            ast.Mod: int.__mod__, **_INT_ONLY_OPS}


def _int_op(op: type, a, b):
    """`a op b` for two ints (not bools) and an operator of _INT_OPS, when the result fits in
    int64 (the DSL's integers); else None (also for a division or modulo by zero, left to the
    checks of the expression it stays)."""
    if type(a) is not int or type(b) is not int or op not in _INT_OPS:
        return None
    if op in (ast.FloorDiv, ast.Mod) and b == 0:
        return None
    if op in (ast.LShift, ast.RShift) and b < 0:
        return None                        # a negative count: left to the run's check
    if op is ast.LShift and b >= 64:
        return 0 if a == 0 else None       # (never builds a huge int)
    v = _INT_OPS[op](a, b)
    return v if _INT64_MIN <= v < _INT64_END else None


_INT64_MIN, _INT64_END = -(1 << 63), 1 << 63


def fold_failure(ctx, node: ast.AST):
    """Why `node`, an operator applied to compile-time integers, has no compile-time value, as
    (message, help); None when an operand is not a compile-time integer, or the result is one.
    Each operation of compile-time integers is Python's, exact, and must give an int64: the parser
    refuses the others rather than let the run wrap them (`(1 << 64) + 2` is not 2). Floats keep
    their run-time IEEE meaning (`1.0 / 0.0` is inf)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = try_eval_py(ctx, node.operand, None)
        if type(v) is int and v == _INT64_MIN:
            return _beyond_int64(node)
        return None
    if not isinstance(node, ast.BinOp) or type(node.op) not in _INT_OPS and not isinstance(node.op, ast.Div):
        return None
    a, b = try_eval_py(ctx, node.left, None), try_eval_py(ctx, node.right, None)
    if type(a) is not int or type(b) is not int:
        return None
    op, text = type(node.op), ast.unparse(node)
    if op in (ast.Div, ast.FloorDiv, ast.Mod) and b == 0:
        return (f"'{text}' divides by zero",
                "compile-time values follow Python, where this raises ZeroDivisionError: fix the divisor")
    if op in (ast.LShift, ast.RShift) and b < 0:
        return (f"'{text}' shifts by a negative count",
                "compile-time values follow Python, where this raises ValueError: shift by 0 or more")
    if op in _INT_OPS and _int_op(op, a, b) is None:
        return _beyond_int64(node)
    return None


def _beyond_int64(node: ast.AST):
    return (f"'{ast.unparse(node)}' does not fit in 64 bits",
            "DSL integers are int64: each step of compile-time arithmetic must stay between -2**63 and 2**63 - 1")


def _pipe_buffer_base(ctx, node: ast.Attribute):
    """``buf.base`` of a ``pl.reserve_buffer`` / ``pl.import_peer_buffer`` result (anchor_features §8):
    the literal base (-1 = pl.AUTO); an import takes the base its peer's reservation writes.

        buf = pl.reserve_buffer(name="ring", size=4096, base=256);  buf.base  ->  256
    """
    d = getattr(ctx, "defs", {}).get(ctx.lookup(node.value.id))
    callee = getattr(d, "callee", "") if d is not None else ""
    if callee == "system.reserve_buffer":
        return d.attrs["base"]
    if callee == "system.import_peer_buffer":
        return peer_reserve_base(ctx, d.attrs["peer_func"], d.attrs["name"])
    return _Failure((node, "local", None, ""))


def reservation(fn_node: ast.FunctionDef, name: str):
    """The reserve_buffer(name=<name>, ...) call in the body of `fn_node`, or None."""
    for n in ast.walk(fn_node):
        if isinstance(n, ast.Call):
            f = n.func
            fname = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if fname == "reserve_buffer" and any(kw.arg == "name" and isinstance(kw.value, ast.Constant)
                                                 and kw.value.value == name for kw in n.keywords):
                return n
    return None


def peer_reserve_base(ctx, peer: str, name: str) -> int:
    """The literal base (-1 = pl.AUTO) of the buffer `name` that program function `peer` reserves
    (the import was checked to have one), read from the peer's source, so parse order is irrelevant."""
    call = reservation(ctx.prog.sigs[peer].node, name)
    for kw in call.keywords:
        if kw.arg == "base":
            base = try_eval_py(ctx, kw.value, None)
            return base if type(base) is int else -1
    return -1


def eval_py(ctx, node: ast.AST):
    """The Python value of a Name / Attribute chain / Constant in the parser's Python scope."""
    v = _resolve(ctx, node)
    if type(v) is _Failure:
        raise PyEvalFailure(*v)
    return v


def try_eval_py(ctx, node: ast.AST, default=_MISSING):
    """eval_py, or `default` when the node is not a compile-time value."""
    v = _resolve(ctx, node)
    return default if type(v) is _Failure else v


def constant_sequence_node(ctx, node: ast.AST) -> ast.AST:
    """A name or expression whose compile-time value is a list or tuple (`SHAPE = [16, 16]` at module
    level) -> the list literal it stands for, each element a constant located at `node`; any other
    node as it is. The callers then read it as if the literal had been written there.

        pl.Tensor[SHAPE, pl.FP32]  reads as  pl.Tensor[[16, 16], pl.FP32]
    """
    if isinstance(node, (ast.List, ast.Tuple)) or not isinstance(node, (ast.Name, ast.Attribute)) \
            or (isinstance(node, ast.Name) and ctx.lookup(node.id) is not None):     # a DSL value of that name
        return node
    v = try_eval_py(ctx, node, None)
    if not isinstance(v, (list, tuple)):
        return node
    out = ast.List(elts=[ast.copy_location(ast.Constant(value=plain_number(x)), node) for x in v], ctx=ast.Load())
    return ast.copy_location(out, node)


def dotted(node: ast.AST) -> str:
    """'pl.tile.add' for an attribute chain (for messages); '' otherwise."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr}" if base else ""
    return ""


def attrs_dict(ctx, node: ast.AST) -> dict:
    """`attrs={"key": constant, ...}` (pl.range, @pl.function, calls to program functions)."""
    try:
        attrs = eval_py(ctx, node) if not isinstance(node, ast.Dict) else _dict_lit(ctx, node)
    except PyEvalFailure:
        attrs = None
    if not isinstance(attrs, dict):
        raise ctx.error(node, "attrs= must be a dict literal of constants")
    return attrs


def int_list(ctx, node: ast.AST, option: str) -> list:
    """`[0, 2]`: a list literal of int constants (typed pass results such as
    ``group_waits=[0]`` on @pl.function or ``inplace_carries=[0]`` on pl.range)."""
    if isinstance(node, (ast.List, ast.Tuple)):
        vals = [e.value if isinstance(e, ast.Constant) else None for e in node.elts]
        if all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in vals):
            return vals
    raise ctx.error(node, f"{option}= must be a list literal of non-negative ints, e.g. {option}=[0, 1]")


def _dict_lit(ctx, node: ast.Dict):
    out = {}
    for k, v in zip(node.keys, node.values):
        if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
            raise ctx.error(k or node, "attrs= keys must be strings")
        val = eval_py(ctx, v)
        if k.value == "split" and isinstance(val, SplitMode):   # spec anchor_features §5: NONE dropped, else int
            if val is SplitMode.NONE:
                continue
            val = val.value
        if not isinstance(val, (bool, int, float, str)):
            raise ctx.error(v, "attrs= values must be bool, int, float or str constants")
        out[k.value] = val
    return out
