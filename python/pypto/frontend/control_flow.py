"""Loops and branches, with SSA conversion.

Implicit form (what users write): every name bound before a ``pl.range`` / ``pl.parallel``
loop and rebound in its body becomes an IterArg (init = the outer value), the body ends with
a YieldStmt of the names' final values, and a return var rebinds each name after the loop.
Names first bound inside the body are not visible after it. For if/else, names rebound in
either branch (and bound before, or bound in both branches) become IfStmt return_vars, each
branch ending with a YieldStmt.

Explicit form (what the printer emits)::

    for i, (acc,) in pl.range(0, 4, 1, init_values=(acc0,)):
        ...
        acc_out = pl.yield_(acc_next)
    if c:
        r = pl.yield_(x)
    else:
        r = pl.yield_(y)
"""

from __future__ import annotations

import ast

from pypto._core import ir
from pypto.frontend import irtypes, loop_escapes, registry
from pypto.frontend.context import Frame, Hidden
from pypto.frontend.exprs import eval_expr, scalar_operand
from pypto.frontend.pyeval import PyEvalFailure, attrs_dict, eval_py, int_list, try_eval_py
from pypto.frontend.scope_options import chunk_options
from pypto.frontend.scopes import parse_spmd_for
from pypto.frontend.stmts import YieldInfo, assigned_names, make_body, parse_body
from pypto.language import _builtins
from pypto.language._builtins import Builtin

_RANGE_HELP = "pl.range(stop), pl.range(start, stop) or pl.range(start, stop, step), with integer scalars"


def _loop_builtin(ctx, node: ast.For):
    it = node.iter
    if isinstance(it, ast.Call):
        try:
            b = eval_py(ctx, it.func)
        except PyEvalFailure:
            b = None
        if isinstance(b, Builtin) and b.kind in ("range", "parallel", "spmd", "unroll"):
            return b
        if b is range:   # Python's own range: a sequential loop, as pl.range without keywords
            if it.keywords:
                raise ctx.error(it.keywords[0].value if it.keywords[0].arg else it, "range() takes no keyword arguments",
                                help="carried values and chunking are pl.range keywords: "
                                     "for i in pl.range(n, init_values=(...))")
            return _builtins.range
    raise ctx.error(it, f"unsupported loop iterable '{ast.unparse(it)}'",
                    help="loops iterate over range(...), pl.range(...), pl.parallel(...), pl.unroll(...) or pl.spmd(...)")


def _range_bounds(ctx, call: ast.Call):
    shown = ast.unparse(call.func)   # range or pl.range (pl.unroll, ...) as the user wrote it
    n = len(call.args)
    if not 1 <= n <= 3:
        raise ctx.error(call, f"{shown} takes 1 to 3 positional arguments, got {n}", help=_RANGE_HELP)
    vals = []
    for a in call.args:
        if isinstance(a, ast.Starred):
            raise ctx.error(a, f"*args are not supported in {shown}", help=_RANGE_HELP)
        e = eval_expr(ctx, a)
        if not irtypes.is_int_scalar(e.type):
            raise ctx.error(a, f"{shown} arguments must be integer scalars, got '{ast.unparse(a)}' "
                            f"({irtypes.describe(e.type)})", help=_RANGE_HELP)
        vals.append(e)
    sp = ctx.span(call)
    if n == 1:
        vals = [ir.ConstInt.make(0, ir.DataType.INDEX, sp), vals[0], ir.ConstInt.make(1, ir.DataType.INDEX, sp)]
    elif n == 2:
        vals.append(ir.ConstInt.make(1, ir.DataType.INDEX, sp))
    if isinstance(vals[2], ir.ConstInt) and vals[2].value == 0:
        raise ctx.error(call.args[2], f"{shown} step must not be 0", help=_RANGE_HELP)
    return vals


