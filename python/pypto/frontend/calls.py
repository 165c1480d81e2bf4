"""Call handlers: ``self.kernel(...)``, ``pl.<op>(...)``, ``pl.cast``, ``pl.tensor.dim``,
``pl.system.task_dummy``, ``min``/``max``.

    c = self.kernel_add(a, b, c)      Call.make_func("kernel_add", [a, b, c], <return type>)
    t = pl.load(a, [0, 0], [16, 16])  Call.make_op("tile.load", [a, MakeTuple(0, 0), MakeTuple(16, 16)])
    x = pl.create_tensor([16], dtype=pl.FP32, manual_dep=True)
                                      tensor.create(MakeTuple(16)) attrs {"dtype": "FP32", "manual_dep": True}
"""

from __future__ import annotations

import ast
import builtins
import enum
import functools
import types

from pypto._core import ir
from pypto.errors import PyptoError
from pypto.frontend import irtypes, registry
from pypto.frontend.annotations import ir_dtype
from pypto.frontend.call_binding import bind, parameter_of, require
from pypto.frontend.diagnostics import NoDepInManualScopeWarning, a_or_an, did_you_mean
from pypto.frontend.dumps import dump_vars_of_attrs, with_tags
from pypto.frontend.exprs import eval_arg, eval_expr, scalar_operand
from pypto.frontend.op_options import (SCALAR_VARIANTS, check_tensor_compute_site, check_tile_op_site, in_kernel_function,
                                        in_kernel_site, init_value, initialize_pipe_call, pipe_buffer_call)
from pypto.frontend.pyeval import PyEvalFailure, attrs_dict, constant_sequence_node, dotted, eval_py, try_eval_py
from pypto.frontend.scalar_builtins import SCALAR_BUILTINS, scalar_builtin_call
from pypto.frontend.shape_access import len_call
from pypto.language import _types as T
from pypto.language._builtins import UNIFIED_OPS, Builtin, Namespace, OpSpec

_CONTEXT_ONLY = {
    "range": "pl.range(...) is only valid as the iterable of a for statement",
    "parallel": "pl.parallel(...) is only valid as the iterable of a for statement",
    "yield": "pl.yield_(...) must be the last statement of a loop or branch body",
    "manual_scope": "pl.manual_scope() is only valid in a with statement",
    "scope": "pl.scope() is only valid in a with statement",
    "at": "pl.at(...) is only valid in a with statement",
    "spmd": "pl.spmd(...) is only valid in a with statement or as the iterable of a for statement",
    "cluster": "pl.cluster() is only valid in a with statement",
    "no_dep": "pl.no_dep(x) is only valid as an argument of a kernel call or pl.submit",
    "dump_tag": "pl.dump_tag(x) is a statement: write it on its own line",
}



# The typed bool pass results printed as op keywords (only when True): keyword -> (the op that
# carries it, the pass that stamps it, the IR setter).
_BOOL_STAMPS = {
    "shares_source_tile": ("tile.move", "KernelShareTileMoves", lambda c, v: ir.with_shares_source_tile(c, v)),
    "reads_in_place": ("tile.load", "KernelInPlaceMatmulLoads", lambda c, v: ir.with_reads_in_place(c, v)),
}

def kernel_ref(ctx, node: ast.AST, what: str):
    """`self.<name>` -> the callee's FunctionSig (unknown name -> did-you-mean error)."""
    if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"):
        raise ctx.error(node, f"{what} must be a function of this program, written self.<name>",
                        help=f"e.g. pl.submit(self.kernel, x, out)")
    sig = ctx.prog.sigs.get(node.attr)
    if sig is None:
        raise ctx.error(node, f"unknown function 'self.{node.attr}' in this program",
                        help=did_you_mean(node.attr, ctx.prog.sigs) or
                        "define it as a @pl.function method of the @pl.program class")
    return sig


def refuse_in_kernel_function(ctx, node: ast.AST, what: str) -> None:
    """A kernel function (InCore / AIC / AIV) runs on one core: it computes with tile ops on its
    tensor parameters and starts no other function or task. `what` names the call refused."""
    if in_kernel_function(ctx):
        raise ctx.error(node, f"{what} in {a_or_an(ctx.sig.ftype.name)} function ('{ctx.sig.name}'): a kernel cannot call "
                        "functions or submit tasks",
                        help="call or submit it from the orchestration function; inside a kernel, compute with "
                             "tile ops (pl.load, pl.add, pl.store, ...)")


# What a DSL function may call, for every "cannot call" error (one list: they differed).
CALLABLE_HELP = "calls are to self.<function>, pl.* functions, and min, max, abs, int, float, bool, len"


def resolve_callee(ctx, func: ast.AST):
    """The Python object a call's callee names (a Builtin, min/max, ...), or None for an IR value."""
    try:
        return eval_py(ctx, func)
    except PyEvalFailure as f:
        if f.reason == "attr":
            base = f.base
            if isinstance(base, (types.ModuleType, Namespace)):
                raise ctx.error(func, f"unknown DSL function '{dotted(func)}'",
                                help=_unknown_pl_function_help(func, base, f.attr))
            raise ctx.error(func, f"'{dotted(func.value)}' has no attribute '{f.attr}'") from None
        if f.reason == "unknown" and isinstance(func, ast.Name):
            raise ctx.unknown_name_error(func) from None
        raise ctx.error(func, f"cannot call '{ast.unparse(func)}'", help=CALLABLE_HELP) from None


def attr_value(ctx, node: ast.AST, name: str):
    """A Call attribute value: dtype -> "FP32", enum -> its name, bool/int/float/str as is."""
    try:
        v = eval_py(ctx, node)
    except PyEvalFailure:
        raise ctx.error(node, f"'{name}=' must be a compile-time constant, got '{ast.unparse(node)}'") from None
    if isinstance(v, T.DataType):
        return v.name
    if isinstance(v, enum.Enum):
        return v.name
    if isinstance(v, int) and not isinstance(v, bool) and not -(1 << 63) <= v < (1 << 63):
        # (found by make fuzz-programs, seed 2312: the IR builder's int64 refused it, unlocated)
        raise ctx.error(node, f"'{name}=' {v} does not fit in 64 bits",
                        help="DSL integers are int64: use a value between -2**63 and 2**63 - 1")
    if isinstance(v, (bool, int, float, str)):
        return v
    raise ctx.error(node, f"unsupported value for '{name}=': '{ast.unparse(node)}'")


# The reference's tensor-only `pl.<name>` ops (spec reference_ops.md §1.1) with no CPU meaning (the
# hardware sort, §13): the error says so instead of suggesting a look-alike name.
_REFERENCE_TILE_ONLY = {"sort32", "mrgsort"}
# Reference DSL wrappers with no op of their own here (spec reference_ops.md §13).
_REFERENCE_WRAPPERS = {
    "tile.mrgsort": "tile.mrgsort (tile.mrgsort_format1 / _format2) is an accelerator-only op (the hardware "
                    "sort-list merge) and has no CPU implementation",
}


def _unknown_pl_function_help(func: ast.AST, base, attr: str) -> str:
    """Help for an unknown `pl.<attr>`: the reference's hardware sort names say they are accelerator-only,
    anything else gets did-you-mean.

    `pl.sort32(t, idx)` -> "the reference's pl.sort32 is the hardware sort (tile.sort32), ..."."""
    if attr in _REFERENCE_TILE_ONLY and getattr(base, "__name__", "") == "pypto.language":
        return (f"the reference's {dotted(func)} is the hardware sort (tile.{attr}), an accelerator-only op with no "
                "CPU implementation: see docs/kernels.md, 'Accelerator-only ops'")
    return did_you_mean(attr, [n for n in dir(base) if not n.startswith("_")])


def _check_op_exists(ctx, node, op_name: str):
    info = ir.op_info(op_name)
    if info is not None and info.doc.startswith("Accelerator-only"):
        ir.Call.make_op(op_name, [], {}, ctx.span(node))   # its type rule refuses it, whatever the arguments
    if info is None:
        if op_name in _REFERENCE_WRAPPERS:
            raise ctx.error(node, _REFERENCE_WRAPPERS[op_name],
                            help="see docs/kernels.md, 'Accelerator-only ops', for the CPU equivalents")
        raise ctx.error(node, f"unknown op '{op_name}'", help=did_you_mean(op_name, ir.op_names()))


