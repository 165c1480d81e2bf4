"""`with` scopes and `for i in pl.spmd(...)`.

    with pl.manual_scope():            RuntimeScopeStmt(Manual)
    with pl.scope():                   RuntimeScopeStmt(Auto)
    with pl.at(level=pl.Level.CORE_GROUP, deps=[t], predicate=(rc[0] > 0),
               allow_early_resolve=True, no_dep_args=[x]) as tid:
                                       ScopeStmt(At, {"level": ...}, body, task_id_var=tid) with the typed
                                       options (ir.ScopeOptions: deps, predicate, no_dep_args, ...)
    with pl.spmd(4, sync_start=True, deps=[t]) as tid:   ScopeStmt(Spmd, {"core_num": 4, ...}), options
    for i in pl.spmd(4): ...           ScopeStmt(Spmd, ..., block_var=i)
    with pl.cluster():                 ScopeStmt(Cluster)

Names assigned inside a scope stay visible after it (scopes carry nothing). Tensors
assigned inside a `... as tid` scope are recorded as produced by `tid` for the predicate
producer check.
"""

from __future__ import annotations

import ast
import copy

from pypto._core import ir
from pypto.errors import PyptoError
from pypto.frontend import irtypes, registry
from pypto.frontend.context import Frame, ScopeInfo
from pypto.frontend.deps import bool_literal, check_producer, core_num, parse_deps, parse_predicate
from pypto.frontend.diagnostics import a_or_an, did_you_mean
from pypto.frontend.pyeval import PyEvalFailure, eval_py
from pypto.frontend.dumps import scope_dump_vars
from pypto.frontend.op_options import in_kernel_function
from pypto.frontend.scope_options import AUTO_CHUNK_REFUSED, add_name_hint, optimizations, scope_mode
from pypto.frontend.stmts import make_body, parse_body
from pypto.language import _types as T
from pypto.language._builtins import Builtin

_WITH_HELP = "with statements take pl.manual_scope(), pl.scope(), pl.at(...), pl.spmd(...) or pl.cluster()"
_KERNEL_TYPES = ("Group", "Spmd", "InCore", "AIC", "AIV")
_AT_KW = ("level", "deps", "allow_early_resolve", "predicate", "no_dep_args", "name_hint", "optimizations", "dumps")
_SPMD_KW = ("core_num", "sync_start", "deps", "allow_early_resolve", "predicate", "name_hint", "optimizations",
            "dumps")
_CLUSTER_KW = ("name_hint",)


def _refuse_in_kernel_function(ctx, call, spelled):
    """Scopes that outline kernels or group them (pl.at, pl.spmd, pl.cluster) belong to the
    functions that submit tasks; a kernel function (InCore / AIC / AIV) runs on one core."""
    if in_kernel_function(ctx):
        raise ctx.error(call, f"{spelled} cannot appear in {a_or_an(ctx.sig.ftype.name)} function",
                        help="scopes are outlined from Orchestration (or Opaque) functions; move the scope there")


def _scope_builtin(ctx, expr):
    if isinstance(expr, ast.Call):
        try:
            b = eval_py(ctx, expr.func)
        except PyEvalFailure:
            b = None
        if isinstance(b, Builtin) and b.kind in ("manual_scope", "scope", "at", "spmd", "cluster"):
            return b
    raise ctx.error(expr, f"unsupported with statement '{ast.unparse(expr)}'", help=_WITH_HELP)


def hoist_scope_return(ctx, body: list) -> list:
    """A function body that ends in a runtime scope (`with pl.scope():` / `pl.manual_scope()`,
    nested ones too) whose body ends in `return x`: the same body with the return after the
    block. A runtime scope does not scope names (values read after it leave through exit slots),
    so this is what the Python reads as; a return anywhere else inside a block stays an error.

        with pl.scope():                      with pl.scope():
            out = self.k(x, out)      ->          out = self.k(x, out)
            return out                        return out
    """
    last = body[-1] if body else None
    if not (isinstance(last, ast.With) and len(last.items) == 1 and last.items[0].optional_vars is None):
        return body
    try:
        kind = _scope_builtin(ctx, last.items[0].context_expr).kind
    except PyptoError:
        return body                                  # (parse_with reports it)
    if kind not in ("scope", "manual_scope"):
        return body
    inner = hoist_scope_return(ctx, last.body)
    if not inner or not isinstance(inner[-1], ast.Return):
        return body
    block = ast.With(items=last.items, body=inner[:-1] or [ast.Pass()])
    ast.copy_location(block, last)
    block.end_lineno, block.end_col_offset = last.end_lineno, last.end_col_offset
    for st in block.body:
        if isinstance(st, ast.Pass) and not hasattr(st, "lineno"):
            ast.copy_location(st, last)
    return body[:-1] + [block, inner[-1]]