def _loop_kwargs(ctx, call: ast.Call, pl_name: str):
    init, attrs, results = None, {}, {"carries": [], "trip_count": -1, "chunk_stride": None, "loop_origin": None,
                                      "chunk": None, "counted": False}
    chunk_kws = {kw.arg: kw.value for kw in call.keywords if kw.arg in ("chunk", "chunk_policy")}
    for kw in call.keywords:
        if kw.arg in chunk_kws:
            continue
        if kw.arg == "init_values" or (kw.arg == "implicit_carries" and pl_name == "unroll"):
            # implicit_carries=: how the printer spells an unroll loop's carries (pl.unroll refuses init_values=)
            if not isinstance(kw.value, (ast.Tuple, ast.List)):
                raise ctx.error(kw.value, f"{kw.arg}= must be a tuple literal, e.g. {kw.arg}=(acc0,)")
            init = kw.value
        elif kw.arg == "attrs":
            attrs = attrs_dict(ctx, kw.value)
            for typed in ("loop_origin", "chunk_stride"):
                if typed in attrs:
                    raise ctx.error(kw.value, f"'{typed}' is no loop attr: it is a typed SplitChunkedLoops result",
                                    help=f"write it as the keyword pl.range(..., {typed}=...)")
            if "counted" in attrs:
                raise ctx.error(kw.value, "'counted' is no loop attr: it is the typed StampCountedLoops result",
                                help="write it as the keyword pl.range(..., counted=True)")
            for typed in ("chunk", "chunk_policy"):
                if typed in attrs:
                    raise ctx.error(kw.value, f"'{typed}' is no loop attr: it is the typed chunk request of the loop",
                                    help=f"write it as the keyword pl.range(..., {typed}=...) inside a pl.auto_chunk scope")
        elif kw.arg in ("carries", "trip_count"):   # typed pass results (printed pass output)
            results[kw.arg] = _loop_result(ctx, kw)
        elif kw.arg in _ITER_ARG_INDEX_RESULTS:
            pass   # KernelInPlaceCarries' / KernelLendLoopInits' result, as printed: read by _with_iter_arg_indices
        elif kw.arg in ("chunk_stride", "loop_origin"):   # SplitChunkedLoops' results, as printed: _with_chunk_split
            results[kw.arg] = kw
        elif kw.arg == "counted":   # StampCountedLoops' result, as printed
            if not (isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, bool)):
                raise ctx.error(kw.value, f"counted= must be True or False, got '{ast.unparse(kw.value)}'",
                                help="counted= is StampCountedLoops' result: the loop is printed as a counted loop")
            results["counted"] = kw.value.value
        else:
            raise ctx.error(kw.value if kw.arg else call, f"pl.{pl_name} has no keyword '{kw.arg}'",
                            help="keywords: init_values=, attrs=, chunk=, chunk_policy=")
    results["chunk"] = chunk_options(ctx, chunk_kws, pl_name)
    return init, (attrs, results)


def _loop_result(ctx, kw):
    """carries=(pl.alias, pl.rebind, pl.slots(4)) / trip_count=4: pass results a printed
    program carries (ClassifyIterArgCarry, StampStaticTripCounts)."""
    from pypto.language._types import LoopCarry, slots

    def value(node):
        if isinstance(node, (ast.Tuple, ast.List)):
            return [value(e) for e in node.elts]
        if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
            f, n = value(node.func), value(node.args[0])
            return f(n) if f is slots and isinstance(n, int) else None
        try:
            return eval_py(ctx, node)
        except PyEvalFailure:
            return None

    v = value(kw.value)
    if kw.arg == "trip_count":
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise ctx.error(kw.value, f"trip_count= must be a non-negative integer, got '{ast.unparse(kw.value)}'")
        return v
    if not isinstance(v, (tuple, list)) or not all(isinstance(c, LoopCarry) for c in v):
        raise ctx.error(kw.value, f"carries= must be a tuple of pl.alias / pl.rebind / pl.slots(N), got "
                        f"'{ast.unparse(kw.value)}'")
    return [c.to_ir() for c in v]


def _make_for(ctx, lv, start, stop, step, iter_args, body, rvs, kind, attrs, node):
    attrs, results = attrs
    if results["carries"] and len(results["carries"]) != len(iter_args):
        raise ctx.error(node.iter, f"carries= has {len(results['carries'])} entries for {len(iter_args)} loop carries")
    loop = ir.ForStmt.make(lv, start, stop, step, iter_args, body, rvs, kind, attrs, ctx.span(node))
    if results["carries"] or results["trip_count"] >= 0:
        loop = loop.with_results(results["carries"], results["trip_count"])
    if results["counted"]:
        loop = loop.with_counted(True)
    if results["chunk"] is not None:   # the chunk request (§7), typed
        loop = loop.with_chunk(*results["chunk"])
    if results["chunk_stride"] is not None or results["loop_origin"] is not None:
        loop = _with_chunk_split(ctx, results["loop_origin"], results["chunk_stride"], loop)
    return _with_iter_arg_indices(ctx, node.iter, loop, len(iter_args))