def op_call(ctx, node: ast.Call, spec: OpSpec, pl_name: str, evaluated: dict | None = None):
    """pl.<op>(...) -> Call.make_op, splitting expression args from attrs per the OpSpec.
    `evaluated` maps argument nodes already evaluated (by unified_call) to their IR value."""
    _check_op_exists(ctx, node.func, spec.op)
    check_tensor_compute_site(ctx, node, spec.op)
    check_tile_op_site(ctx, node, spec.op, pl_name)
    if spec.op in ("tile.scatter_update", "tensor.scatter_update"):
        node = _scatter_update_dim_first(ctx, node)
    if not spec.params:
        info = ir.op_info(spec.op)     # an op without a listed signature: use the registry's
        spec = OpSpec(spec.op, list(info.arg_names) + list(info.attr_names), info.attr_names)
    for a in node.args:
        if isinstance(a, ast.Starred):
            raise ctx.error(a, "*args are not supported in DSL calls")
    if len(node.args) > len(spec.params):
        raise ctx.error(node, f"pl.{pl_name} takes at most {len(spec.params)} positional arguments "
                        f"({', '.join(spec.params)}), got {len(node.args)}")
    args, attrs, arg_nodes = [], {}, []
    named = list(zip(spec.params, node.args))
    stamps = {}   # typed bool pass results as printed IR spells them: keyword -> value
    for kw in node.keywords:
        stamp = _BOOL_STAMPS.get(kw.arg)
        if stamp and spec.op == stamp[0]:
            if not (isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, bool)):
                raise ctx.error(kw.value, f"{kw.arg}= takes True or False",
                                help=f"it is the {stamp[1]} result as printed IR spells it")
            stamps[kw.arg] = kw.value.value
            continue
        if kw.arg is None:
            raise ctx.error(kw.value, "**kwargs are not supported in DSL calls")
        pname = parameter_of(spec, kw.arg)
        if pname is None:
            raise ctx.error(kw.value, f"pl.{pl_name} has no parameter '{kw.arg}'",
                            help=did_you_mean(kw.arg, spec.params) or f"parameters: {', '.join(spec.params)}")
        if any(p == pname for p, _ in named):
            raise ctx.error(kw.value, f"pl.{pl_name} got '{kw.arg}' twice"
                            + (f": it names the parameter '{pname}', already given" if pname != kw.arg else ""))
        named.append((pname, kw.value))
    named.sort(key=lambda pn: spec.params.index(pn[0]))
    # A module constant holding a list (`SHAPE = [16, 16]`) is the list literal it stands for.
    named = [(p, a if evaluated and a in evaluated else constant_sequence_node(ctx, a)) for p, a in named]
    # An optional trailing argument written as None is left out (valid_shapes=None: the default).
    named = [(p, a) for p, a in named if not ((p in _OPTIONAL_NONE or (p, spec.op) == ("shapes", "tile.store"))
                                              and isinstance(a, ast.Constant) and a.value is None)]
    if spec.op == "tensor.slice":
        _check_slice_literals(ctx, named)
    shapes_node = dict(named).get("shapes") if spec.op == "tile.store" else None
    if shapes_node is not None and isinstance(try_eval_py(ctx, shapes_node, None), T.AtomicType):
        # the 4th positional argument was atomic= before (the reference makes it keyword-only)
        raise ctx.error(shapes_node, "pl.store: the 4th argument is shapes=; atomic= is keyword-only, as in the "
                        "reference", help=f"write pl.store(tile, offsets, tensor, atomic={ast.unparse(shapes_node)})")
    for pname, anode in named:
        if pname == "init_value" and spec.op == "tensor.create":
            attrs[pname] = init_value(ctx, anode)
        elif pname == "drop_dims":
            attrs[pname] = _drop_dims(ctx, node, anode, spec.op)
        elif pname == "pad_value" and spec.op in _FILLPAD_OPS:
            attrs[pname] = _fillpad_pad_value(ctx, anode, pl_name)
        elif pname in spec.attrs:
            attrs[pname] = attr_value(ctx, anode, pname)
            if pname in _LAYOUT_HINTS.get(spec.op, ()):
                del attrs[pname]          # a layout hint: no effect on the CPU
        elif pname in _SCRATCH_ONLY.get(spec.op, ()):
            _check_scratch(ctx, anode, evaluated[anode] if evaluated and anode in evaluated else eval_arg(ctx, anode),
                           args[0], pl_name, pname)
        elif evaluated and anode in evaluated:
            args.append(evaluated[anode])
            arg_nodes.append(anode)
        else:
            args.append(eval_arg(ctx, anode))
            arg_nodes.append(anode)
    if spec.op == "tile.store" and len(args) == 4:
        args = [_store_block(ctx, arg_nodes[3], args[0], args[3])] + args[1:3]
    if spec.op == "tile.load" and len(args) == 4 and _same_extents(args[2], args[3]):
        args = args[:3]    # valid_shapes equal to shapes is the default (the printer leaves it out)
    args = _single_index_as_list(spec.op, args)
    try:
        call = ir.Call.make_op(spec.op, args, attrs, ctx.span(node))
    except PyptoError:
        if spec.op.startswith("tile."):
            for anode, a in zip(arg_nodes, args):
                _refuse_full_as_tile(ctx, anode, a, spec.op)
        raise
    for name, value in stamps.items():
        if value:
            call = _BOOL_STAMPS[name][2](call, True)
    if spec.op == "tensor.slice":
        _warn_slice_overhang(ctx, node, call)
    if spec.op in ("tensor.slice", "tile.slice", "tile.load") and attrs.get("pad_value", "null") != "null" \
            and len(args) < 4:
        ctx.src.warn(node, f"pad_value={attrs['pad_value']} without valid_shape= has no effect: every element of the "
                     "slice is valid")
    return call


def _store_block(ctx, node, tile, shapes):
    """``pl.store(t, offsets, y, shapes=S)`` (the reference's extent of the stored block): the tile
    itself when S is its shape, else its top-left S block, which is the tile with valid region S
    (a store writes only the valid region).

        pl.store(t, [0, 0], y, shapes=[4, 16])   # t: Tile[[16, 16]] -> rows 0..3 of t into y[0:4, 0:16]
    """
    if not isinstance(shapes, ir.MakeTuple):
        raise ctx.error(node, f"pl.store: shapes= must be a list of extents, got '{ast.unparse(node)}'",
                        help="e.g. shapes=[16, 16]; leave it out to store the whole tile")
    ttype = tile.type
    if not isinstance(ttype, ir.TileType):
        return tile                      # the op's own check names the wrong argument
    if len(shapes.elements) != len(ttype.shape):
        raise ctx.error(node, f"pl.store: shapes= has {len(shapes.elements)} "
                        f"entr{'y' if len(shapes.elements) == 1 else 'ies'} for a tile of rank {len(ttype.shape)}",
                        help="give one extent per tile axis")
    if _same_extents(ir.MakeTuple.make(list(ttype.shape), shapes.span), shapes):
        return tile
    for axis, (s, d) in enumerate(zip(shapes.elements, ttype.shape)):
        if isinstance(s, ir.ConstInt) and isinstance(d, ir.ConstInt) and not 0 <= s.value <= d.value:
            raise ctx.error(node, f"pl.store: shapes= extent {s.value} of axis {axis} is outside the tile's "
                            f"[0, {d.value}]", help="the stored block is a part of the tile, from its first element")
    if len(ttype.shape) != 2:
        raise ctx.error(node, "pl.store: a shapes= smaller than the tile needs a 2-D tile",
                        help="store the whole tile, or reshape it to 2-D first")
    if ttype.valid_shape and not _same_extents(ir.MakeTuple.make(list(ttype.valid_shape), shapes.span), ir.MakeTuple.make(list(ttype.shape), shapes.span)):
        raise ctx.error(node, "pl.store: shapes= on a tile that already has a valid region",
                        help="set the stored block with pl.set_validshape or pl.slice(t, shape, offset, valid_shape=...)")
    zeros = ir.MakeTuple.make([ir.ConstInt.make(0, ir.DataType.INDEX, shapes.span)] * 2, shapes.span)
    return ir.Call.make_op("tile.slice", [tile, ir.MakeTuple.make(list(ttype.shape), shapes.span), zeros, shapes], {}, shapes.span)


