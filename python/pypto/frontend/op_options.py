"""Parse-time checks of op keywords from the reference DSL (spec/anchor_features.md).

    pl.create_tensor([16, 16], dtype=pl.FP32, init_value=0.25)   attrs["init_value"] = 0.25 (float64)

The dtype-dependent rules (integral values for integer dtypes, zero for FP16 / BF16) live in
the op's C++ type rule, so IR built without the parser is checked too.
"""

from __future__ import annotations

import ast
import math

from pypto.frontend.pyeval import PyEvalFailure, eval_py, peer_reserve_base, reservation as _reservation, try_eval_py
from pypto.frontend.diagnostics import a_or_an

_INIT_HELP = "init_value takes an int or float constant, e.g. init_value=0 or init_value=-1.5"


def init_value(ctx, node: ast.AST) -> float:
    """``init_value=<node>`` of pl.create_tensor: a finite int or float constant -> float64.

        init_value(ctx, <ast of 7>)  ->  7.0
    """
    try:
        v = eval_py(ctx, node)
    except PyEvalFailure:
        raise ctx.error(node, f"init_value must be a compile-time constant, got '{ast.unparse(node)}'",
                        help=_INIT_HELP + "; to fill with a run-time value use a pl.full kernel") from None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ctx.error(node, f"init_value must be an int or float constant, got {type(v).__name__} "
                        f"'{ast.unparse(node)}'", help=_INIT_HELP)
    if isinstance(v, float) and not math.isfinite(v):
        raise ctx.error(node, f"init_value {v} is not finite", help=_INIT_HELP)
    if isinstance(v, int) and abs(v) > 2 ** 53:
        raise ctx.error(node, f"init_value {v} is beyond +-2^53 and cannot be represented exactly",
                        help="the fill value travels as a float64; an init_value must lie within +-2^53")
    return float(v)


# The tensor.<op> mirrors of tile ops (src/ir/ops/tensor_compute_ops.cpp, spec anchor_features §9).
TENSOR_COMPUTE_OPS = frozenset("tensor." + n for n in (
    "add", "sub", "mul", "div", "maximum", "minimum", "adds", "subs", "muls", "divs", "maximums", "minimums",
    "exp", "log", "sqrt", "rsqrt", "recip", "neg", "abs", "relu", "row_max", "row_sum", "row_min",
    "row_expand_add", "row_expand_sub", "row_expand_mul", "row_expand_div", "matmul", "matmul_acc", "cast", "full",
    # the reference's tensor-only names and the dispatching names of reference_ops.md §1.1
    "sin", "cos", "gather", "scatter", "scatter_update", "gather_row", "arange",
    "cmp", "concat", "fillpad", "expands", "row_prod", "col_sum", "col_max", "col_min", "col_prod",
    "row_expand", "row_expand_max", "row_expand_min", "row_expand_expdif", "col_expand", "col_expand_add",
    "col_expand_sub", "col_expand_mul", "col_expand_div", "col_expand_max", "col_expand_min",
    "col_expand_expdif", "part_add", "part_mul", "part_max", "part_min", "set_validshape", "batch_matmul"))
# A tensor op with a scalar right operand is the scalar variant: pl.add(t, 2.0) -> tensor.adds.
SCALAR_VARIANTS = {"tensor.add": "tensor.adds", "tensor.sub": "tensor.subs", "tensor.mul": "tensor.muls",
                   "tensor.div": "tensor.divs", "tensor.maximum": "tensor.maximums",
                   "tensor.minimum": "tensor.minimums"}
_KERNEL_TYPES = ("InCore", "AIC", "AIV")


def in_kernel_function(ctx) -> bool:
    """True in a kernel function (InCore, AIC, AIV): one that runs on one core."""
    return ctx.sig.ftype.name in _KERNEL_TYPES


def in_kernel_site(ctx) -> bool:
    """True in a kernel function and in the body of a CORE_GROUP pl.at or a pl.spmd scope."""
    return in_kernel_function(ctx) or \
        any(s.kind == "spmd" or (s.kind == "at" and s.level == "CORE_GROUP") for s in ctx.scopes)


def check_tensor_compute_site(ctx, node: ast.AST, op_name: str) -> None:
    """A tensor compute op (pl.add on tensors, pl.tensor.exp, ...) is valid in a kernel function
    and in the body of a CORE_GROUP pl.at or a pl.spmd scope; an orchestration computes nothing."""
    if op_name not in TENSOR_COMPUTE_OPS or ctx.sig.ftype.name in _KERNEL_TYPES:
        return
    if any(s.kind == "spmd" or (s.kind == "at" and s.level == "CORE_GROUP") for s in ctx.scopes):
        return
    if op_name == "tensor.set_validshape":   # a tile's valid region; an orchestration view has none (§10)
        raise ctx.error(node, f"tensor.set_validshape sets a kernel tile's valid region, which "
                        f"{a_or_an(ctx.sig.ftype.name)} function does not have outside a kernel scope",
                        help="call it inside the kernel that reads the tensor (an InCore function or a "
                             "`with pl.at(level=pl.Level.CORE_GROUP):` body); an orchestration view takes "
                             "pl.slice(t, shape, offset, valid_shape=[rows, cols]) instead")
    raise ctx.error(node, f"{op_name} computes on tensor data, which {a_or_an(ctx.sig.ftype.name)} function cannot do "
                    "outside a kernel scope",
                    help="wrap it in `with pl.at(level=pl.Level.CORE_GROUP):` (the body becomes a kernel), or "
                         "move it into an InCore function")