_LOOP_ORIGINS = {"chunk_outer": ir.LoopOrigin.ChunkOuter, "chunk_inner": ir.LoopOrigin.ChunkInner,
                 "chunk_remainder": ir.LoopOrigin.ChunkRemainder}


def _with_chunk_split(ctx, origin_kw, stride_kw, loop):
    """`pl.range(0, n, s * 4, chunk_stride=4, loop_origin="chunk_outer")` (SplitChunkedLoops' results
    as printed IR spells them) -> the loop with ForStmt.loop_origin / chunk_stride set; chunk_stride is
    C > 1 on a loop whose step is `s * C`."""
    origin, stride = ir.LoopOrigin.User, 0
    if origin_kw is not None:
        v = origin_kw.value.value if isinstance(origin_kw.value, ast.Constant) else None
        if not isinstance(v, str) or v not in _LOOP_ORIGINS:
            raise ctx.error(origin_kw.value, f"loop_origin= must be \"chunk_outer\", \"chunk_inner\" or "
                            f"\"chunk_remainder\", got {ast.unparse(origin_kw.value)}",
                            help="loop_origin= is SplitChunkedLoops' result: which part of a split chunked loop this is")
        origin = _LOOP_ORIGINS[v]
    if stride_kw is not None:
        v = stride_kw.value.value if isinstance(stride_kw.value, ast.Constant) else None
        step = loop.step
        c = step.b if isinstance(step, ir.BinaryExpr) and step.op == ir.BinaryOp.Mul else None
        if type(v) is not int or v < 2 or not isinstance(c, ir.ConstInt) or c.value != v:
            raise ctx.error(stride_kw.value, f"chunk_stride= must be an int C > 1 on a loop whose step is `s * C`, got "
                            f"'{ast.unparse(stride_kw.value)}'",
                            help="chunk_stride= is SplitChunkedLoops' result: it names the chunk of a run-time step")
        stride = v
    return loop.with_chunk_split(origin, stride)


# The typed iter_arg index lists of a loop, as printed IR spells them: keyword -> ForStmt setter.
_ITER_ARG_INDEX_RESULTS = {
    "inplace_carries": lambda loop, ix: loop.with_inplace_carries(ix),   # KernelInPlaceCarries
    "lent_inits": lambda loop, ix: loop.with_lent_inits(ix),             # KernelLendLoopInits
}


def _with_iter_arg_indices(ctx, call: ast.Call, loop, n_iter_args: int):
    """`pl.range(..., inplace_carries=[0], lent_inits=[0])` (pass results as printed IR spells
    them) -> the loop with ForStmt.inplace_carries / lent_inits set; each index names one of the
    loop's iter_args."""
    for kw in call.keywords:
        setter = _ITER_ARG_INDEX_RESULTS.get(kw.arg)
        if setter is None:
            continue
        indices = int_list(ctx, kw.value, kw.arg)
        bad = [i for i in indices if i >= n_iter_args]
        if bad:
            raise ctx.error(kw.value, f"{kw.arg}= names iter_arg {bad[0]}, but the loop has {n_iter_args}",
                            help="each index names one of the loop's init_values")
        loop = setter(loop, indices)
    return loop


def _check_same_kind(ctx, name, before, after, node, construct):
    if before == after:
        return
    where = ("one branch, {} in the other" if construct == "if/else" else "before, {} after")
    message = f"'{name}' changes type in the {construct}: {irtypes.type_str(before)} in " if construct == "if/else" \
        else f"'{name}' changes type in the {construct}: {irtypes.type_str(before)} "
    message += where.format(irtypes.type_str(after))
    raise ctx.error(node, message, help=_same_kind_help(before, after))


def _same_kind_help(a, b) -> str:
    """What makes two tile types of one name agree, when only a tile's valid shape or memory space
    differs; else a new name."""
    if isinstance(a, ir.TileType) and isinstance(b, ir.TileType) and a.dtype == b.dtype and \
            irtypes.shape_str(a.shape) == irtypes.shape_str(b.shape):
        if a.memory != b.memory:
            other = b if a.memory == ir.MemorySpace.Vec else a
            return ("the memory spaces differ: make the value it starts from in the same space, e.g. "
                    f"pl.tile.full(..., target_memory=pl.MemorySpace.{other.memory.name})")
        return ("the valid shapes differ: give both the same one (pl.set_validshape(t, rows, cols)), or make the tile "
                "fully valid (pl.fillpad(t)); in a loop, a binary op takes its left operand's valid shape, so "
                "acc = pl.add(acc, t) keeps acc's")
    return f"use a new name for the {irtypes.kind_of(b)} value"


