"""The explicit-dependency surface: ``deps=`` lists, ``pl.submit`` / ``pl.spmd_submit``,
scheduling predicates and the best-effort predicate producer check
(manual_dependencies spec, mechanism B and "调度谓词").

    out, tid = pl.submit(self.k, x, out, deps=[t0, None], timing_slot=3)
        tmp = Submit("k", [x, out], deps=[t0], timing_slot=3);  out = tmp[0];  tid = tmp[1]
    predicate=(rc[0, 0] > 0)
        BinaryExpr(Gt, Cast(tensor.read(rc, MakeTuple(0, 0)), INT64), ConstInt 0)
"""

from __future__ import annotations

import ast

from pypto._core import ir
from pypto.frontend import irtypes, registry
from pypto.frontend.calls import (apply_arg_directions, kernel_arg_nodes, kernel_args, kernel_ref, parse_arg_directions,
                                  peek_builtin, refuse_in_kernel_function)
from pypto.frontend.diagnostics import did_you_mean
from pypto.frontend.dumps import parse_dumps, with_tags
from pypto.frontend.exprs import const_from_py, eval_expr
from pypto.frontend.pyeval import PyEvalFailure, eval_py, try_eval_py
from pypto.frontend.stmts import is_placeholder, unpack_into

DEPS_HELP = ("deps= takes task ids, not tensors: a tid bound by `out, tid = pl.submit(...)` or "
             "`with pl.at(...) as tid`, a pl.system.task_dummy result, a TaskId loop carry, tids[k], "
             "an Array[N, TASK_ID], or None")

_PRED_OPS = {ast.Eq: "Eq", ast.NotEq: "Ne", ast.Gt: "Gt", ast.Lt: "Lt", ast.GtE: "Ge", ast.LtE: "Le"}
PRED_HELP = "write predicate=(t[i, j] > 0): one tensor element compared with an integer literal"
REDUCE_HELP = "reduce the condition to one gate value in a preceding kernel, then predicate on that value"


class DepList:
    """Parsed deps=: the TaskId exprs (None entries dropped) and whether an array entry
    (an Array var or a tids[k] slot read) makes the producer check skip this submit."""

    def __init__(self, deps, has_array):
        self.deps, self.has_array = deps, has_array

    def __iter__(self):
        return iter((self.deps, self.has_array))


def _hoist(ctx, e, node, name):
    """Bind a non-Var TaskId expression to a fresh Var so deps only ever hold Vars."""
    v = ir.Var.make(name, e.type, ctx.span(node))
    ctx.emit(ir.AssignStmt.make(v, e, ctx.span(node)))
    return v


@registry.handles("deps")
def parse_deps(ctx, node: ast.AST) -> DepList:
    """A deps=[...] list literal -> DepList."""
    if not isinstance(node, (ast.List, ast.Tuple)):
        raise ctx.error(node, "deps= must be a list literal, e.g. deps=[tid_a, tid_b]", help=DEPS_HELP)
    deps, has_array = [], False
    for el in node.elts:
        if isinstance(el, ast.Constant) and el.value is None:
            continue                                   # "no producer yet": contributes no edge
        e = eval_expr(ctx, el)
        t = e.type
        if irtypes.is_task_id_array(t):
            has_array = True
        elif irtypes.is_task_id_scalar(t):
            if isinstance(e, ir.Call) and e.callee == "array.get_element":
                has_array = True
        else:
            raise ctx.error(el, f"deps= entries must be TaskIds; '{ast.unparse(el)}' is {irtypes.describe(t)}",
                            help=DEPS_HELP)
        if not isinstance(e, ir.Var):
            name = (el.value.id + "_slot") if isinstance(el, ast.Subscript) and isinstance(el.value, ast.Name) \
                else "dep"
            e = _hoist(ctx, e, el, name)
        deps.append(e)
    return DepList(deps, has_array)


def bool_literal(ctx, node, name):
    try:
        v = eval_py(ctx, node)
    except PyEvalFailure:
        v = None
    if not isinstance(v, bool):
        raise ctx.error(node, f"{name}= must be True or False")
    return v