def _body(ctx, node, info: ScopeInfo, stmts, tail_yield=False):
    """Parse a scope body in a transparent frame; returns (body Stmt, names rebound, YieldInfo).
    With tail_yield (a runtime scope ending a loop/branch body), a trailing pl.yield_ is
    emitted inside the scope and returned to the enclosing for/if."""
    frame = Frame("scope")
    ctx.frames.append(frame)
    ctx.scopes.append(info)
    ctx.push_block()
    yinfo = parse_body(ctx, stmts, allow_yield=tail_yield)
    if yinfo is not None and not yinfo.emitted:   # a nested tail scope already emitted it
        ctx.emit(ir.YieldStmt.make(yinfo.values, ctx.span(yinfo.node)))
        yinfo.emitted = True
    block = ctx.pop_block()
    ctx.scopes.pop()
    ctx.frames.pop()
    for n, v in frame.vars.items():
        ctx.bind(n, v)
    return make_body(block, ctx.span(node)), frame.vars, yinfo


# Scope keywords whose spec'd default is None (anchor_features §1's signatures): written out,
# `deps=None` means "not given".
_NONE_DEFAULTS = ("deps", "optimizations", "no_dep_args", "dumps", "predicate")


def _kwargs(ctx, call, allowed, what):
    kws = {}
    for kw in call.keywords:
        if kw.arg not in allowed:
            raise ctx.error(kw.value if kw.arg else call, f"{what} has no keyword '{kw.arg}'",
                            help=did_you_mean(kw.arg or "", allowed) or f"keywords: {', '.join(allowed)}")
        if kw.arg in _NONE_DEFAULTS and isinstance(kw.value, ast.Constant) and kw.value.value is None:
            continue
        kws[kw.arg] = kw.value
    return kws


def _tid_target(ctx, item):
    if item.optional_vars is None:
        return None
    if not isinstance(item.optional_vars, ast.Name):
        raise ctx.error(item.optional_vars, "`as` takes a plain name (the task id)")
    return item.optional_vars


def _level(ctx, node):
    try:
        v = eval_py(ctx, node)
    except PyEvalFailure:
        v = None
    if not isinstance(v, T.Level):
        raise ctx.error(node, f"level= must be a pl.Level, got '{ast.unparse(node)}'",
                        help="levels: " + ", ".join(f"pl.Level.{m.name}" for m in T.Level))
    return v.name


def _common_dep_options(ctx, kws, options):
    """deps= / allow_early_resolve= / predicate= -> options (keyword arguments of ir.ScopeOptions)."""
    deps = None
    if "deps" in kws:
        deps = parse_deps(ctx, kws["deps"])
        options["deps"] = list(deps.deps)
    if "allow_early_resolve" in kws:
        options["allow_early_resolve"] = bool_literal(ctx, kws["allow_early_resolve"], "allow_early_resolve")
    if "predicate" in kws:
        pred, t, tnode = parse_predicate(ctx, kws["predicate"])
        check_producer(ctx, t, tnode, deps)
        options["predicate"] = pred
    return deps


def _scope(kind, attrs, options, body, tid, bv, span):
    """The ScopeStmt with its typed task options (ir.ScopeOptions keyword arguments)."""
    scope = ir.ScopeStmt.make(kind, attrs, body, tid, bv, span)
    return scope.with_options(ir.ScopeOptions(**options)) if options else scope


def _record_producers(ctx, tid, rebound):
    if tid is None:
        return
    for v in rebound.values():
        if isinstance(v.type, ir.TensorType):
            ctx.producers[v] = tid


def _finish(ctx, node, kind, attrs, options, body, rebound, tid_node):
    tid = ir.Var.make(tid_node.id, ir.ScalarType.make(ir.DataType.TASK_ID), ctx.span(tid_node)) if tid_node else None
    ctx.emit(_scope(kind, attrs, options, body, tid, None, ctx.span(node)))
    if tid is not None:
        ctx.bind(tid_node.id, tid)
        _record_producers(ctx, tid, rebound)