@registry.handles("for")
def parse_for(ctx, node: ast.For):
    if node.orelse:
        raise ctx.error(node.orelse[0], "for ... else is not supported")
    b = _loop_builtin(ctx, node)
    if b.kind == "spmd":
        parse_spmd_for(ctx, node)
        return
    call = node.iter
    if b.kind == "unroll":
        _check_unroll(ctx, call)
    start, stop, step = _range_bounds(ctx, call)
    if b.kind == "unroll":   # constants folded (a negated literal or module constant -> ConstInt)
        start, stop, step = _unroll_bounds(ctx, call, start, stop, step)
    init_node, attrs = _loop_kwargs(ctx, call, b.pl_name)
    if attrs[1]["chunk"] is not None and not isinstance(step, ir.ConstInt):
        # SplitChunkedLoops emits a simpler split for a step whose sign it knows; a compile-time
        # value such as -S (S a module constant) is folded first (a run-time step is split too)
        v = try_eval_py(ctx, call.args[2], None)
        if type(v) is int and v != 0:
            step = ir.ConstInt.make(v, ir.DataType.INDEX, ctx.span(call.args[2]))
    kind = {"parallel": ir.ForKind.Parallel, "unroll": ir.ForKind.Unroll}.get(b.kind, ir.ForKind.Sequential)
    if init_node is not None:
        _explicit_for(ctx, node, start, stop, step, init_node, attrs, kind)
    else:
        _implicit_for(ctx, node, start, stop, step, attrs, kind)


_UNROLL_HELP = "pl.unroll(4), pl.unroll(0, 8, 2): integer literals, module constants or negated literals"


def _check_unroll(ctx, call: ast.Call):
    """pl.unroll (anchor_features.md §12): literal bounds, no init_values= (names rebound in the
    body are carried implicitly); chunk= is checked like pl.range's (§7)."""
    for kw in call.keywords:
        if kw.arg == "init_values":
            raise ctx.error(kw.value, "pl.unroll cannot be combined with init_values",
                            help="drop init_values= and just reassign the names in the body: they flow from "
                                 "copy to copy")
    for a in call.args:
        v = try_eval_py(ctx, a)
        if isinstance(v, bool) or not isinstance(v, int):
            raise ctx.error(a, f"pl.unroll requires compile-time constant integer bounds, got '{ast.unparse(a)}'",
                            help=_UNROLL_HELP)


def _unroll_bounds(ctx, call: ast.Call, start, stop, step):
    vals = [try_eval_py(ctx, a) for a in call.args]
    sp = ctx.span(call)
    start_v, stop_v, step_v = {1: lambda: (0, vals[0], 1), 2: lambda: (vals[0], vals[1], 1),
                               3: lambda: tuple(vals)}[len(vals)]()
    if step_v == 0:
        raise ctx.error(call.args[2], "pl.unroll step must not be 0", help=_UNROLL_HELP)
    return [ir.ConstInt.make(v, ir.DataType.INDEX, sp) for v in (start_v, stop_v, step_v)]


def _loop_var(ctx, target):
    if not isinstance(target, ast.Name):
        raise ctx.error(target, "the loop variable must be a plain name",
                        help="with carried values write: for i, (a, b) in pl.range(..., init_values=(a0, b0))")
    return ir.Var.make(target.id, ir.ScalarType.make(ir.DataType.INDEX), ctx.span(target))


def _escaping_names(ctx, frame, lv, outer):
    """Names first bound in the loop body (frame) and read after the loop, whose type has a seed
    (spec anchor_features §17): they become implicit carries."""
    out = []
    for n, v in frame.vars.items():
        if n == lv.name or n in outer or not loop_escapes.read_after_loop(ctx, n):
            continue
        if isinstance(v.type, ir.ScalarType) or (isinstance(v.type, ir.TensorType) and ctx.is_orchestration):
            out.append(n)
    return out