_OPTIONAL_NONE = ("valid_shapes", "valid_shape", "drop_dims", "pad_value", "tmp", "tmp_tile")
_FILLPAD_OPS = ("tile.fillpad", "tile.fillpad_inplace", "tensor.fillpad")
_FILLPAD_HINT = "use pl.PadValue.zero / .max / .min, or the shorthands 0, 0.0, math.inf, -math.inf"


def _fillpad_pad_value(ctx, node, pl_name: str) -> str:
    """``pad_value=`` of fillpad (reference_ops.md §9): a ``pl.PadValue`` or a shorthand -> "zero" / "max" / "min".

    ``0`` and ``0.0`` -> "zero", ``math.inf`` -> "max", ``-math.inf`` -> "min"; the printed IR form
    ("zero", ...) re-parses. ``PadValue.null``, other numbers, NaN and bools are located errors."""
    try:
        v = eval_py(ctx, node)
    except PyEvalFailure:
        raise ctx.error(node, f"pl.{pl_name}: pad_value must be a compile-time constant, got '{ast.unparse(node)}'",
                        help=_FILLPAD_HINT) from None
    if isinstance(v, T.PadValue) and v is not T.PadValue.null:
        return v.name
    if isinstance(v, str) and v in ("zero", "max", "min"):
        return v
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        if v == 0:
            return "zero"
        if v == float("inf"):
            return "max"
        if v == float("-inf"):
            return "min"
    what = "PadValue.null (no pad value)" if v is T.PadValue.null else ast.unparse(node)
    raise ctx.error(node, f"pl.{pl_name}: pad_value {what} is not a fill value", help=_FILLPAD_HINT)


def _drop_dims(ctx, call_node, node, op_name: str) -> list:
    """``drop_dims=[0, ..]``: a list of int literals -> ConstInt attr entries. Orchestration views keep
    their rank, so a tensor slice drops axes only where it becomes a kernel load (anchor_features §10)."""
    if not isinstance(node, (ast.List, ast.Tuple)):
        raise ctx.error(node, f"drop_dims= must be a list of axis numbers, got '{ast.unparse(node)}'",
                        help="e.g. drop_dims=[0]")
    out = []
    for el in node.elts:
        v = try_eval_py(ctx, el, None)
        if isinstance(v, bool) or not isinstance(v, int):
            raise ctx.error(el, f"drop_dims entries must be int literals, got '{ast.unparse(el)}'")
        out.append(ir.ConstInt.make(v, ir.DataType.INDEX, ctx.span(el)))
    if op_name == "tensor.slice" and not in_kernel_site(ctx):
        # Decision (docs/dsl.md, drop_dims=): anchor_features §10 gives an orchestration slice only its
        # shape and offsets, and the runtime's Tensor::view keeps the rank (reshape needs a contiguous
        # view), so the generated C++ cannot drop an axis and still compile against the real runtime.
        raise ctx.error(node, "drop_dims= of pl.tensor.slice is only supported inside kernels (where the slice "
                        "becomes a load); an orchestration view keeps its rank: the runtime's Tensor::view cannot "
                        "drop an axis",
                        help="slice without drop_dims and pass the view to a kernel whose parameter keeps the axis "
                             "(or drop it there: a kernel-side pl.tensor.slice(..., drop_dims=) is a load); for a "
                             "contiguous slice, pl.reshape(view, shape) removes the axis")
    return out


def _scatter_update_dim_first(ctx, node: ast.Call) -> ast.Call:
    """The reference's other form `pl.tile.scatter_update(input, dim, index, src)` (reference_ops.md §12)
    -> `(input, index, src, dim=dim)`: four positional arguments whose second is a constant int."""
    if len(node.args) != 4 or isinstance(try_eval_py(ctx, node.args[1], None), bool) \
            or not isinstance(try_eval_py(ctx, node.args[1], None), int):
        return node
    a = node.args
    call = ast.Call(func=node.func, args=[a[0], a[2], a[3]], keywords=list(node.keywords) + [ast.keyword("dim", a[1])])
    return ast.copy_location(call, node)


# Reference arguments that only steer the accelerator (reference_ops.md §2): accepted, checked, dropped.
_LAYOUT_HINTS = {"tile.move": ("blayout", "slayout")}
_SCRATCH_ONLY = {"tile.rsqrt": ("tmp",), "tensor.rsqrt": ("tmp",)}


def _check_scratch(ctx, node, value, first, pl_name: str, pname: str):
    """A scratch operand the CPU ignores must still have the first operand's kind, shape and dtype.

    `pl.rsqrt(t, tmp)` with tmp a tile like t -> fine; with a scalar -> located error."""
    same = (type(value.type) is type(first.type) and hasattr(value.type, "shape")
            and value.type.dtype == first.type.dtype
            and len(value.type.shape) == len(first.type.shape)
            and all(ir.structural_equal(a, b) for a, b in zip(value.type.shape, first.type.shape)))
    if not same:
        raise ctx.error(node, f"pl.{pl_name}: '{pname}' must have the operand's type {irtypes.describe(first.type)}, "
                        f"got {irtypes.describe(value.type)}", help=f"'{pname}' is scratch space; it may be left out")


def _same_extents(a, b) -> bool:
    """Two extent lists (MakeTuples) with equal constants or the same values per entry."""
    if not isinstance(a, ir.MakeTuple) or not isinstance(b, ir.MakeTuple) or len(a.elements) != len(b.elements):
        return False
    for x, y in zip(a.elements, b.elements):
        if isinstance(x, ir.ConstInt) and isinstance(y, ir.ConstInt):
            if x.value != y.value:
                return False
        elif not ir.structural_equal(x, y):
            return False
    return True


def _warn_slice_overhang(ctx, node, call):
    """A static slice that starts inside the tensor but runs past its end is clamped at run time
    (spec anchor_features §18); one that starts at or past the end is a type error already."""
    src, shapes, offsets = call.args[0], call.args[1], call.args[2]
    if len(call.args) > 3:
        shapes = call.args[3]            # the static check uses the valid extents (§10)
    if not isinstance(src.type, ir.TensorType) or not isinstance(shapes, ir.MakeTuple) \
            or not isinstance(offsets, ir.MakeTuple):
        return
    for axis, (d, s, o) in enumerate(zip(src.type.shape, shapes.elements, offsets.elements)):
        if all(isinstance(x, ir.ConstInt) for x in (d, s, o)) and o.value < d.value < o.value + s.value:
            ctx.src.warn(node, f"pl.tensor.slice [{o.value}, {o.value + s.value}) of dimension {axis} runs past the "
                     f"extent {d.value}: the view is clamped to {d.value - o.value} at run time and kernels see "
                     f"the smaller tensor (their loads read 0 and their stores are dropped beyond it)")