def check_tile_op_site(ctx, node: ast.AST, op_name: str, pl_name: str) -> None:
    """A tile op (pl.load, pl.store, pl.tile.full, pl.create_tile, ...) runs in a kernel: an
    Orchestration function may write one only in the body of a CORE_GROUP pl.at or a pl.spmd scope
    (where the body becomes a kernel). Refused here, at the op, rather than after the passes."""
    if not op_name.startswith("tile.") or ctx.sig.ftype.name != "Orchestration" or in_kernel_site(ctx):
        return
    raise ctx.error(node, f"pl.{pl_name} is a tile operation, which only a kernel can run; this Orchestration "
                    "code is outside a kernel scope",
                    help="wrap it in `with pl.at(level=pl.Level.CORE_GROUP):` (the body becomes a kernel), or "
                         "move it into an InCore function and call that")


# -- pipe buffers (spec anchor_features §8) -----------------------------------------------------
# import_peer_buffer's base= is ResolvePeerBufferBases' stamp (the peer's base, the typed Call.peer_base),
# accepted so printed IR re-parses.
_PIPE_KW = {"reserve_buffer": ("name", "size", "base"), "import_peer_buffer": ("name", "peer_func", "base")}


def _identifier(ctx, node: ast.AST, what: str) -> str:
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier()):
        raise ctx.error(node, f"{what}= must be a string literal naming an identifier, got '{ast.unparse(node)}'",
                        help=f'e.g. {what}="ring"')
    return node.value


def _reserves(fn_node: ast.FunctionDef, name: str) -> bool:
    return _reservation(fn_node, name) is not None


def pipe_buffer_call(ctx, node: ast.Call, kind: str, pl_name: str):
    """``pl.reserve_buffer(name=, size=, base=pl.AUTO)`` / ``pl.import_peer_buffer(name=, peer_func=)`` ->
    op ``system.<kind>`` with those attrs (Scalar[INT32]); every keyword checked here, located."""
    from pypto._core import ir
    allowed = _PIPE_KW[kind]
    if node.args:
        raise ctx.error(node.args[0], f"pl.{pl_name} takes keyword arguments only: {', '.join(allowed)}")
    kws = {}
    cpu_base = None   # ResolvePeerBufferBases' stamp, as printed: checked below
    for kw in node.keywords:
        if kw.arg == "cpu_base":
            cpu_base = kw.value
            continue
        if kw.arg not in allowed:
            raise ctx.error(kw.value if kw.arg else node, f"pl.{pl_name} has no keyword '{kw.arg}'",
                            help=f"keywords: {', '.join(allowed)}")
        kws[kw.arg] = kw.value
    for req in allowed[:2]:
        if req not in kws:
            raise ctx.error(node, f"pl.{pl_name} needs {req}=", help=f"keywords: {', '.join(allowed)}")
    in_kernel_scope = any(s.kind == "spmd" or (s.kind == "at" and s.level == "CORE_GROUP") for s in ctx.scopes)
    if ctx.sig.ftype.name not in _KERNEL_TYPES and not in_kernel_scope:
        raise ctx.error(node, f"pl.{pl_name} is only valid in a kernel function or a kernel scope body",
                        help="pipe buffers belong to the kernels of a cross-core pipe (InCore / AIC / AIV)")
    attrs = {"name": _identifier(ctx, kws["name"], "name")}
    peer_base = None   # an import's written base= (checked: the peer's): the typed Call.peer_base
    if kind == "reserve_buffer":
        size = kws["size"]
        if not (isinstance(size, ast.Constant) and type(size.value) is int and size.value > 0):
            raise ctx.error(size, f"size= must be a positive int literal (bytes), got '{ast.unparse(size)}'")
        attrs["size"] = size.value
        base = -1
        if "base" in kws:
            try:
                base = eval_py(ctx, kws["base"])
            except PyEvalFailure:
                base = None
            if type(base) is not int or base < -1:
                raise ctx.error(kws["base"], f"base= must be an int literal >= 0 or pl.AUTO, got "
                                f"'{ast.unparse(kws['base'])}'", help="pl.AUTO lets the allocator choose")
        attrs["base"] = base
    else:
        peer = _identifier(ctx, kws["peer_func"], "peer_func")
        sig = ctx.prog.sigs.get(peer)
        if sig is None or not _reserves(sig.node, attrs["name"]):
            raise ctx.error(kws["peer_func"], f"peer_func='{peer}' "
                            + ("is not a function of this program" if sig is None else
                               f"does not reserve a buffer named '{attrs['name']}'"),
                            help=f"the peer kernel must call pl.reserve_buffer(name=\"{attrs['name']}\", size=...)")
        attrs["peer_func"] = peer
        if "base" in kws:
            want = peer_reserve_base(ctx, peer, attrs["name"])
            got = try_eval_py(ctx, kws["base"], None)
            if type(got) is not int or got != want:
                raise ctx.error(kws["base"], f"base= of pl.import_peer_buffer must be the base of '{peer}'s "
                                f"reservation '{attrs['name']}' ({want}), got '{ast.unparse(kws['base'])}'",
                                help="drop base=: the compiler stamps the peer's base (ResolvePeerBufferBases)")
            peer_base = want
    if cpu_base is not None:
        base = attrs["base"] if kind == "reserve_buffer" else peer_reserve_base(ctx, attrs["peer_func"], attrs["name"])
        want = base if base >= 0 else 0
        got = try_eval_py(ctx, cpu_base, None)
        if type(got) is not int or got != want:
            raise ctx.error(cpu_base, f"cpu_base= of pl.{pl_name} must be the address the buffer binds on the CPU "
                            f"({want}: its base, 0 for pl.AUTO), got '{ast.unparse(cpu_base)}'",
                            help="drop cpu_base=: the compiler stamps it (ResolvePeerBufferBases)")
    call = ir.Call.make_op("system." + kind, [], attrs, ctx.span(node))
    if peer_base is not None:
        call = ir.with_peer_base(call, peer_base)
    return call if cpu_base is None else ir.with_cpu_base(call, want)