def _dead_scalar(ctx, node, name) -> bool:
    """A scalar (a TaskId too) the loop rebinds before reading it, read neither after the loop nor
    around an enclosing loop: not carried, each iteration's value is its own. So the name may take
    another dtype in the loop, and a TaskId name may have held an array before it (a pl.parallel
    loop's fence of one TaskId per iteration, which a loop-carried scalar TaskId could not start from).

        for i in pl.parallel(2):
            x, tid = pl.submit(self.f, x)    # tid: 2 TaskIds after this loop
            ids[i] = tid
        for i in pl.range(4):
            y, tid = pl.submit(self.g, y)    # a fresh TaskId per iteration, not a carry of the array
            jds[i] = tid
    """
    return isinstance(ctx.lookup(name).type, ir.ScalarType) and loop_escapes.dead_on_entry(ctx, node, name)


def _escape_seed(ctx, n, t, node):
    """What an implicit carry of `n` starts from before `node`: the enclosing loop's carry of it, or
    the seed for zero trips (spec anchor_features §17)."""
    init = loop_escapes.enclosing_loop_carry(ctx, n, t)
    return init if init is not None else loop_escapes.seed_for(ctx, n, t, node, loop_escapes.first_read_line(ctx, n))


def _implicit_for(ctx, node, start, stop, step, attrs, kind):
    lv = _loop_var(ctx, node.target)
    carried = [n for n in assigned_names(node.body, ctx) if n != lv.name and ctx.lookup(n) is not None
               and not _dead_scalar(ctx, node, n)]
    outer = {n: ctx.lookup(n) for n in carried}
    frame = Frame("loop", node)
    ctx.frames.append(frame)
    ctx.bind(lv.name, lv)
    iter_args = []
    for n in carried:
        ia = ir.IterArg.make(n, outer[n].type, outer[n], ctx.span(node))
        iter_args.append(ia)
        ctx.bind(n, ia)
    ctx.push_block()
    yinfo = parse_body(ctx, node.body, allow_yield=True)
    if yinfo is not None:
        raise ctx.error(yinfo.node, "pl.yield_ in a loop without init_values=",
                        help="either declare the carried values with init_values=(...) or drop pl.yield_ and "
                             "just reassign the names (they are carried automatically)")
    yields = []
    for n, ia in zip(carried, iter_args):
        v = frame.vars.get(n, ia)
        _check_same_kind(ctx, n, ia.type, v.type, node, "loop")
        yields.append(v)
    for n, (_, ia) in frame.pending.items():   # an inner loop's implicit carry starts from this loop's
        _check_same_kind(ctx, n, ia.type, frame.vars[n].type, node, "loop")
        yields.append(frame.vars[n])
    escaping = [n for n in _escaping_names(ctx, frame, lv, outer) if n not in frame.pending]
    yields += [frame.vars[n] for n in escaping]
    if iter_args or escaping or frame.pending:
        ctx.emit(ir.YieldStmt.make(yields, ctx.span(node)))
    body = make_body(ctx.pop_block(), ctx.span(node))
    ctx.frames.pop()
    for n, (sv, ia) in frame.pending.items():
        ctx.emit(ir.AssignStmt.make(sv, _escape_seed(ctx, n, ia.type, node), ctx.span(node)))
        iter_args.append(ia)
        carried.append(n)
        outer[n] = sv
    for n in escaping:   # §17: seeded before the loop, or the enclosing loop's carry
        t = frame.vars[n].type
        init = loop_escapes.enclosing_loop_carry(ctx, n, t)
        if init is None:
            init = ir.Var.make(n, t, ctx.span(node))
            seed = loop_escapes.seed_for(ctx, n, t, node, loop_escapes.first_read_line(ctx, n))
            ctx.emit(ir.AssignStmt.make(init, seed, ctx.span(node)))
        iter_args.append(ir.IterArg.make(n, t, init, ctx.span(node)))
        carried.append(n)
        outer[n] = init
    for n in frame.vars:
        if n == lv.name:
            ctx.hidden[n] = Hidden("as the loop variable", node.lineno + ctx.src.line_offset,
                                   "the loop variable is only visible inside the loop body")
        elif n not in outer:
            ctx.hidden[n] = Hidden("inside the loop body", node.lineno + ctx.src.line_offset,
                                   f"assign '{n}' before the loop; it is then carried out of the loop")
    _check_parallel_task_id_carry(ctx, node, kind, start, stop, step, iter_args)
    rvs = []
    for n, ia in zip(carried, iter_args):
        rv = ir.Var.make(n, ia.type, ctx.span(node))
        rvs.append(rv)
    ctx.emit(_make_for(ctx, lv, start, stop, step, iter_args, body, rvs, kind, attrs, node))
    for n, rv in zip(carried, rvs):
        ctx.bind(n, rv)