def unified_call(ctx, node: ast.Call, b: Builtin):
    """A unified op (spec anchor_features §3 / §9): `pl.reshape(x, shape)` is `pl.tensor.reshape`
    when x is a Tensor and `pl.tile.reshape` when it is a Tile (b.spec = (tensor spec, tile spec))."""
    tensor_spec, tile_spec = b.spec[0], b.spec[1]
    first = node.args[0] if node.args else _first_by_keyword(node, tensor_spec, tile_spec)
    if first is None:
        raise ctx.error(node, f"pl.{b.pl_name} needs a tensor or tile as its first argument")
    x = eval_arg(ctx, first)
    evaluated = {first: x}
    if isinstance(x.type, ir.TensorType):
        spec = tensor_spec
    elif isinstance(x.type, ir.TileType):
        spec = tile_spec
    else:
        raise ctx.error(first, f"pl.{b.pl_name} needs a tensor or a tile, got {irtypes.describe(x.type)}",
                        help=f"pl.{b.pl_name} dispatches on its first argument: Tensor -> pl.tensor.{b.pl_name}, "
                             f"Tile -> pl.tile.{b.pl_name}")
    if len(b.spec) > 2:     # an op with operands beyond the first: same kind, or a scalar
        given = list(enumerate(node.args))[1:] + [(spec.params.index(parameter_of(spec, kw.arg)), kw.value)
                                                  for kw in node.keywords if kw.value is not first
                                                  and parameter_of(spec, kw.arg or "") is not None]
        operands = [a for k, a in given
                    if not isinstance(a, (ast.List, ast.Tuple, ast.Starred))
                    and not (k < len(spec.params) and spec.params[k] in spec.attrs)]   # fillpad's pad_value
        for a in operands:
            evaluated[a] = eval_arg(ctx, a)
        if spec is tile_spec and _created_tile_as_tensor(ctx, x) is not None and \
                any(isinstance(evaluated[a].type, ir.TensorType) for a in operands):
            spec, x = tensor_spec, _created_tile_as_tensor(ctx, x)      # pl.add(pl.create_tile(...), tensor)
            evaluated[first] = x
        for a in operands:
            e = evaluated[a]
            other = ir.TileType if spec is tensor_spec else ir.TensorType
            if isinstance(e.type, other) and spec is tensor_spec and _created_tile_as_tensor(ctx, e) is not None:
                e = evaluated[a] = _created_tile_as_tensor(ctx, e)
            if isinstance(e.type, other):
                _refuse_full_as_tile(ctx, a if spec is tile_spec else first, e if spec is tile_spec else x,
                                     f"pl.{b.pl_name}")
                _refuse_created_tile_name(ctx, a if spec is tensor_spec else first, e if spec is tensor_spec else x,
                                          f"pl.{b.pl_name}")
                raise ctx.error(a, f"pl.{b.pl_name} cannot mix Tensor and Tile arguments",
                                help="load the tensor with pl.load (kernel tiles), or keep every operand a tensor")
            if spec is tensor_spec and isinstance(e.type, ir.ScalarType) and spec.op in SCALAR_VARIANTS:
                spec = OpSpec(SCALAR_VARIANTS[spec.op], spec.params, spec.attrs)
    elif spec is tensor_spec and b.pl_name == "assemble" and len(node.args) > 1:
        # A tile source written into a tensor is the store of anchor_features §9 rule 4; a pl.create_tile
        # source is the zero-filled local value it creates.
        src = node.args[1]
        evaluated[src] = eval_arg(ctx, src)
        created = _created_tile_as_tensor(ctx, evaluated[src])
        if created is not None:
            evaluated[src] = created
        elif isinstance(evaluated[src].type, ir.TileType) and not in_kernel_site(ctx):
            raise ctx.error(src, f"pl.assemble of a tile into a tensor stores it, which only a kernel can do; "
                            f"this {ctx.sig.ftype.name} code is outside a kernel scope",
                            help="write it inside `with pl.at(level=pl.Level.CORE_GROUP):` or in an InCore function")
    return op_call(ctx, node, spec, b.pl_name if spec is tile_spec else spec.op, evaluated)


def _first_by_keyword(node: ast.Call, *specs):
    """The first operand of a unified op given by keyword (`pl.add(lhs=a, rhs=b)`), or None."""
    for kw in node.keywords:
        if kw.arg is not None and any(s.params and parameter_of(s, kw.arg) == s.params[0] for s in specs):
            return kw.value
    return None


def _created_tile_as_tensor(ctx, e):
    """`pl.create_tile(shape, dtype)` (tile.create) written inline where a tensor operand is needed -> the same
    zero-filled local value as `tensor.create(shape, init_value=0)`. pl.create_tile is one of the reference's
    dispatching names (reference_ops.md §1.1, §10): in `pl.add(a, pl.create_tile([4, 8], pl.FP32))` on a tensor
    `a` in a kernel or CORE_GROUP body it is the tensor form (ConvertTensorToTileOps lowers both to a
    zero-filled tile); with tiles it stays tile.create. None for anything else, including a name bound to a
    pl.create_tile (its tile may have been written in place since: pl.tile.write) and code outside a kernel
    scope (where no tile exists)."""
    if isinstance(e, ir.Call) and e.is_op and e.callee == "tile.create" and in_kernel_site(ctx):
        return ir.Call.make_op("tensor.create", [e.args[0]], {"dtype": e.attrs["dtype"], "init_value": 0.0}, e.span)
    return None


def _refuse_created_tile_name(ctx, node, e, what: str):
    """A name bound to `pl.create_tile(...)` next to tensors: the help names the inline and tensor forms."""
    if isinstance(e, ir.Var) and isinstance(ctx.defs.get(e), ir.Call) and ctx.defs[e].is_op \
            and ctx.defs[e].callee == "tile.create":
        raise ctx.error(node, f"{what} cannot mix Tensor and Tile arguments: '{e.name}' is a tile (pl.create_tile)",
                        help="write pl.create_tile(...) inline in the tensor op (it is then the zero-filled tensor "
                             "value), or create a tensor with pl.create_tensor(shape, dtype=..., init_value=0)")


_FULL_HELP = "on tiles write pl.tile.full(shape, dtype, value)"


def _is_full_tensor(ctx, e) -> bool:
    """True when `e` is a `pl.full(...)` result (tensor.full): the call itself, a name bound to one, or a
    loop carry started from one."""
    for _ in range(1000):
        if isinstance(e, ir.IterArg):
            e = e.init
        elif isinstance(e, ir.Var):
            if e not in ctx.defs:
                return False
            e = ctx.defs[e]
        else:
            return isinstance(e, ir.Call) and e.is_op and e.callee == "tensor.full"
    return False


def _refuse_full_as_tile(ctx, node, e, what: str):
    """A `pl.full` result where a tile is needed: pl.full makes a tensor (reference_ops.md §1.1), so the
    error names the tile spelling. `pl.store(pl.full(...), ...)` -> "... write pl.tile.full(...)"."""
    if _is_full_tensor(ctx, e):
        raise ctx.error(node, f"pl.full makes a tensor (as in the reference DSL), but {what} needs a tile here",
                        help=_FULL_HELP)


def tensor_only_call(ctx, node: ast.Call, b: Builtin):
    """The reference's tensor-only names (reference_ops.md §1.1): `pl.sin(x)` on a tensor is
    `pl.tensor.sin(x)`, with the tile op's parameters; on a tile it is refused, naming the tile spelling.

    `pl.gather(src, idx)` with tensors -> tensor.gather; `pl.sin(t)` with t a tile -> "write pl.tile.sin(t)"."""
    evaluated = {}
    if b.pl_name not in ("arange", "full") and node.args and not isinstance(node.args[0], ast.Starred):
        first = node.args[0]
        x = evaluated[first] = eval_arg(ctx, first)
        if isinstance(x.type, ir.TileType):
            raise ctx.error(first, f"pl.{b.pl_name} is a tensor op (as in the reference DSL), got "
                            f"{irtypes.describe(x.type)}", help=f"on tiles write pl.tile.{b.pl_name}(...)")
        if not isinstance(x.type, ir.TensorType):
            raise ctx.error(first, f"pl.{b.pl_name} needs a tensor, got {irtypes.describe(x.type)}")
    return op_call(ctx, node, b.spec, b.pl_name, evaluated)