_INIT_PIPE_PARAMS = ("dir_mask", "slot_size", "c2v_consumer_buf", "v2c_consumer_buf")


def initialize_pipe_call(ctx, node: ast.Call, pl_name: str):
    """``pl.aic_initialize_pipe(dir_mask, slot_size, c2v_consumer_buf=0, v2c_consumer_buf=0)`` (and
    ``aiv_``) -> op ``system.<name>(c2v, v2c)`` with attrs dir_mask, slot_size; a no-op on the CPU (§8).

        pl.aiv_initialize_pipe(dir_mask=1, slot_size=512, c2v_consumer_buf=buf)
    """
    from pypto._core import ir
    from pypto.frontend.exprs import eval_expr
    op_name = "system." + pl_name.split(".")[-1]
    sig = ", ".join(_INIT_PIPE_PARAMS)
    if len(node.args) + len(node.keywords) > len(_INIT_PIPE_PARAMS):
        raise ctx.error(node, f"pl.{pl_name} takes at most 4 arguments: {sig}")
    given = {}
    for kw in node.keywords:
        if kw.arg not in _INIT_PIPE_PARAMS:
            raise ctx.error(kw.value if kw.arg else node, f"pl.{pl_name} has no keyword '{kw.arg}'",
                            help=f"parameters: {sig}")
        given[kw.arg] = kw.value
    # Positional arguments fill the parameters not given as keywords, in order: R's
    # (1, 512, buf, 0) and the printed form (buf, 0, dir_mask=1, slot_size=512) both parse.
    given.update(zip([p for p in _INIT_PIPE_PARAMS if p not in given], node.args))
    for req in _INIT_PIPE_PARAMS[:2]:
        if req not in given:
            raise ctx.error(node, f"pl.{pl_name} needs {req}=", help=f"parameters: {sig}")
    in_kernel_scope = any(s.kind == "spmd" or (s.kind == "at" and s.level == "CORE_GROUP") for s in ctx.scopes)
    if ctx.sig.ftype.name not in _KERNEL_TYPES and not in_kernel_scope:
        raise ctx.error(node, f"pl.{pl_name} is only valid in a kernel function or a kernel scope body",
                        help="a cross-core pipe is set up by the kernels that use it (InCore / AIC / AIV)")
    attrs = {}
    for key, lo, hi, what in (("dir_mask", 1, 3, "1 (cube to vector), 2 (vector to cube) or 3 (both)"),
                              ("slot_size", 1, None, "a positive number of bytes")):
        v = try_eval_py(ctx, given[key], None)
        if type(v) is not int or v < lo or (hi is not None and v > hi):
            raise ctx.error(given[key], f"{key}= must be an int literal, {what}; got '{ast.unparse(given[key])}'")
        attrs[key] = v
    bufs = []
    for key in _INIT_PIPE_PARAMS[2:]:
        if key not in given:
            bufs.append(ir.ConstInt.make(0, ir.DataType.INT32, ctx.span(node)))   # as a literal buffer reads
            continue
        e = eval_expr(ctx, given[key])
        if not (isinstance(e.type, ir.ScalarType) and ir.is_integer(e.type.dtype)):
            raise ctx.error(given[key], f"{key}= must be an integer scalar (a pl.reserve_buffer / "
                            f"pl.import_peer_buffer result or 0), got '{ast.unparse(given[key])}'")
        if isinstance(e, ir.ConstInt) and e.type.dtype != ir.DataType.INT32:
            # A literal reads as INT32, like the default 0, so the printed form re-parses equal.
            e = ir.ConstInt.make(e.value, ir.DataType.INT32, e.span)
        bufs.append(e)
    return ir.Call.make_op(op_name, bufs, attrs, ctx.span(node))