# A TaskId carried through pl.parallel(N) is an array of N TaskId slots (and the consumer's
# dependency list another) on the orchestration thread's stack: 65,536 slots are 1 MiB.
MAX_PARALLEL_TASK_ID_SLOTS = 65536


def _trip_count(start, stop, step):
    """Iterations of range(start, stop, step) for any int64 bounds (len(range()) overflows ssize_t)."""
    if step == 0:
        return 0
    span = stop - start if step > 0 else start - stop
    return max(0, (span + abs(step) - 1) // abs(step))


def _check_parallel_task_id_carry(ctx, node, kind, start, stop, step, iter_args):
    """A TaskId carried through pl.parallel becomes an array of one slot per iteration (the
    manual-scope phase fence), so the trip count must be known when compiling."""
    if kind != ir.ForKind.Parallel:
        return
    if all(isinstance(e, ir.ConstInt) for e in (start, stop, step)):
        trips = _trip_count(start.value, stop.value, step.value)
        carried = [ia for ia in iter_args if irtypes.is_task_id_scalar(ia.type)]
        if carried and trips > MAX_PARALLEL_TASK_ID_SLOTS:
            raise ctx.error(node.iter, f"the TaskId '{carried[0].name}' carried through this pl.parallel loop needs "
                            f"{trips} slots, more than the limit of {MAX_PARALLEL_TASK_ID_SLOTS} (the slots live on "
                            "the orchestrator's stack)",
                            help="split the loop (an outer pl.range over inner pl.parallel chunks), or join the "
                                 "iterations with pl.system.task_dummy inside the loop")
        return
    for ia in iter_args:
        if irtypes.is_task_id_scalar(ia.type):
            raise ctx.error(node.iter, f"the TaskId '{ia.name}' carried through this pl.parallel loop needs a "
                            "statically-known trip count",
                            help="use integer literals or module constants for the pl.parallel bounds "
                                 "(each iteration gets its own TaskId slot)")


def _explicit_for(ctx, node, start, stop, step, init_node, attrs, kind):
    t = node.target
    if not (isinstance(t, ast.Tuple) and len(t.elts) == 2 and isinstance(t.elts[0], ast.Name)):
        raise ctx.error(t, "a loop with init_values= is written: for i, (a, b) in pl.range(..., init_values=(a0, b0))")
    names = t.elts[1].elts if isinstance(t.elts[1], (ast.Tuple, ast.List)) else [t.elts[1]]
    for n in names:
        if not isinstance(n, ast.Name):
            raise ctx.error(n, "iter_arg names must be plain names")
    inits = [eval_expr(ctx, e) for e in init_node.elts]
    if len(inits) != len(names):
        raise ctx.error(init_node, f"init_values= has {len(inits)} values but {len(names)} iter_args are named")
    lv = _loop_var(ctx, t.elts[0])
    frame = Frame("loop")
    ctx.frames.append(frame)
    ctx.bind(lv.name, lv)
    iter_args = []
    for n, init in zip(names, inits):
        ia = ir.IterArg.make(n.id, init.type, init, ctx.span(n))
        iter_args.append(ia)
        ctx.bind(n.id, ia)
    ctx.push_block()
    yinfo = parse_body(ctx, node.body, allow_yield=True)
    if yinfo is None:   # §13: synthesized from the header names' last values; nothing is bound after the loop
        yinfo = YieldInfo(node, None, [frame.vars[n.id] for n in names])
    if len(yinfo.values) != len(iter_args):
        raise ctx.error(yinfo.node, f"pl.yield_ gives {len(yinfo.values)} values for {len(iter_args)} iter_args")
    for ia, v, n in zip(iter_args, yinfo.values, names):
        _check_same_kind(ctx, n.id, ia.type, v.type, yinfo.node, "loop")
    if not yinfo.emitted:
        ctx.emit(ir.YieldStmt.make(yinfo.values, ctx.span(yinfo.node)))
    body = make_body(ctx.pop_block(), ctx.span(node))
    ctx.frames.pop()
    _check_parallel_task_id_carry(ctx, node, kind, start, stop, step, iter_args)
    rv_names = [x.id for x in yinfo.targets] if yinfo.targets else [ia.name for ia in iter_args]
    rv_nodes = yinfo.targets or [node] * len(iter_args)
    rvs = [ir.Var.make(n, ia.type, ctx.span(rn)) for n, ia, rn in zip(rv_names, iter_args, rv_nodes)]
    ctx.emit(_make_for(ctx, lv, start, stop, step, iter_args, body, rvs, kind, attrs, node))
    if yinfo.targets:
        for n, rv in zip(rv_names, rvs):
            ctx.bind(n, rv)


def _branch(ctx, stmts):
    frame = Frame("branch")
    ctx.frames.append(frame)
    ctx.push_block()
    yinfo = parse_body(ctx, stmts, allow_yield=True)
    block = ctx.pop_block()
    ctx.frames.pop()
    return frame, block, yinfo


@registry.handles("if")
def parse_if(ctx, node: ast.If):
    cond = scalar_operand(ctx, eval_expr(ctx, node.test))
    if not isinstance(cond.type, ir.ScalarType):
        raise ctx.error(node.test, f"the if condition must be a scalar, got {irtypes.describe(cond.type)}")
    tf, tblock, ty = _branch(ctx, node.body)
    ef, eblock, ey = _branch(ctx, node.orelse) if node.orelse else (Frame("branch"), None, None)
    sp = ctx.span(node)
    if ty is not None or ey is not None:
        _explicit_if(ctx, node, cond, tblock, ty, eblock, ey)
        return
    outer_names = [n for n in list(tf.vars) + [m for m in ef.vars if m not in tf.vars]]
    carried = [n for n in outer_names if ctx.lookup(n) is not None or (n in tf.vars and n in ef.vars)]
    rvs, tvals, evals = [], [], []
    for n in carried:
        tv = tf.vars.get(n, ctx.lookup(n))
        ev = ef.vars.get(n, ctx.lookup(n))
        _check_same_kind(ctx, n, tv.type, ev.type, node, "if/else")
        tvals.append(tv)
        evals.append(ev)
        rvs.append(ir.Var.make(n, tv.type, sp))
    for n in outer_names:
        if n not in carried:
            ctx.hidden[n] = Hidden("in one branch of the if", node.lineno + ctx.src.line_offset,
                                   f"assign '{n}' in both branches (or before the if) to use it afterwards")
    if carried:
        tblock.append(ir.YieldStmt.make(tvals, sp))
        eblock = (eblock or []) + [ir.YieldStmt.make(evals, sp)]
    then_body = make_body(tblock, sp)
    else_body = make_body(eblock, sp) if eblock is not None else None
    ctx.emit(ir.IfStmt.make(cond, then_body, else_body, rvs, sp))
    for n, rv in zip(carried, rvs):
        ctx.bind(n, rv)


def _explicit_if(ctx, node, cond, tblock, ty, eblock, ey):
    sp = ctx.span(node)
    if ty is None or ey is None:
        raise ctx.error(node, "when one branch ends with pl.yield_, both if and else must",
                        help="add an else branch that yields the same number of values")
    if len(ty.values) != len(ey.values):
        raise ctx.error(ey.node, f"the else branch yields {len(ey.values)} values but the if branch "
                        f"yields {len(ty.values)}")
    names = [t.id for t in ty.targets] if ty.targets else None
    if names is None:
        raise ctx.error(ty.node, "pl.yield_ in an if branch must be assigned: r = pl.yield_(x)")
    for n, a, b in zip(names, ty.values, ey.values):
        _check_same_kind(ctx, n, a.type, b.type, node, "if/else")
    for block, y in ((tblock, ty), (eblock, ey)):
        if not y.emitted:
            block.append(ir.YieldStmt.make(y.values, ctx.span(y.node)))
    rvs = [ir.Var.make(n, v.type, ctx.span(t)) for n, v, t in zip(names, ty.values, ty.targets)]
    ctx.emit(ir.IfStmt.make(cond, make_body(tblock, sp), make_body(eblock, sp), rvs, sp))
    for n, rv in zip(names, rvs):
        ctx.bind(n, rv)