def _max_min(ctx, node: ast.Call, b: Builtin):
    """`pl.max` / `pl.min` (reference_ops.md §2): with a compile-time second argument or `axis=` they are
    the axis reduction; with two tiles (or two tensors) they stay element-wise (`pl.maximum`); with two
    scalars they are the scalar max / min; a tile with a run-time scalar could be read either way and is a
    located error naming both spellings.

    `pl.max(t, axis=1)` -> tile.max; `pl.max(a, b)` with tiles a, b -> tile.maximum."""
    if len(node.args) != 2 or node.keywords:
        return op_call(ctx, node, b.spec, b.pl_name)
    x = eval_arg(ctx, node.args[0])
    if isinstance(x.type, ir.ScalarType):          # two scalars: the scalar max / min
        return _min_max(ctx, node, builtins.max if b.spec.op == "tile.max" else builtins.min)
    if try_eval_py(ctx, node.args[1], None) is not None:
        return op_call(ctx, node, b.spec, b.pl_name, {node.args[0]: x})
    y = eval_arg(ctx, node.args[1])
    elementwise = UNIFIED_OPS["maximum" if b.spec.op == "tile.max" else "minimum"]
    for kind, spec in ((ir.TileType, elementwise.spec[1]), (ir.TensorType, elementwise.spec[0])):
        if isinstance(x.type, kind) and isinstance(y.type, kind):
            return op_call(ctx, node, spec, elementwise.pl_name if kind is ir.TileType else spec.op,
                           {node.args[0]: x, node.args[1]: y})
    if isinstance(y.type, ir.ScalarType):
        raise ctx.error(node.args[1], f"pl.{b.pl_name}(t, s) with a run-time scalar s is ambiguous",
                        help=f"write pl.{elementwise.pl_name}s(t, s) for the element-wise {b.pl_name}, "
                             f"or pl.{b.pl_name}(t, axis=<constant>) for the reduction")
    return op_call(ctx, node, b.spec, b.pl_name, {node.args[0]: x, node.args[1]: y})


def _read(ctx, node: ast.Call, b: Builtin):
    """`pl.read(x, indices)` dispatches on x (reference_ops.md §1.1): Tensor -> tensor.read, Tile -> tile.read.

    `pl.read(t, [i, j])` with t a tile -> `pl.tile.read(t, [i, j])`."""
    tile_spec = OpSpec("tile.read", ("tile", "indices"))
    first = node.args[0] if node.args else _first_by_keyword(node, b.spec, tile_spec)
    if first is None:
        return op_call(ctx, node, b.spec, b.pl_name)     # its own error: no tensor
    x = eval_arg(ctx, first)
    return op_call(ctx, node, tile_spec if isinstance(x.type, ir.TileType) else b.spec, b.pl_name, {first: x})


_SLICE_LIMIT = 1 << 32    # the runtime's Tensor::view takes uint32_t offsets and shapes


def _check_slice_literals(ctx, named):
    """Integer literals in pl.tensor.slice's shapes/offsets must fit the runtime's uint32 view
    (an offset of 2^32 + k would select row k; a negative one does not compile)."""
    for pname, anode in named:
        if pname not in ("shapes", "offsets") or not isinstance(anode, (ast.List, ast.Tuple)):
            continue
        for el in anode.elts:
            v = try_eval_py(ctx, el, None) if not isinstance(el, ast.Name) or ctx.lookup(el.id) is None else None
            if isinstance(v, bool) or not isinstance(v, int):
                continue
            if v < 0:
                raise ctx.error(el, f"pl.tensor.slice {pname[:-1]} {v} is negative",
                                help="slice offsets and extents are at least 0")
            if v >= _SLICE_LIMIT:
                raise ctx.error(el, f"pl.tensor.slice {pname[:-1]} {v} does not fit the runtime's 32-bit view "
                                f"(limit {_SLICE_LIMIT - 1})", help="tensor views address fewer than 2^32 "
                                "elements per dimension")


_CAST_MODES = ("none", "rint", "round", "floor", "ceil", "trunc", "odd")
_FLOAT_DTYPES = ("FP16", "BF16", "FP32")

def _cast_mode(ctx, node):
    """mode= of pl.cast: a mode name or its number 0..6 -> the name."""
    try:
        v = eval_py(ctx, node)
    except PyEvalFailure:
        v = None
    if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < len(_CAST_MODES):
        return _CAST_MODES[v]
    if isinstance(v, str) and v in _CAST_MODES:
        return v
    raise ctx.error(node, f"unknown cast mode {ast.unparse(node)}",
                    help="mode is one of " + ", ".join(f'"{m}"' for m in _CAST_MODES) + " (or 0..6)")


_INT_RANGES = {"INT8": (-2**7, 2**7 - 1), "INT16": (-2**15, 2**15 - 1), "INT32": (-2**31, 2**31 - 1),
               "INT64": (-2**63, 2**63 - 1), "UINT8": (0, 2**8 - 1), "UINT16": (0, 2**16 - 1),
               "UINT32": (0, 2**32 - 1), "UINT64": (0, 2**63 - 1), "INDEX": (-2**63, 2**63 - 1)}


def _const(ctx, node: ast.Call):
    """`pl.const(value, dtype)`: a compile-time number typed as `dtype` (reference_ops.md §10).

    `pl.tile.write(t, [0, 0], pl.const(1, pl.INT32))` writes an INT32 1 (a bare `1` is INDEX).
    The IR form is the scalar cast of the literal, which prints as `pl.cast(1, pl.INT32)`."""
    if len(node.args) != 2 or node.keywords:
        raise ctx.error(node, "pl.const takes a number and a dtype: pl.const(1, pl.INT32)")
    try:
        v = eval_py(ctx, node.args[0])
    except PyEvalFailure:
        v = None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ctx.error(node.args[0], f"pl.const needs a compile-time number, got '{ast.unparse(node.args[0])}'",
                        help="for a run-time value write pl.cast(x, dtype)")
    dt = ir_dtype(ctx, node.args[1])
    if dt.name in _INT_RANGES:
        lo, hi = _INT_RANGES[dt.name]
        if not isinstance(v, int):
            raise ctx.error(node.args[0], f"pl.const: {v!r} is not an integer, but the dtype is {dt.name}",
                            help="write an integer literal, or use a float dtype")
        if not lo <= v <= hi:
            raise ctx.error(node.args[0], f"pl.const: {v} does not fit in {dt.name} ({lo}..{hi})")
        literal = ir.ConstInt.make(v, ir.DataType.INDEX, ctx.span(node.args[0]))
    elif dt.name in _FLOAT_DTYPES:
        literal = ir.ConstFloat.make(float(v), ir.DataType.FP32, ctx.span(node.args[0]))
    else:
        raise ctx.error(node.args[1], f"pl.const needs an integer or float dtype, got {dt.name}")
    if literal.type.dtype == dt:
        return literal
    return ir.Cast.make(literal, dt, ctx.span(node))


_CAST_USAGE = 'pl.cast(x, pl.FP32, mode="round")'


def _cast(ctx, node: ast.Call, b: Builtin):
    """pl.cast(tile, target_type, mode="round") (the reference's names; a scalar or tensor works too)."""
    bound = bind(ctx, node, b.pl_name, ("tile", "target_type", "mode"), usage=_CAST_USAGE)
    x_node, dt_node = require(ctx, node, bound, ("tile", "target_type"), "pl.cast takes a value and a dtype: "
                              "pl.cast(x, pl.FP32)", _CAST_USAGE)
    mode_node = bound.get("mode")
    mode = _cast_mode(ctx, mode_node) if mode_node is not None else None
    x = eval_expr(ctx, x_node)
    dt = ir_dtype(ctx, dt_node)
    if isinstance(x.type, ir.ScalarType) and b.pl_name == "cast":
        if mode not in (None, "round"):
            raise ctx.error(mode_node, "a scalar pl.cast accepts only the default mode",
                            help="cast a tile to use another rounding mode")
        return ir.Cast.make(scalar_operand(ctx, x), dt, ctx.span(node))
    if not isinstance(x.type, (ir.TileType, ir.TensorType)):
        raise ctx.error(x_node, f"pl.cast needs a scalar, a tile or a tensor, got {irtypes.describe(x.type)}")
    kind = "tile" if isinstance(x.type, ir.TileType) else "tensor"
    if kind == "tensor":      # spec anchor_features §9: kernels and CORE_GROUP bodies
        check_tensor_compute_site(ctx, node, "tensor.cast")
    # mode= on a tensor too: tensor.cast is tile.cast's mirror (its attrs included) and lowers to
    # it; the tensor form dropped the mode, so pl.cast(x, pl.INT32, mode="trunc") rounded instead.
    attrs = {"dtype": dt.name}
    if mode is not None:
        attrs["mode"] = mode
    elif (x.type.dtype.name in _FLOAT_DTYPES and dt.name not in _FLOAT_DTYPES + ("BOOL",)
          and not getattr(ctx.prog, "warned_default_round", False)):
        ctx.prog.warned_default_round = True   # once per program
        ctx.src.warn(node, f"pl.cast of a float {kind} to {dt.name} rounds to nearest (ties away from zero) by default, "
                     "as the reference compiler; it truncated before. Pass mode=\"trunc\" for the old result or "
                     "mode=\"round\" to silence this warning")
    return ir.Call.make_op(kind + ".cast", [x], attrs, ctx.span(node))