def timing_slot(ctx, node):
    try:
        v = eval_py(ctx, node)
    except PyEvalFailure:
        v = None
    if isinstance(v, bool) or not isinstance(v, int):
        raise ctx.error(node, f"timing_slot= must be an integer literal in 0..15, got '{ast.unparse(node)}'",
                        help="timing slots are static labels: write e.g. timing_slot=3")
    if not 0 <= v <= 15:
        raise ctx.error(node, f"timing_slot={v} is out of range: it must be in 0..15")
    return v


def core_num(ctx, node):
    e = eval_expr(ctx, node)
    if not irtypes.is_int_scalar(e.type):
        raise ctx.error(node, f"core_num= must be a positive integer expression, got {irtypes.describe(e.type)}")
    if isinstance(e, ir.ConstInt) and e.value <= 0:
        raise ctx.error(node, f"core_num= must be positive, got {e.value}")
    if isinstance(e, ir.ConstInt) and e.value > _MAX_BLOCKS:
        raise ctx.error(node, f"core_num= is {e.value}, above the runtime's limit of {_MAX_BLOCKS} blocks",
                        help="a task launches at most 2^31 - 1 blocks (the kernel's block_num is an int32)")
    return e


_MAX_BLOCKS = 2**31 - 1   # LaunchSpec::set_block_num refuses more at run time


# -- predicates ---------------------------------------------------------------------------
def _int_literal(ctx, node):
    """The compile-time int `node` denotes (`5`, `-5`, a module constant, `N - 1`), else None."""
    v = try_eval_py(ctx, node, None)
    return v if type(v) is int else None


def _element_operand(ctx, node):
    """The tensor-element side: `t[i, j]`, or the printed forms `pl.tensor.read(t, [i, j])`
    and `pl.cast(<either>, pl.INT64)`. Returns (tensor_name_node, index_nodes) or None."""
    if isinstance(node, ast.Subscript):
        idx = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return node.value, list(idx)
    if isinstance(node, ast.Call):
        b = peek_builtin(ctx, node.func)
        kind = getattr(b, "kind", None)
        if kind == "cast" and len(node.args) == 2:
            return _element_operand(ctx, node.args[0])
        if kind == "op" and b.spec.op == "tensor.read" and len(node.args) == 2 \
                and isinstance(node.args[1], (ast.List, ast.Tuple)):
            return node.args[0], list(node.args[1].elts)
    return None