def _at(ctx, node, item, call):
    # pl.at(level, role=None, *, ...) (anchor_features §1): level and role may be positional.
    if len(call.args) > 2:
        raise ctx.error(call.args[2], "pl.at takes at most two positional arguments (level, role); the others are "
                        "keywords", help="e.g. pl.at(pl.Level.CORE_GROUP, deps=[t])")
    kws = _kwargs(ctx, call, _AT_KW + ("role",), "pl.at")
    for name, arg in zip(("level", "role"), call.args):
        if name in kws:
            raise ctx.error(arg, f"pl.at got {name} twice (positionally and as {name}=)")
        kws[name] = arg
    if "role" in kws:
        if not (isinstance(kws["role"], ast.Constant) and kws["role"].value is None):
            raise ctx.error(kws["role"], "role= on pl.at is not supported: no pass or code generator reads it",
                            help="drop it (or write role=None)")
        del kws["role"]
    if "level" not in kws:
        raise ctx.error(call, "pl.at needs level=", help="e.g. with pl.at(level=pl.Level.CORE_GROUP):")
    level = _level(ctx, kws["level"])
    _refuse_in_kernel_function(ctx, call, f"pl.at(level=pl.Level.{level})")
    if level == "CLUSTER":
        raise ctx.error(kws["level"], "pl.at(level=pl.Level.CLUSTER) is not supported",
                        help="group AIC and AIV kernels with `with pl.cluster():`")
    if level == "CORE_GROUP":
        fname = ctx.sig.ftype.name
        if fname in _KERNEL_TYPES:
            raise ctx.error(call, f"pl.at(level=pl.Level.CORE_GROUP) cannot appear in {a_or_an(fname)} function",
                            help="CORE_GROUP scopes are outlined from Orchestration (or Opaque) functions; "
                                 "move the scope there")
        for s in ctx.scopes:
            if s.kind in ("cluster", "spmd") or (s.kind == "at" and s.level == "CORE_GROUP"):
                inner = {"cluster": "pl.cluster()", "spmd": "pl.spmd()",
                         "at": "another pl.at(level=pl.Level.CORE_GROUP)"}[s.kind]
                raise ctx.error(call, f"pl.at(level=pl.Level.CORE_GROUP) cannot be nested inside {inner}",
                                help="the CORE_GROUP scope must itself be the dispatched task; move it out")
    else:
        for k in ("predicate", "dumps"):
            if k in kws:
                raise ctx.error(kws[k], f"{k}= on pl.at needs level=pl.Level.CORE_GROUP, got pl.Level.{level}",
                                help=f"only a CORE_GROUP scope becomes a dispatched task that can carry {k}=")
    attrs, options = {"level": level}, {}
    _common_dep_options(ctx, kws, options)
    add_name_hint(ctx, kws, attrs)
    if "optimizations" in kws:
        attrs.update(optimizations(ctx, kws["optimizations"], "pl.at", level, Builtin, T.SplitMode))
    if "no_dep_args" in kws:
        lst = kws["no_dep_args"]
        if not isinstance(lst, (ast.List, ast.Tuple)):
            raise ctx.error(lst, "no_dep_args= must be a list of tensor names")
        vals = []
        for el in lst.elts:
            if not isinstance(el, ast.Name):
                raise ctx.error(el, "no_dep_args= entries must be tensor names visible here")
            v = ctx.lookup(el.id)
            if v is None:
                raise ctx.unknown_name_error(el)
            if not isinstance(v.type, ir.TensorType):
                raise ctx.error(el, f"no_dep_args= entry '{el.id}' must be a tensor, it is {irtypes.describe(v.type)}",
                                help="no_dep_args= takes tensors; deps= takes task ids")
            vals.append(v)
        options["no_dep_args"] = vals
    auto_chunk = bool(attrs.get("auto_chunk"))
    if auto_chunk:   # §7 Decision: the reference silently drops these; ours refuses them
        for k in AUTO_CHUNK_REFUSED:
            if k in kws:
                raise ctx.error(kws[k], f"{k}= is not allowed on a pl.auto_chunk scope",
                                help="the compiler splits the scope into several kernels; put the option on a "
                                     "pl.at / pl.submit of its own outside the auto_chunk scope")
        if item.optional_vars is not None:
            raise ctx.error(item.optional_vars, "`as tid` is not allowed on a pl.auto_chunk scope",
                            help="the scope becomes several tasks, not one; drop `as ...`")
    if level == "CORE_GROUP":
        scope_dump_vars(ctx, kws.get("dumps"), attrs, "pl.at")
    tid_node = _tid_target(ctx, item)
    body, rebound, _ = _body(ctx, node, ScopeInfo("at", level, auto_chunk), node.body)
    _finish(ctx, node, ir.ScopeKind.At, attrs, options, body, rebound, tid_node)