_ELEMENT_OPS = ("tensor.read", "tensor.write", "tile.read", "tile.write")


def _single_index_as_list(op: str, args: list) -> list:
    """A bare integer index of a rank-1 tensor or tile is the list of that one index
    (anchor_features §11: "or a single integer for 1-D"; reference_ops.md on read / write):
    `pl.write(t, 3, v)` is `pl.write(t, [3], v)`. Other ranks keep the op's own error."""
    if op in _ELEMENT_OPS and len(args) >= 2 and isinstance(args[1].type, ir.ScalarType):
        shape = getattr(args[0].type, "shape", None)
        if shape is not None and len(shape) == 1:
            return [args[0], ir.MakeTuple.make([args[1]], args[1].span)] + list(args[2:])
    return args


_WRITE_USAGE = "pl.write(t, [i, j], v)"


def _write(ctx, node: ast.Call):
    """pl.write(tile, indices, value) (the reference's names; `tensor=` too): tensor.write for a tensor,
    tile.write for a tile."""
    bound = bind(ctx, node, "write", ("tile", "indices", "value"), {"tensor": "tile"}, _WRITE_USAGE)
    dst_node, idx_node, value_node = require(ctx, node, bound, ("tile", "indices", "value"),
                                             "pl.write takes a tensor or tile, indices and a value", _WRITE_USAGE)
    dst = eval_expr(ctx, dst_node)
    if isinstance(dst.type, ir.TensorType):
        op = "tensor.write"
    elif isinstance(dst.type, ir.TileType):
        op = "tile.write"
    else:
        raise ctx.error(dst_node, f"pl.write needs a tensor or a tile, got {irtypes.describe(dst.type)}")
    idx = eval_arg(ctx, idx_node)
    value = eval_expr(ctx, value_node)
    return ir.Call.make_op(op, _single_index_as_list(op, [dst, idx, value]), {}, ctx.span(node))


def _dim(ctx, node: ast.Call, b: Builtin):
    bound = bind(ctx, node, b.pl_name, ("tensor", "axis"), usage="pl.tensor.dim(x, 0)")
    x_node, axis_node = require(ctx, node, bound, ("tensor", "axis"),
                                "pl.tensor.dim takes a tensor and an axis: pl.tensor.dim(x, 0)")
    x = eval_expr(ctx, x_node)
    if not isinstance(x.type, ir.TensorType):
        raise ctx.error(x_node, f"pl.tensor.dim needs a tensor, got {irtypes.describe(x.type)}")
    if ctx.is_orchestration:
        try:
            axis = eval_py(ctx, axis_node)
        except PyEvalFailure:
            axis = None
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise ctx.error(axis_node, "the axis of pl.tensor.dim must be an integer constant")
        rank = len(x.type.shape)
        if not -rank <= axis < rank:
            raise ctx.error(axis_node, f"axis {axis} is out of range for a tensor of rank {rank}")
        # Orchestration: fold onto the declared extent (ConstInt or the dynamic symbol Var).
        return x.type.shape[axis % rank]
    return op_call(ctx, node, b.spec, b.pl_name, {x_node: x})


def _task_dummy(ctx, node: ast.Call, b: Builtin):
    refuse_in_kernel_function(ctx, node.func, "pl.system.task_dummy")
    parse_deps = registry.handler("deps")
    if node.args:
        raise ctx.error(node.args[0], "pl.system.task_dummy takes only deps=[...]")
    deps, aer_dummy = None, True
    for kw in node.keywords:
        if kw.arg in ("deps", "manual_dep_edges"):
            deps, _ = parse_deps(ctx, kw.value)
        elif kw.arg == "dummy_task":
            aer_dummy = attr_value(ctx, kw.value, "dummy_task")
        else:
            raise ctx.error(kw.value, f"pl.system.task_dummy has no parameter '{kw.arg}'", help="write deps=[...]")
    if deps is None:
        raise ctx.error(node, "pl.system.task_dummy needs deps=[...]", help="e.g. pl.system.task_dummy(deps=[t1, t2])")
    return ir.Call.make_op("system.task_dummy", [], {"manual_dep_edges": deps, "dummy_task": aer_dummy},
                           ctx.span(node))


def _min_max(ctx, node: ast.Call, fn):
    if len(node.args) < 2 or node.keywords:
        raise ctx.error(node, f"{fn.__name__}() takes two or more scalar arguments")
    op = ir.BinaryOp.Min if fn is builtins.min else ir.BinaryOp.Max
    vals = []
    for a in node.args:
        e = eval_expr(ctx, a)
        if not isinstance(e.type, ir.ScalarType):
            raise ctx.error(a, f"{fn.__name__}() needs scalars, got {irtypes.describe(e.type)}",
                            help="use pl.maximum / pl.minimum for tiles")
        vals.append(scalar_operand(ctx, e))
    acc = vals[0]
    for v in vals[1:]:
        acc = ir.BinaryExpr.make(op, acc, v, ctx.span(node))
    return acc


_PARAM_OUT, _ARG_UNSET, _ARG_NODEP = ir.ParamDirection.Out, ir.ArgDirection.Unset, ir.ArgDirection.NoDep
_TASK_ID = ir.DataType.TASK_ID


def kernel_arg_nodes(ctx, call_node: ast.Call, positional, keywords, sig) -> list:
    """The argument nodes of a call to program function `sig` in parameter order: the positional
    ones, then those passed by parameter name (`self.k(x, out=y)`, as Python binds them). An
    unknown name, a parameter given twice and a parameter left out before one that is given are
    located errors; trailing ones left out are kernel_args' to judge (pl.submit's omitted outs).

        self.k(a, c=z, b=y)  ->  [a, y, z]      (k(self, a, b, c))
    """
    if not keywords:
        return list(positional)
    names = [p.name for p in sig.params]
    nodes = dict(enumerate(positional))
    for kw in keywords:
        if kw.arg is None:
            raise ctx.error(kw.value, "**kwargs are not supported in DSL calls")
        if kw.arg not in names:
            raise ctx.error(kw.value, f"'{sig.name}' has no parameter '{kw.arg}'",
                            help=did_you_mean(kw.arg, names) or f"parameters: {', '.join(names)}")
        k = names.index(kw.arg)
        if k in nodes:
            raise ctx.error(kw.value, f"'{sig.name}' got parameter '{kw.arg}' twice",
                            help="pass each argument once, by position or by name")
        nodes[k] = kw.value
    for k in range(max(nodes) + 1):
        if k not in nodes:
            raise ctx.error(call_node, f"missing argument '{names[k]}' of '{sig.name}'",
                            help="pass it by position or by name; only trailing pl.Out arguments may be left out "
                                 "(in pl.submit)")
    return [nodes[k] for k in range(len(nodes))]