def parse_predicate(ctx, node: ast.AST):
    """predicate=(t[idx...] <op> int_literal), or mirrored -> (expr, tensor Var).

    Stored as written: BinaryExpr(op, Cast(tensor.read(t, MakeTuple(idx)), INT64), ConstInt)
    or BinaryExpr(op, ConstInt, Cast(...)) for the mirrored form.
    """
    if isinstance(node, ast.BoolOp) or (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)):
        raise ctx.error(node, "predicate= cannot combine comparisons with and/or/not", help=REDUCE_HELP)
    if not isinstance(node, ast.Compare):
        if isinstance(node, ast.BinOp):
            raise ctx.error(node, "predicate= cannot use arithmetic", help=REDUCE_HELP)
        raise ctx.error(node, f"predicate= must be a comparison, got '{ast.unparse(node)}'", help=PRED_HELP)
    if len(node.ops) != 1:
        raise ctx.error(node, "predicate= cannot be a chained comparison", help=REDUCE_HELP)
    opname = _PRED_OPS.get(type(node.ops[0]))
    if opname is None:
        raise ctx.error(node, f"predicate= operator must be one of == != > < >= <=, got '{ast.unparse(node)}'",
                        help=PRED_HELP)
    left, right = node.left, node.comparators[0]
    lhs_lit, rhs_lit = _int_literal(ctx, left), _int_literal(ctx, right)
    for side, lit in ((left, lhs_lit), (right, rhs_lit)):
        if isinstance(side, ast.BinOp) and lit is None:   # (arithmetic of constants is a constant)
            raise ctx.error(side, "predicate= cannot use arithmetic", help=REDUCE_HELP)
    lhs_el, rhs_el = _element_operand(ctx, left), _element_operand(ctx, right)
    if lhs_el is not None and rhs_lit is not None:
        el, lit, mirrored, el_node, lit_node = lhs_el, rhs_lit, False, left, right
    elif rhs_el is not None and lhs_lit is not None:
        el, lit, mirrored, el_node, lit_node = rhs_el, lhs_lit, True, right, left
    elif lhs_el is not None or rhs_el is not None:
        other = right if lhs_el is not None else left
        raise ctx.error(other, f"predicate= must compare with an integer literal, got '{ast.unparse(other)}'",
                        help="the target must be a constant such as 0 or -1; " + REDUCE_HELP)
    else:
        raise ctx.error(left, f"predicate= operand must be a tensor element t[i, ...], got '{ast.unparse(left)}'",
                        help=PRED_HELP)
    tnode, idx_nodes = el
    if not isinstance(tnode, ast.Name):
        raise ctx.error(tnode, f"predicate= operand must be a named tensor, got '{ast.unparse(tnode)}'",
                        help="bind the tensor to a name (a parameter or a variable) first")
    t = ctx.lookup(tnode.id)
    if t is None:
        raise ctx.unknown_name_error(tnode)
    if not isinstance(t.type, ir.TensorType):
        raise ctx.error(tnode, f"predicate= operand '{tnode.id}' must be a tensor, it is {irtypes.describe(t.type)}",
                        help=PRED_HELP)
    rank = len(t.type.shape)
    if len(idx_nodes) != rank:
        raise ctx.error(el_node, f"predicate= indexes '{tnode.id}' with {len(idx_nodes)} "
                        f"ind{'ex' if len(idx_nodes) == 1 else 'ices'}, but it has {rank} "
                        f"dimension{'s' if rank != 1 else ''}",
                        help="give exactly one integer index per dimension, selecting a single element")
    idx = []
    for i in idx_nodes:
        if isinstance(i, ast.Slice):
            raise ctx.error(i, "predicate= indices must select one element, not a slice", help=PRED_HELP)
        v = try_eval_py(ctx, i, None)   # a compile-time integer (`0`, `N - 1`) is the constant
        e = const_from_py(ctx, v, i) if type(v) is int else eval_expr(ctx, i)
        if not (isinstance(e, ir.ConstInt) or (isinstance(e, ir.Var) and irtypes.is_int_scalar(e.type))):
            raise ctx.error(i, f"predicate= indices must be integer constants or integer variables, "
                            f"got '{ast.unparse(i)}'", help=PRED_HELP)
        idx.append(e)
    sp = ctx.span(el_node)
    read = ir.Call.make_op("tensor.read", [t, ir.MakeTuple.make(idx, sp)], {}, sp)
    operand = ir.Cast.make(read, ir.DataType.INT64, sp)
    const = const_from_py(ctx, lit, lit_node)  # (a literal past int64: a located error)
    op = getattr(ir.BinaryOp, opname)
    a, b = (const, operand) if mirrored else (operand, const)
    return ir.BinaryExpr.make(op, a, b, ctx.span(node)), t, tnode


def _through_barriers(ctx, deps):
    """deps= entries plus, transitively, the deps of every pl.system.task_dummy barrier among
    them (a barrier orders its consumer after all its inputs). Also says whether an array entry
    was met (then the check is skipped, as for a direct array entry)."""
    out, todo, has_array = [], list(deps), False
    while todo:
        d = todo.pop()
        if any(d.same_as(x) for x in out):
            continue
        out.append(d)
        if irtypes.is_task_id_array(d.type):
            has_array = True
        todo.extend(ctx.barriers.get(d, []))
    return out, has_array


class DiscardedTid:
    """Producer record for a submit whose task id was bound to `_` (it cannot be named)."""