def _spmd_attrs(ctx, call):
    kws = _kwargs(ctx, call, _SPMD_KW, "pl.spmd")
    if len(call.args) > 1:
        raise ctx.error(call.args[1], "pl.spmd takes one positional argument (core_num)")
    if call.args and "core_num" in kws:
        raise ctx.error(kws["core_num"], "pl.spmd got core_num twice")
    cn_node = call.args[0] if call.args else kws.get("core_num")
    if cn_node is None:
        raise ctx.error(call, "pl.spmd needs the number of blocks: pl.spmd(N, ...)")
    if any(s.kind == "cluster" for s in ctx.scopes):
        # deps= too: the spec says a scheduling pl.spmd cannot nest in pl.cluster(), and the
        # edge would silently vanish (the spmd never becomes a Submit of its own).
        for k in ("deps", "predicate", "allow_early_resolve"):
            if k in kws:
                raise ctx.error(kws[k], f"{k}= is not allowed on a pl.spmd nested inside pl.cluster()",
                                help="a pl.spmd inside pl.cluster() is expanded into the Group function and never "
                                     "becomes its own task; move the option to the cluster's caller")
    attrs, options = {"core_num": core_num(ctx, cn_node)}, {}
    if "sync_start" in kws:
        options["sync_start"] = bool_literal(ctx, kws["sync_start"], "sync_start")
    _common_dep_options(ctx, kws, options)
    add_name_hint(ctx, kws, attrs)
    if "optimizations" in kws:
        attrs.update(optimizations(ctx, kws["optimizations"], "pl.spmd", "", Builtin, T.SplitMode))
    if not any(s.kind == "cluster" for s in ctx.scopes):   # inside pl.cluster() the body's calls carry the tags
        scope_dump_vars(ctx, kws.get("dumps"), attrs, "pl.spmd")
    elif "dumps" in kws:
        raise ctx.error(kws["dumps"], "dumps= is not allowed on a pl.spmd nested inside pl.cluster()",
                        help="tag the tensor with pl.dump_tag before the cluster's calls")
    return attrs, options


def parse_spmd_for(ctx, node: ast.For):
    """for i in pl.spmd(N, ...): body  ->  ScopeStmt(Spmd, attrs, body, block_var=i)."""
    if not isinstance(node.target, ast.Name):
        raise ctx.error(node.target, "the block index of pl.spmd must be a plain name")
    _refuse_in_kernel_function(ctx, node.iter, "pl.spmd()")
    attrs, options = _spmd_attrs(ctx, node.iter)
    bv = ir.Var.make(node.target.id, ir.ScalarType.make(ir.DataType.INDEX), ctx.span(node.target))
    frame = Frame("scope")
    ctx.frames.append(frame)
    ctx.bind(bv.name, bv)
    ctx.scopes.append(ScopeInfo("spmd"))
    ctx.push_block()
    parse_body(ctx, node.body)
    block = ctx.pop_block()
    ctx.scopes.pop()
    ctx.frames.pop()
    for n, v in frame.vars.items():
        if n != bv.name:
            ctx.bind(n, v)
    ctx.emit(_scope(ir.ScopeKind.Spmd, attrs, options, make_body(block, ctx.span(node)), None, bv, ctx.span(node)))


def _carried_task_ids(ctx, call: ast.Call):
    """The printed ResolveTaskIds result ``carried_task_ids={"prev_2": 0, "prev_1": 4}`` of a runtime
    scope (TaskIds declared before the scope; value: pl.slots(N) array size or 0), removed from
    a copy of ``call`` without it, so the scope's own keyword checks see the rest. Returns
    ((node, [(name, slots), ...]) or None, call)."""
    kw = next((k for k in call.keywords if k.arg == "carried_task_ids"), None)
    if kw is None:
        return None, call
    call = copy.copy(call)
    call.keywords = [k for k in call.keywords if k is not kw]
    node = kw.value
    bad = ctx.error(node, 'carried_task_ids= must be a dict literal {"name": slots}, e.g. {"prev_2": 0}')
    if not isinstance(node, ast.Dict):
        raise bad
    named = []
    for k, v in zip(node.keys, node.values):
        if not (isinstance(k, ast.Constant) and isinstance(k.value, str) and isinstance(v, ast.Constant)
                and type(v.value) is int and v.value >= 0):
            raise bad
        named.append((k.value, v.value))
    return (node, named), call