def kernel_args(ctx, call_node: ast.Call, arg_nodes, sig, allow_omitted_out: bool, deferred: list | None = None):
    """Arguments of a call to program function `sig` -> (args, arg_directions).

    `pl.no_dep(x)` marks its slot NoDep (others Unset); with no NoDep the list is empty.
    With allow_omitted_out (pl.submit), trailing pl.Out parameters may be left out.
    With `deferred`, the tensor shape/dtype/direction checks are appended there (as thunks)
    instead of run, so a caller can report its other errors first.
    """
    params = sig.params
    if len(arg_nodes) > len(params) or (len(arg_nodes) < len(params) and not allow_omitted_out):
        raise ctx.error(call_node, f"'{sig.name}' takes {len(params)} arguments "
                        f"({', '.join(p.name for p in params)}), got {len(arg_nodes)}",
                        help="pass one argument per parameter" +
                        ("; use pl.submit to let the runtime allocate trailing pl.Out arguments"
                         if len(arg_nodes) < len(params) else ""))
    for p, d in zip(params[len(arg_nodes):], sig.directions[len(arg_nodes):]):
        if d != _PARAM_OUT:
            raise ctx.error(call_node, f"missing argument '{p.name}' of '{sig.name}'",
                            help="only trailing pl.Out arguments may be omitted (the runtime allocates them)")
    args, dirs, any_nodep = [], [], False
    is_orch = ctx.is_orchestration
    passed = sig.checked_tensor_args
    for k, (a, p, pt, pd) in enumerate(zip(arg_nodes, params, sig.param_types, sig.directions)):
        d, inner = _ARG_UNSET, a
        if type(a) is ast.Call:
            callee = peek_builtin(ctx, a.func)
            if isinstance(callee, Builtin) and callee.kind == "no_dep":
                if len(a.args) != 1 or a.keywords:
                    raise ctx.error(a, "pl.no_dep takes exactly one argument")
                inner, d, any_nodep = a.args[0], _ARG_NODEP, True
                if ctx.in_manual_scope():
                    ctx.src.warn(a, "pl.no_dep has no effect inside pl.manual_scope() (the scope already "
                                 "opts out of automatic dependency tracking)", NoDepInManualScopeWarning)
        elif type(a) is ast.Starred:
            raise ctx.error(a, "*args are not supported in DSL calls")
        e = eval_expr(ctx, inner)
        et = e.type
        if type(et) is ir.TensorType and not isinstance(e, ir.Var) and is_orch:
            # An inline view (`self.k(pl.tensor.slice(a, ...), ...)`): bound to a fresh name
            # first, as if the user had written `v = pl.tensor.slice(...)` on the line before.
            tmp = ir.Var.make(f"{p.name}_arg", et, ctx.span(inner))
            ctx.emit(ir.AssignStmt.make(tmp, e, ctx.span(inner)))
            ctx.defs[tmp] = e
            e = tmp
        elif type(et) is ir.ScalarType and is_orch:
            e = scalar_operand(ctx, e)   # `self.k(w[0], ...)`: an element read is named first
        # The common case inline (IR types arrive as their most-derived class): the same kind, and
        # no TaskId passed for another scalar. Otherwise _check_arg_kind raises the located error.
        if type(pt) is not type(et) or (type(et) is ir.ScalarType and et.dtype == _TASK_ID and pt.dtype != _TASK_ID):
            _check_arg_kind(ctx, inner, e, p, sig)
        elif type(et) is ir.TensorType:
            if deferred is not None:
                deferred.append(functools.partial(_check_tensor_call_arg, ctx, inner, e, p, sig, pd))
            else:
                # The dtype/shape check depends on the two types only: once per (slot, arg type
                # object). Call results share their callee's return type object, so a chain
                # of calls checks each slot a few times, not once per call.
                if passed.get((k, id(et))) is not et:
                    _check_tensor_arg(ctx, inner, e, p, sig)
                    passed[(k, id(et))] = et   # (holds et: its id stays unique)
                if pd in _WRITES and is_orch:
                    _note_written_input(ctx, inner, e, p, sig, pd)
        args.append(e)
        dirs.append(d)
    return args, (dirs if any_nodep else [])


_DIRECTIONS = ("Unset", "In", "Out", "InOut", "NoDep", "Scalar")


def parse_arg_directions(ctx, node: ast.AST, n_args: int, owner: str):
    """`arg_directions=[pl.In, pl.Scalar, pl.Out]` -> [ir.ArgDirection]: the printed form of
    directions a pass derived (DeriveCallDirections). One entry per argument, each `pl.<Name>`
    with Name in Unset, In, Out, InOut, NoDep, Scalar."""
    if not isinstance(node, (ast.List, ast.Tuple)):
        raise ctx.error(node, f"arg_directions= of {owner} must be a list literal, e.g. [pl.In, pl.Out]")
    if len(node.elts) != n_args:
        raise ctx.error(node, f"arg_directions= of {owner} has {len(node.elts)} entries but the call passes "
                        f"{n_args} argument(s)", help="give one direction per argument, in argument order")
    out = []
    for el in node.elts:
        ok = isinstance(el, ast.Attribute) and isinstance(el.value, ast.Name) and el.attr in _DIRECTIONS
        if ok:
            try:
                ok = getattr(eval_py(ctx, el.value), "__name__", "") == "pypto.language"
            except PyEvalFailure:
                ok = False
        if not ok:
            hint = did_you_mean(ast.unparse(el), [f"pl.{d}" for d in _DIRECTIONS])
            raise ctx.error(el, f"unknown argument direction '{ast.unparse(el)}'",
                            help=hint or "directions: " + ", ".join(f"pl.{d}" for d in _DIRECTIONS))
        out.append(getattr(ir.ArgDirection, el.attr))
    return out


def apply_arg_directions(ctx, node, arg_nodes, dirs, explicit):
    """Merge explicit `arg_directions=` with the `pl.no_dep(x)` marks: explicit directions are
    the whole truth, so an argument also wrapped in pl.no_dep must be listed as pl.NoDep."""
    if explicit is None:
        return dirs
    for k, (a, d) in enumerate(zip(arg_nodes, dirs)):
        if d == ir.ArgDirection.NoDep and explicit[k] != ir.ArgDirection.NoDep:
            raise ctx.error(a, f"argument {k} is wrapped in pl.no_dep but arg_directions= says "
                            f"pl.{explicit[k].name}", help="list it as pl.NoDep (or drop the pl.no_dep wrapper)")
    return explicit


def peek_builtin(ctx, func):
    return try_eval_py(ctx, func, None)


def _check_arg_kind(ctx, node, e, p, sig):
    pk, ak = irtypes.kind_of(p.type), irtypes.kind_of(e.type)
    if pk == ak and (pk != "scalar" or not irtypes.is_task_id_scalar(e.type) or irtypes.is_task_id_scalar(p.type)):
        return
    expected = irtypes.describe(p.type)
    raise ctx.error(node, f"argument '{p.name}' of '{sig.name}' expects {expected}, got {irtypes.describe(e.type)}",
                    help={"tensor": "pass a tensor parameter or a tensor created with pl.create_tensor",
                          "scalar": "pass a scalar expression or a Python number"}.get(pk, ""))


_WRITES = (ir.ParamDirection.Out, ir.ParamDirection.InOut)


def _check_tensor_arg(ctx, node, e, p, sig):
    """A tensor argument must have the parameter's dtype, rank and (where both are constants)
    extents: a [32, N] view passed for a [16, N] parameter would otherwise run on half the data."""
    at, ptype = e.type, p.type
    if at.dtype != ptype.dtype:
        raise ctx.error(node, f"argument '{p.name}' of '{sig.name}' expects dtype pl.{ptype.dtype.name}, got "
                        f"{irtypes.type_str(at)}", help=f"pass a pl.{ptype.dtype.name} tensor (or convert it "
                        "in a kernel with pl.cast)")
    if len(at.shape) != len(ptype.shape):
        raise ctx.error(node, f"argument '{p.name}' of '{sig.name}' expects a rank-{len(ptype.shape)} tensor "
                        f"({irtypes.type_str(ptype)}), got rank {len(at.shape)} ({irtypes.type_str(at)})",
                        help="pass a view of the parameter's shape, e.g. with pl.tensor.slice")
    for k, (ad, pdim) in enumerate(zip(at.shape, ptype.shape)):
        if isinstance(ad, ir.ConstInt) and isinstance(pdim, ir.ConstInt) and ad.value != pdim.value:
            raise ctx.error(node, f"argument '{p.name}' of '{sig.name}' expects shape "
                            f"{irtypes.type_str(ptype)}, got {irtypes.type_str(at)} (dimension {k}: "
                            f"{ad.value} != {pdim.value})",
                            help="pass a view of the parameter's shape, e.g. with pl.tensor.slice")


def _check_tensor_call_arg(ctx, node, e, p, sig, pd):
    _check_tensor_arg(ctx, node, e, p, sig)
    if pd in _WRITES and ctx.is_orchestration:
        _note_written_input(ctx, node, e, p, sig, pd)