def check_producer(ctx, tensor, tnode, deps: DepList):
    """Best-effort: the predicate tensor's recorded producer must be among deps= (skipped when
    deps= holds an array entry). Blind spots are the spec's: aliases, Out-arg aliasing,
    intermediate calls, single-target spmd_submit, array deps, later producers."""
    if deps is not None and deps.has_array:
        return
    prod = ctx.producers.get(tensor)
    if prod is None:
        return
    dep_list, has_array = _through_barriers(ctx, deps.deps if deps is not None else [])
    if has_array:
        return
    if isinstance(prod, DiscardedTid):
        raise ctx.error(tnode, f"the producer of predicate tensor '{tnode.id}' is not in deps= "
                        "(its task id was discarded with '_')",
                        help="bind the producer's task id (out, tid = pl.submit(...)) and list it in deps=")
    if any(d.same_as(prod) for d in dep_list if isinstance(d, ir.Var)):
        return
    raise ctx.error(tnode, f"the producer of predicate tensor '{tnode.id}' (task id '{prod.name}') is not in deps=",
                    help=f"add deps=[..., {prod.name}] so the predicate reads the value the producer wrote")


# -- pl.submit / pl.spmd_submit -----------------------------------------------------------
_SUBMIT_KW = ("deps", "allow_early_resolve", "timing_slot", "predicate", "arg_directions", "compiler_manual_dep_edges",
              "dumps")
_SPMD_KW = _SUBMIT_KW + ("core_num", "sync_start")


def _check_host_submit(ctx, call, kind, kws, sig, n_args: int):
    """Distributed HOST orchestration targets the L3 runtime: only deps= is supported there,
    and every argument must be passed (L3 allocates no output tensors)."""
    help_ = "a HOST-level orchestration submits to the L3 runtime, which supports only deps="
    if kind == "spmd_submit":
        raise ctx.error(call.func, "pl.spmd_submit is not available in a HOST-level orchestration", help=help_)
    for k, v in kws.items():
        if k not in ("deps", "arg_directions", "compiler_manual_dep_edges"):   # printed pass output
            raise ctx.error(v, f"{k}= is not supported by pl.submit in a HOST-level orchestration", help=help_)
    if n_args < len(sig.params):
        raise ctx.error(call, f"pl.submit in a HOST-level orchestration must pass every argument of '{sig.name}' "
                        f"({len(sig.params)}), got {n_args}",
                        help="the L3 runtime allocates no output tensors: pass the pl.Out arguments too")