def _exit_values(ctx, call: ast.Call):
    """The printed StampScopeExits result ``exit_values=["src_2", "steps_2"]`` of a runtime scope
    (loop / if results read after the block), removed from a copy of ``call`` like
    ``_carried_task_ids``. Returns ((node, [name, ...]) or None, call)."""
    kw = next((k for k in call.keywords if k.arg == "exit_values"), None)
    if kw is None:
        return None, call
    call = copy.copy(call)
    call.keywords = [k for k in call.keywords if k is not kw]
    node = kw.value
    if not (isinstance(node, ast.List) and all(isinstance(e, ast.Constant) and isinstance(e.value, str)
                                               for e in node.elts)):
        raise ctx.error(node, 'exit_values= must be a list literal of names, e.g. ["src_2"]')
    return (node, [e.value for e in node.elts]), call


@registry.handles("with")
def parse_with(ctx, node: ast.With, tail_yield: bool = False):
    """A with statement. Returns the YieldInfo of a trailing pl.yield_ inside a runtime scope
    (only with tail_yield, i.e. when the with statement ends a loop/branch body), else None."""
    if len(node.items) != 1:
        raise ctx.error(node, "a with statement takes exactly one scope", help="nest the with statements instead")
    item = node.items[0]
    call = item.context_expr
    b = _scope_builtin(ctx, call)
    if b.kind in ("cluster", "spmd"):
        _refuse_in_kernel_function(ctx, call, f"pl.{b.pl_name}()")
    if b.kind in ("manual_scope", "scope", "cluster"):
        carried, call = _carried_task_ids(ctx, call) if b.kind != "cluster" else (None, call)
        exit_values, call = _exit_values(ctx, call) if b.kind != "cluster" else (None, call)
        cluster_attrs = {}
        kind = {"manual_scope": "manual", "scope": "auto", "cluster": "cluster"}[b.kind]
        if b.kind == "cluster" and not call.args:
            add_name_hint(ctx, _kwargs(ctx, call, _CLUSTER_KW, "pl.cluster"), cluster_attrs)
        elif b.kind == "scope" and call.keywords:
            kind = scope_mode(ctx, call, T.ScopeMode)     # pl.scope(mode=pl.ScopeMode.X)
        elif call.args or call.keywords:
            raise ctx.error(call, f"pl.{b.pl_name}() takes no arguments")
        if item.optional_vars is not None:
            raise ctx.error(item.optional_vars, f"pl.{b.pl_name}() does not bind a value",
                            help="`as tid` is available on pl.at(...) and pl.spmd(...)")
        if kind == "auto" and ctx.in_manual_scope():
            raise ctx.error(call, "pl.scope() cannot be nested inside pl.manual_scope(): the runtime refuses an "
                            "automatic scope opened in a manual one",
                            help="close the pl.manual_scope() first, or drop the inner pl.scope()")
        if kind == "manual" and ctx.in_manual_scope():
            raise ctx.error(call, "a manual scope cannot be nested inside another manual scope",
                            help="drop the inner scope: its body is already outside automatic tracking")
        body, _, yinfo = _body(ctx, node, ScopeInfo(kind), node.body, tail_yield and b.kind != "cluster")
        sp = ctx.span(node)
        if b.kind == "cluster":
            ctx.emit(ir.ScopeStmt.make(ir.ScopeKind.Cluster, cluster_attrs, body, None, None, sp))
        else:
            mode = ir.RuntimeScopeMode.Manual if kind == "manual" else ir.RuntimeScopeMode.Auto
            scope = ir.RuntimeScopeStmt.make(mode, body, sp)
            if carried:
                node, named = carried
                try:
                    scope = scope.with_carried_task_ids_named(named)
                except ValueError as e:
                    raise ctx.error(node, f"carried_task_ids=: {e}") from None
            if exit_values:
                node, named = exit_values
                try:
                    scope = scope.with_exit_values_named(named)
                except ValueError as e:
                    raise ctx.error(node, f"exit_values=: {e}") from None
            ctx.emit(scope)
        return yinfo
    if b.kind == "at":
        _at(ctx, node, item, call)
        return None
    attrs, options = _spmd_attrs(ctx, call)
    tid_node = _tid_target(ctx, item)
    body, rebound, _ = _body(ctx, node, ScopeInfo("spmd"), node.body)
    _finish(ctx, node, ir.ScopeKind.Spmd, attrs, options, body, rebound, tid_node)
    return None