def view_root(ctx, e):
    """The variable a tensor value is a view of: through assignments and pl.tensor.slice."""
    seen = 0
    while isinstance(e, ir.Var) and seen < 10000:
        v = ctx.defs.get(e)
        if isinstance(v, ir.Call) and v.callee == "tensor.slice" and v.args:
            e = v.args[0]
        elif isinstance(v, ir.Var):
            e = v
        else:
            break
        seen += 1
    return e


def _note_written_input(ctx, node, e, p, sig, pd):
    """An orchestration's own pl.In tensor parameter (or a view of it) passed where the callee
    writes becomes pl.Out / pl.InOut (anchor_features §16 A: the fixed point runs over every
    non-InCore function; UpgradeWrittenParamDirections does it), so the caller's array is
    written: a PyptoWarning says so, once per parameter (it was refused)."""
    root = view_root(ctx, e)
    for q, qd in zip(ctx.sig.params, ctx.sig.directions):
        if q == root:        # identity of IR nodes
            warned = ctx.prog.__dict__.setdefault("warned_written_inputs", set())
            if qd == ir.ParamDirection.In and (ctx.sig.name, q.name) not in warned:
                warned.add((ctx.sig.name, q.name))
                ctx.src.warn(node, f"'{q.name}' is declared pl.In in '{ctx.sig.name}', but '{sig.name}' writes its "
                             f"parameter '{p.name}' (pl.{pd.name}): '{q.name}' becomes pl.{pd.name} as in the "
                             f"reference compiler, so the caller's array is written; declare it "
                             f"{q.name}: pl.{pd.name}[...] to say so (or pass a pl.create_tensor buffer)")
            return


def _calls_function(fn: ast.FunctionDef, name: str) -> bool:
    """Whether the body of `fn` calls `self.<name>(...)` (a cycle with the function calling it)."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == name
               and isinstance(n.func.value, ast.Name) and n.func.value.id == "self" for n in ast.walk(fn))


def func_call(ctx, node: ast.Call):
    """self.kernel(args) -> Call.make_func(kernel, args, kernel's return type)."""
    sig = kernel_ref(ctx, node.func, "the callee")
    if sig.name == ctx.sig.name:
        raise ctx.error(node.func, f"'{sig.name}' calls itself: DSL functions cannot be recursive",
                        help="write the repetition as a pl.range loop")
    refuse_in_kernel_function(ctx, node.func, f"a call to '{sig.name}'")
    if ctx.is_orchestration and sig.ftype == ir.FunctionType.Orchestration and sig.level == ctx.sig.level \
            and _calls_function(sig.node, ctx.sig.name):
        # Said here, where the call is: two orchestrations calling each other were reported as
        # "returns a tensor it allocates" at the caller's return (tester F #5). A call without a
        # cycle is the orchestration verifier's to refuse, per entry.
        raise ctx.error(node.func, f"orchestration function '{ctx.sig.name}' calls '{sig.name}', an Orchestration "
                        "function, which cannot be submitted as a task",
                        help="call kernels (FunctionType.InCore / AIC / AIV) or Group functions from an "
                             "Orchestration function; a HOST orchestration calls chip-level ones")
    if ctx.sig.ftype == ir.FunctionType.Group and any(f.kind in ("loop", "branch") for f in ctx.frames):
        # The Group's kernels are gang-started once each: a call under control flow would be
        # dropped (the Group used to run without it).
        raise ctx.error(node, f"the call to '{sig.name}' in Group function '{ctx.sig.name}' is inside a loop or "
                        "branch: a Group body is a straight sequence of kernel calls",
                        help="move the loop or condition into the kernel, or into the orchestration around the "
                             "Group call")
    dirs_node, attrs, edges_node, attrs_node = None, {}, None, None
    by_name = []                       # arguments passed by parameter name
    for kw in node.keywords:
        if kw.arg == "arg_directions":
            dirs_node = kw.value
            continue
        if kw.arg == "compiler_manual_dep_edges":   # printed AutoDeriveTaskDependencies output
            edges_node = kw.value
            continue
        if kw.arg == "attrs":          # call attrs a pass stamped (printed pass output)
            attrs_node = kw.value
            continue
        if kw.arg == "dumps":
            raise ctx.error(kw.value, f"dumps= is not accepted on a plain call to '{sig.name}'",
                            help=f"tag the tensor before the call with pl.dump_tag(x), or use "
                                 f"pl.submit(self.{sig.name}, ..., dumps=[x])")
        if kw.arg == "deps":
            raise ctx.error(kw.value, f"deps= is not accepted on a plain call to '{sig.name}'",
                            help=f"use pl.submit(self.{sig.name}, ..., deps=[...]) to get a task id and "
                                 f"declare dependencies")
        by_name.append(kw)
    arg_nodes = kernel_arg_nodes(ctx, node, node.args, by_name, sig)
    args, dirs = kernel_args(ctx, node, arg_nodes, sig, allow_omitted_out=False)
    marks = []
    if isinstance(attrs_node, ast.Dict):   # printed form: attrs={"dump_vars": [x]} (anchor §6)
        attrs_node, marks = dump_vars_of_attrs(ctx, attrs_node, args, f"the call to '{sig.name}'")
    if attrs_node is not None:
        attrs = attrs_dict(ctx, attrs_node)
    if dirs_node is not None:
        explicit = parse_arg_directions(ctx, dirs_node, len(args), f"the call to '{sig.name}'")
        dirs = apply_arg_directions(ctx, node, arg_nodes, dirs or [ir.ArgDirection.Unset] * len(args), explicit)
    call = ir.Call.make_func(sig.name, args, sig.call_result_type(), dirs, ctx.span(node), attrs)
    if edges_node is not None:
        call = ir.with_compiler_dep_edges(call, registry.handler("deps")(ctx, edges_node).deps)
    return with_tags(ctx, call, marks)


@registry.handles("call")
def parse_call(ctx, node: ast.Call):
    """Any call in expression position."""
    f = node.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self":
        return func_call(ctx, node)
    if isinstance(f, ast.Name) and ctx.lookup(f.id) is not None:
        raise ctx.error(f, f"'{f.id}' is a value, not a function")
    callee = resolve_callee(ctx, f)
    if isinstance(callee, Builtin):
        k = callee.kind
        if k == "op" and callee.spec.op in ("tile.max", "tile.min"):
            return _max_min(ctx, node, callee)
        if k == "op" and callee.pl_name == "read":
            return _read(ctx, node, callee)
        if k == "op":
            return op_call(ctx, node, callee.spec, callee.pl_name)
        if k == "unified":
            return unified_call(ctx, node, callee)
        if k == "tensor_only":
            return tensor_only_call(ctx, node, callee)
        if k == "pipe_buffer":
            return pipe_buffer_call(ctx, node, callee.pl_name.split(".")[-1], callee.pl_name)
        if k == "initialize_pipe":
            return initialize_pipe_call(ctx, node, callee.pl_name)
        if k == "cast":
            return _cast(ctx, node, callee)
        if k == "const":
            return _const(ctx, node)
        if k == "write":
            return _write(ctx, node)
        if k == "dim":
            return _dim(ctx, node, callee)
        if k == "task_dummy":
            return _task_dummy(ctx, node, callee)
        if k in ("submit", "spmd_submit"):
            raise ctx.error(node, f"pl.{k}(...) must be unpacked: result..., tid = pl.{k}(...)",
                            help="bind the kernel results and the task id, e.g. out, tid = pl.submit(self.k, x, out)")
        raise ctx.error(node, _CONTEXT_ONLY.get(k, f"pl.{callee.pl_name} cannot be used here"))
    if callee is builtins.min or callee is builtins.max:
        return _min_max(ctx, node, callee)
    if callee in SCALAR_BUILTINS:
        return scalar_builtin_call(ctx, node, callee)
    if callee is builtins.len:
        return len_call(ctx, node)
    if callee is builtins.range:
        raise ctx.error(f, "range(...) is only valid as the iterable of a for statement",
                        help="for i in range(n): ... is a sequential loop, as pl.range(n)")
    raise ctx.error(f, f"cannot call '{ast.unparse(f)}' in a DSL function", help=CALLABLE_HELP)