@registry.handles("submit")
def parse_submit(ctx, call: ast.Call, kind: str, targets: ast.AST | None, stmt: ast.AST):
    """`result..., tid = pl.submit(self.k, *args, ...)` (or pl.spmd_submit): emits the Submit
    assignment and the unpacking, binds the names and records tensor producers."""
    pl = f"pl.{kind}"
    refuse_in_kernel_function(ctx, call.func, pl)
    if not call.args:
        raise ctx.error(call, f"{pl} needs a kernel: {pl}(self.kernel, *args, ...)")
    sig = kernel_ref(ctx, call.args[0], f"the first argument of {pl}")
    allowed = _SPMD_KW if kind == "spmd_submit" else _SUBMIT_KW
    kws, by_name = {}, []
    params = [p.name for p in sig.params]
    for kw in call.keywords:
        if kw.arg in params and kw.arg not in allowed:   # an argument of the kernel, by name
            by_name.append(kw)
            continue
        if kw.arg not in allowed:
            raise ctx.error(kw.value if kw.arg else call, f"{pl} has no keyword '{kw.arg}'",
                            help=did_you_mean(kw.arg or "", allowed + tuple(params))
                            or f"keywords: {', '.join(allowed)}; arguments of '{sig.name}': {', '.join(params)}")
        kws[kw.arg] = kw.value
    arg_nodes = kernel_arg_nodes(ctx, call, call.args[1:], by_name, sig)
    if ctx.sig.level == ir.Level.HOST:
        _check_host_submit(ctx, call, kind, kws, sig, len(arg_nodes))
    if kind == "spmd_submit" and "core_num" not in kws:
        raise ctx.error(call, "pl.spmd_submit needs core_num=: the number of blocks to launch",
                        help="e.g. pl.spmd_submit(self.k, x, out, core_num=4)")
    checks = []    # argument shape/dtype checks run after the other options are read
    args, dirs = kernel_args(ctx, call, arg_nodes, sig, allow_omitted_out=True, deferred=checks)
    explicit = None
    if "arg_directions" in kws:
        explicit = parse_arg_directions(ctx, kws["arg_directions"], len(args), f"{pl} of '{sig.name}'")
        dirs = apply_arg_directions(ctx, call, arg_nodes, dirs or [ir.ArgDirection.Unset] * len(args), explicit)
    deps = parse_deps(ctx, kws["deps"]) if "deps" in kws else None
    aer = bool_literal(ctx, kws["allow_early_resolve"], "allow_early_resolve") if "allow_early_resolve" in kws \
        else False
    slot = timing_slot(ctx, kws["timing_slot"]) if "timing_slot" in kws else -1
    cn = core_num(ctx, kws["core_num"]) if "core_num" in kws else None
    ss = bool_literal(ctx, kws["sync_start"], "sync_start") if "sync_start" in kws else False
    pred = None
    if "predicate" in kws:
        pred, ptensor, pnode = parse_predicate(ctx, kws["predicate"])
        # Explicit arg_directions= mark pass output (printed after DeriveCallDirections), where
        # outlining made visible producers the source hid in the check's blind spots (a
        # pl.cluster body, an at-block); the check is about what the user wrote, so it runs
        # on source programs only.
        if explicit is None:
            check_producer(ctx, ptensor, pnode, deps)
    for check in checks:
        check()
    sub = ir.Submit.make(sig.name, args, list(sig.return_types), deps.deps if deps else [], cn, ss, aer, slot,
                         pred, dirs, ctx.span(call))
    if "compiler_manual_dep_edges" in kws:    # printed AutoDeriveTaskDependencies output
        sub = ir.with_compiler_dep_edges(sub, parse_deps(ctx, kws["compiler_manual_dep_edges"]).deps)
    marks = parse_dumps(ctx, kws["dumps"], args, f"{pl} of '{sig.name}'") if "dumps" in kws else []
    sub = with_tags(ctx, sub, marks)    # dumps= plus pl.dump_tag'ed arguments (anchor §6)
    n = len(sig.return_types) + 1
    # One name binds the whole tuple: pl.spmd_submit's single-target form, and printed pass
    # output (arg_directions=) whose elements a pass reads out of index order (`t[1]`, `t[0]`).
    if isinstance(targets, ast.Name) and (kind == "spmd_submit" or explicit is not None):
        v = ir.Var.make(targets.id, sub.type, ctx.span(targets))
        ctx.emit(ir.AssignStmt.make(v, sub, ctx.span(stmt)))
        ctx.bind(targets.id, v)
        return
    if not isinstance(targets, (ast.Tuple, ast.List)):
        raise ctx.error(stmt, f"{pl}(...) must be unpacked: result..., tid = {pl}(...)",
                        help=f"'{sig.name}' has {n - 1} result(s), so write {n} names: "
                             f"{', '.join(['out'] * (n - 1) + ['tid'])} = {pl}(self.{sig.name}, ...)")
    if len(targets.elts) != n:
        raise ctx.error(targets, f"{pl} of '{sig.name}' gives {n} values ({n - 1} result(s) and the task id), "
                        f"but {len(targets.elts)} names are unpacked",
                        help=f"write {', '.join(['out'] * (n - 1) + ['tid'])} = {pl}(self.{sig.name}, ...)")
    bound = unpack_into(ctx, targets, sub, stmt)
    tid = DiscardedTid() if is_placeholder(targets.elts[-1].id) else bound[-1]
    for v, t in zip(bound[:-1], targets.elts[:-1]):
        if not is_placeholder(t.id) and isinstance(v.type, ir.TensorType):
            ctx.producers[v] = tid
