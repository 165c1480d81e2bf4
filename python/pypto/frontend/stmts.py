"""Statement handlers: one function per ``ast`` statement node, dispatched by ``parse_body``.

    c = self.k(a, b, c)          AssignStmt(c', Call)           (a new SSA Var per assignment)
    p, m = self.k2(s, p, m)      AssignStmt(tmp, Call); p' = tmp[0]; m' = tmp[1]
    tids[k] = tid                tids' = array.update_element(tids, k, tid)
    self.k(a)                    EvalStmt(Call)
    return d                     ReturnStmt([d])

Loops and branches live in control_flow.py, `with` scopes in scopes.py.
"""

from __future__ import annotations

import ast
import re

from pypto._core import ir
from pypto.errors import PyptoError
from pypto.frontend import irtypes, registry
from pypto.frontend.dumps import parse_dump_tag
from pypto.frontend.annotations import parse_type
from pypto.frontend.annotation_check import reconcile_annotation
from pypto.frontend.exprs import eval_expr, index_exprs, require_scalar, scalar_operand
from pypto.frontend.pyeval import try_eval_py
from pypto.frontend.shape_access import unpack_shape
from pypto.language import _types as T
from pypto.language._builtins import Builtin


class YieldInfo:
    """A trailing ``[targets =] pl.yield_(values...)`` of a body."""

    def __init__(self, node, targets, values):
        self.node, self.targets, self.values = node, targets, values
        self.emitted = False     # True when the YieldStmt was already emitted inside a runtime scope


def make_body(stmts: list, span):
    """A statement list -> one Stmt (the statement itself when there is exactly one)."""
    return stmts[0] if len(stmts) == 1 else ir.SeqStmts.make(stmts, span)


def _builtin_kind(ctx, node):
    """The Builtin kind ('submit', 'yield', ...) of a call node's callee, or None."""
    if not isinstance(node, ast.Call):
        return None
    b = try_eval_py(ctx, node.func, None)
    return b.kind if isinstance(b, Builtin) else None


def parse_body(ctx, body: list, allow_yield: bool = False):
    """Parse statements into ctx's current block. Returns a YieldInfo when the last statement
    is a pl.yield_ (only allowed with allow_yield), else None. A trailing `with pl.scope():` /
    `with pl.manual_scope():` may itself end with the yield (the form MaterializeRuntimeScopes
    produces: the YieldStmt sits inside the runtime scope); its YieldInfo is returned too."""
    yinfo = None
    last_i = _last_effective(body)
    for i, st in enumerate(body):
        if type(st) is ast.Pass and hasattr(st, "pypto_calls"):
            # A masked run of `x = self.k(...)` lines (call_runs.py): its statements come back
            # as ast when they must be parsed the ordinary way.
            rest = registry.handler("call_run")(ctx, st)
            if rest is not None:
                return parse_body(ctx, rest + body[i + 1:], allow_yield)
            continue
        # The builtin an expression / assignment statement calls, resolved once per statement.
        kind = _builtin_kind(ctx, st.value) if isinstance(st, (ast.Expr, ast.Assign)) else None
        if kind == "yield":
            y = _yield_info(ctx, st)
            if not allow_yield and y.targets and len(ctx.frames) == 1 and not ctx.scopes:
                _function_level_yield(ctx, st, y)
                continue
            if not allow_yield:
                raise ctx.error(st, "pl.yield_(...) must be the last statement of a loop or if/else body",
                                help="loops yield only with init_values=; branches yield in both if and else")
            if i != last_i:
                raise ctx.error(st, "pl.yield_(...) must be the last statement of a loop or if/else body: the "
                                "statements after it would not be carried",
                                help="move the pl.yield_ down, after the statements that compute the yielded values "
                                     "(only pass, docstrings and ... may follow it)")
            yinfo = y
            continue
        if isinstance(st, (ast.For, ast.If, ast.With)):
            ctx.rest.append((body, i + 1))   # what follows, for names read after a loop (§17)
            try:
                if allow_yield and i == last_i and isinstance(st, ast.With):
                    yinfo = run_stmt(ctx, st, tail_yield=True)
                else:
                    run_stmt(ctx, st, call_kind=kind)
            finally:
                ctx.rest.pop()
            continue
        run_stmt(ctx, st, call_kind=kind)
    return yinfo


def _is_inert(st) -> bool:
    """`pass`, a docstring or `...`: statements that do nothing (they may follow a pl.yield_)."""
    return isinstance(st, ast.Pass) or (isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant)
                                        and (isinstance(st.value.value, str) or st.value.value is Ellipsis))


def _last_effective(body: list) -> int:
    """Index of the last statement of `body` that is not inert (spec anchor_features §13)."""
    k = len(body) - 1
    while k > 0 and _is_inert(body[k]):
        k -= 1
    return k


def _function_level_yield(ctx, st, y) -> None:
    """`x = pl.yield_(v)` outside every loop, branch and scope: read as `x = v` with a warning
    (a deprecated seed spelling of the reference DSL; spec anchor_features §13)."""
    names = ", ".join(t.id for t in y.targets)
    ctx.src.warn(st, f"pl.yield_ outside a loop or branch is read as a plain assignment '{names} = ...' "
                 "(deprecated seed spelling): write the assignment without pl.yield_")
    for t, v in zip(y.targets, y.values):
        bind_new(ctx, t, v, st)


_UNPEEKED = object()


def run_stmt(ctx, st, tail_yield: bool = False, call_kind=_UNPEEKED):
    """Parse one statement. `call_kind`: the already resolved _builtin_kind of an assignment's value."""
    if ctx.returned:
        raise ctx.error(st, "statement after return", help="return must be the last statement of the function")
    h = HANDLERS.get(type(st))
    if h is None:
        raise unsupported_stmt(ctx, st)
    try:
        if tail_yield:
            return h(ctx, st, tail_yield=True)
        if h is _assign:
            return _assign(ctx, st, call_kind)
        return h(ctx, st)
    except PyptoError:
        raise
    except Exception as e:  # noqa: BLE001 - never let a bare Python error escape unlocated
        raise ctx.error(st, f"internal parser error on this statement: {type(e).__name__}: {e}") from e


def _yield_info(ctx, st):
    """The YieldInfo of an expression / assignment statement whose call is pl.yield_."""
    call = st.value
    if isinstance(st, ast.Expr):
        targets = None
    else:
        if len(st.targets) != 1:
            raise ctx.error(st, "pl.yield_ takes a single assignment target list")
        t = st.targets[0]
        elts = t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]
        for e in elts:
            if not isinstance(e, ast.Name):
                raise ctx.error(e, "pl.yield_ targets must be plain names")
        targets = elts
    if call.keywords:
        raise ctx.error(call, "pl.yield_ takes positional values only")
    values = [eval_expr(ctx, a) for a in call.args]
    if targets is not None and len(targets) != len(values):
        raise ctx.error(st, f"pl.yield_ yields {len(values)} values but {len(targets)} names are assigned")
    return YieldInfo(st, targets, values)


# -- assignment ---------------------------------------------------------------------------
def bind_new(ctx, name_node: ast.Name, value, stmt):
    """name = value: a new Var (named like the target) bound in the current frame."""
    v = ir.Var.make(name_node.id, value.type, ctx.span(name_node))
    ctx.emit(ir.AssignStmt.make(v, value, ctx.span(stmt)))
    ctx.bind(name_node.id, v)
    ctx.defs[v] = value
    if isinstance(value, ir.Call) and value.callee == "system.task_dummy":
        ctx.barriers[v] = list(value.manual_dep_edges)
    return v


def unpack_into(ctx, targets: ast.AST, value, stmt) -> list:
    """`a, b = <tuple-typed value>`: tmp = value; a = tmp[0]; b = tmp[1]. Placeholder targets
    (`_`, or the printer's `__1`, `__2`, ...) are bound like any name. Returns the bound Vars."""
    t = value.type
    elts = targets.elts
    if not isinstance(t, ir.TupleType):
        raise ctx.error(stmt, f"cannot unpack {irtypes.describe(t)} into {len(elts)} names")
    if len(t.elements) != len(elts):
        raise ctx.error(targets, f"the value has {len(t.elements)} elements but {len(elts)} names are unpacked")
    for e in elts:
        if not isinstance(e, ast.Name):
            raise ctx.error(e, "unpacking targets must be plain names")
    sp = ctx.span(stmt)
    tmp = ir.Var.make("_".join(e.id for e in elts if not is_placeholder(e.id)) + "_tuple", t, sp)
    ctx.emit(ir.AssignStmt.make(tmp, value, sp))
    return [bind_new(ctx, e, ir.TupleGetItem.make(tmp, k, ctx.span(e)), stmt) for k, e in enumerate(elts)]


def is_placeholder(name: str) -> bool:
    """`_` and the printer's fresh placeholders `__1`, `__2`, ...: unpacking targets nobody reads."""
    return re.fullmatch(r"_(_\d+)?", name) is not None


def _assign_subscript(ctx, target: ast.Subscript, value_node, stmt):
    if not isinstance(target.value, ast.Name):
        raise ctx.error(target, "only array slots can be assigned: arr[k] = v")
    arr = ctx.lookup(target.value.id)
    if arr is None:
        raise ctx.unknown_name_error(target.value)
    if isinstance(arr.type, ir.TileType):
        _assign_tile_subscript(ctx, target, arr, value_node, stmt)
        return
    if not isinstance(arr.type, ir.ArrayType):
        help_ = "only pl.Array slots and tiles can be assigned"
        if isinstance(arr.type, ir.TensorType):   # the element sugar is the reference's for tiles only
            items = target.slice.elts if isinstance(target.slice, ast.Tuple) else [target.slice]
            index = ", ".join(ast.unparse(it) for it in items)
            help_ = (f"write an element with pl.tensor.write({target.value.id}, [{index}], value) "
                     f"(or pl.write); a block with pl.tensor.assemble")
        raise ctx.error(target, f"cannot assign to an element of {irtypes.describe(arr.type)}", help=help_)
    if isinstance(target.slice, ast.Tuple):
        raise ctx.error(target.slice, "an array takes one index")
    k = eval_expr(ctx, target.slice)
    v = scalar_operand(ctx, eval_expr(ctx, value_node))
    if ctx.is_orchestration and isinstance(v, ir.Call):
        # `a[k] = None` (system.task_invalid) and other calls are named first, as an element read
        # is (`a[k] = b[j]`): the generators print a slot's value from names and literals.
        named = ir.Var.make(target.value.id + "_value", v.type, v.span)
        ctx.emit(ir.AssignStmt.make(named, v, v.span))
        v = named
    upd = ir.Call.make_op("array.update_element", [arr, k, v], {}, ctx.span(stmt))
    bind_new(ctx, target.value, upd, stmt)


def _assign_tile_subscript(ctx, target: ast.Subscript, tile, value_node, stmt):
    """The reference's tile sugar (reference_ops.md §9, §10): `t[i, j] = v` is the in-place
    `pl.tile.write(t, [i, j], v)`; `t[r:r + h, c:c + w] = s` is `t = pl.tile.assemble(t, s, [r, c])`."""
    items = target.slice.elts if isinstance(target.slice, ast.Tuple) else [target.slice]
    span = ctx.span(stmt)
    if not any(isinstance(it, ast.Slice) for it in items):
        idx = ir.MakeTuple.make(index_exprs(ctx, target), ctx.span(target.slice))
        v = eval_expr(ctx, value_node)
        ctx.emit(ir.EvalStmt.make(ir.Call.make_op("tile.write", [tile, idx, v], {}, span), span))
        return
    if len(items) != len(tile.type.shape) or not all(isinstance(it, ast.Slice) and it.step is None for it in items):
        raise ctx.error(target.slice, f"a tile slice target needs one 'start:stop' per axis "
                        f"({len(tile.type.shape)}) and no step", help="e.g. t[0:8, :] = s")
    offset = [ir.ConstInt.make(0, ir.DataType.INDEX, span) if it.lower is None
              else require_scalar(ctx, eval_expr(ctx, it.lower), it.lower, "a slice start") for it in items]
    src = eval_expr(ctx, value_node)
    if not isinstance(src.type, ir.TileType):
        raise ctx.error(value_node, f"a tile slice is assigned a tile, got {irtypes.describe(src.type)}")
    upd = ir.Call.make_op("tile.assemble", [tile, src, ir.MakeTuple.make(offset, span)], {}, span)
    bind_new(ctx, target.value, upd, stmt)


def _assign_each(ctx, targets, value_node, stmt) -> bool:
    """`a, b = b, a` (every value evaluated before any name is bound, as in Python) and
    `m, n = x.shape`; False for any other value (a call returning a tuple)."""
    if isinstance(value_node, (ast.Tuple, ast.List)):
        starred = [e for e in value_node.elts if isinstance(e, ast.Starred)]
        if starred:
            raise ctx.error(starred[0], f"unpacking with * ('{ast.unparse(starred[0])}') is not supported",
                            help="write one value per name: a, b = x, y")
        if len(value_node.elts) != len(targets.elts):
            raise ctx.error(value_node, f"{len(targets.elts)} names are assigned {len(value_node.elts)} values",
                            help="assign one value per name: a, b = b, a")
        pairs = [(t, eval_expr(ctx, v)) for t, v in zip(targets.elts, value_node.elts)]
    else:
        pairs = unpack_shape(ctx, targets, value_node)
        if pairs is None:
            return False
    for t, _ in pairs:
        if not isinstance(t, ast.Name):
            raise ctx.error(t, "unpacking targets must be plain names")
    for t, v in pairs:
        bind_new(ctx, t, v, stmt)
    return True


def _assign(ctx, st: ast.Assign, kind=_UNPEEKED):
    if len(st.targets) != 1:
        raise ctx.error(st, "chained assignment (a = b = ...) is not supported", help="assign each name separately")
    target = st.targets[0]
    starred = [e for e in getattr(target, "elts", ()) if isinstance(e, ast.Starred)]
    if starred:
        raise ctx.error(starred[0], f"starred assignment ('{ast.unparse(starred[0])}') is not supported",
                        help="unpack into one name per value: a, b, c = 1, 2, 3")
    if kind is _UNPEEKED:
        kind = _builtin_kind(ctx, st.value)
    if kind in ("submit", "spmd_submit"):
        registry.handler("submit")(ctx, st.value, kind, target, st)
        return
    if isinstance(target, ast.Subscript):
        _assign_subscript(ctx, target, st.value, st)
        return
    if isinstance(target, ast.Name) and isinstance(st.value, ast.IfExp):
        v = registry.handler("ifexp")(ctx, st.value, target.id)    # the if's result is the name itself
        if isinstance(v, ir.Var) and v.name == target.id and ctx.lookup(target.id) is not v:
            ctx.bind(target.id, v)
            return
        bind_new(ctx, target, v, st)
        return
    if isinstance(target, ast.Name):
        bind_new(ctx, target, eval_expr(ctx, st.value), st)
        return
    if isinstance(target, (ast.Tuple, ast.List)):
        if _assign_each(ctx, target, st.value, st):
            return
        unpack_into(ctx, target, eval_expr(ctx, st.value), st)
        return
    raise ctx.error(target, f"cannot assign to '{ast.unparse(target)}'", help="assign to a plain name")


def types_match(a, b) -> bool:
    return a == b   # structural equality of IR types


def _unresolvable_annotation(ctx, node) -> bool:
    """A string forward reference (`t: "Tile"`) or `pl.UnknownType`: anchor_features §14's R skips
    them (the value keeps its own type)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return True
    return try_eval_py(ctx, node, None) is T.UnknownType


def _ann_assign(ctx, st: ast.AnnAssign):
    """`x: T = e` with the annotation rules of anchor_features.md §14 (see annotation_check.py)."""
    if not isinstance(st.target, ast.Name):
        raise ctx.error(st.target, "annotated assignment needs a plain name target")
    if st.value is None:
        raise ctx.error(st, f"'{st.target.id}' is declared without a value", help="write name: Type = value")
    if _unresolvable_annotation(ctx, st.annotation):
        bind_new(ctx, st.target, eval_expr(ctx, st.value), st)   # skipped, as the reference does (§14)
        return
    ann, _ = parse_type(ctx, st.annotation)
    value = eval_expr(ctx, st.value)
    if not types_match(ann, value.type):
        value = reconcile_annotation(ctx, st, ann, value)
    bind_new(ctx, st.target, value, st)


def _aug_assign(ctx, st: ast.AugAssign):
    if not isinstance(st.target, ast.Name):
        raise ctx.error(st, "augmented assignment is only supported on scalar names")
    cur = ctx.lookup(st.target.id)
    if cur is None:
        raise ctx.unknown_name_error(st.target)
    if not isinstance(cur.type, ir.ScalarType):
        raise ctx.error(st, f"augmented assignment on {irtypes.describe(cur.type)} is not supported",
                        help=f"write {st.target.id} = pl.add({st.target.id}, ...) (tiles) or call a kernel (tensors)")
    binop = ast.BinOp(left=ast.Name(st.target.id, ast.Load()), op=st.op, right=st.value)
    ast.copy_location(binop, st)
    binop.end_lineno, binop.end_col_offset = st.end_lineno, st.end_col_offset
    ast.copy_location(binop.left, st.target)
    bind_new(ctx, st.target, eval_expr(ctx, binop), st)


def _expr_stmt(ctx, st: ast.Expr):
    v = st.value
    if isinstance(v, ast.Constant) and (isinstance(v.value, str) or v.value is Ellipsis):
        return                                     # docstring / `...` placeholder
    if not isinstance(v, ast.Call):
        raise ctx.error(st, f"expression statement '{ast.unparse(v)}' has no effect",
                        help="only calls may stand alone as statements")
    b = try_eval_py(ctx, v.func, None)
    if isinstance(b, Builtin) and b.kind == "dump_tag":
        parse_dump_tag(ctx, v)                     # marks only: no IR
        return
    e = eval_expr(ctx, v)
    if (ctx.is_orchestration and isinstance(e, ir.Call) and e.is_op and e.callee == "tensor.write"
            and isinstance(v.args[0] if v.args else None, ast.Name)):
        bind_new(ctx, v.args[0], e, st)            # t = pl.tensor.write(t, ...): the write stays in the IR
        return                                     # (assigned_names counts it: _rebound_by_write)
    ctx.emit(ir.EvalStmt.make(e, ctx.span(st)))


def _tensor_types_differ(a, b) -> bool:
    """dtype, rank or a constant extent differs (dynamic extents are not compared)."""
    if a.dtype != b.dtype or len(a.shape) != len(b.shape):
        return True
    return any(isinstance(x, ir.ConstInt) and isinstance(y, ir.ConstInt) and x.value != y.value
               for x, y in zip(a.shape, b.shape))


def _return(ctx, st: ast.Return):
    if len(ctx.frames) > 1 or ctx.scopes:
        raise ctx.error(st, "return is only allowed at the top level of a function body",
                        help="assign the value inside the loop/branch/scope and return it after (a return may "
                             "also end a pl.scope() / pl.manual_scope() block that ends the function)")
    if st.value is None:
        values = []
    elif isinstance(st.value, ast.Tuple):
        values = [eval_expr(ctx, e) for e in st.value.elts]
    else:
        values = [eval_expr(ctx, st.value)]
    want = ctx.sig.return_types
    if len(values) != len(want):
        raise ctx.error(st, f"'{ctx.sig.name}' declares {len(want)} return value(s) but returns {len(values)}",
                        help="make the return statement match the -> annotation")
    nodes = st.value.elts if isinstance(st.value, ast.Tuple) else [st.value]
    for v, t, n in zip(values, want, nodes):
        if irtypes.kind_of(v.type) != irtypes.kind_of(t):
            raise ctx.error(n, f"return value is {irtypes.describe(v.type)} but '{ctx.sig.name}' declares "
                            f"{irtypes.type_str(t)}")
        if isinstance(t, ir.TensorType) and isinstance(v.type, ir.TensorType) and _tensor_types_differ(v.type, t):
            raise ctx.error(n, f"return value is {irtypes.type_str(v.type)} but '{ctx.sig.name}' declares "
                            f"{irtypes.type_str(t)}", help="make the -> annotation match the returned tensor")
    ctx.emit(ir.ReturnStmt.make(values, ctx.span(st)))
    ctx.returned = True


def _assert(ctx, st: ast.Assert):
    """`assert cond` / `assert cond, "message"`: op system.assert, which fails the run at this line
    when cond (a number's truth) is false, in every kind of function. The message is a string
    literal or constant (Python evaluates it only on failure; here it is fixed text)."""
    cond = scalar_operand(ctx, eval_expr(ctx, st.test))
    if not isinstance(cond.type, ir.ScalarType) or cond.type.dtype == ir.DataType.TASK_ID:
        raise ctx.error(st.test, f"assert needs a number or a bool as its condition, got {irtypes.describe(cond.type)}",
                        help="compare values to make a condition: assert n > 0")
    attrs = {}
    if st.msg is not None:
        msg = try_eval_py(ctx, st.msg, None)
        if not isinstance(msg, str):
            raise ctx.error(st.msg, f"the message of an assert must be a string constant, got '{ast.unparse(st.msg)}'",
                            help='write assert n > 0, "n must be positive" (f-strings and values are not supported)')
        if msg:
            attrs["message"] = msg
    sp = ctx.span(st)
    ctx.emit(ir.EvalStmt.make(ir.Call.make_op("system.assert", [cond], attrs, sp), sp))


def _pass(ctx, st):
    return


def _for(ctx, st):
    registry.handler("for")(ctx, st)


def _if(ctx, st):
    registry.handler("if")(ctx, st)


def _with(ctx, st, tail_yield=False):
    return registry.handler("with")(ctx, st, tail_yield)


_UNSUPPORTED_HELP = {
    "While": "use `for i in pl.range(n):` (loops need a known trip count)",
    "Try": "the DSL has no exceptions", "Raise": "the DSL has no exceptions",
    "Import": "import modules at module level, outside the @pl.program class",
    "ImportFrom": "import modules at module level, outside the @pl.program class",
    "FunctionDef": "define functions as @pl.function methods of the @pl.program class",
    "ClassDef": "define classes at module level", "Global": "", "Nonlocal": "", "Delete": "",
    "AsyncFor": "", "AsyncWith": "", "Match": "use if/elif/else",
    "Break": "loops always run their full trip count", "Continue": "use if/else inside the loop body",
}


def unsupported_stmt(ctx, st):
    what = type(st).__name__
    first = ast.unparse(st).splitlines()[0] if hasattr(ast, "unparse") else what
    help_ = _UNSUPPORTED_HELP.get(what) or ("supported statements: assignments, calls, return, "
                                            "for ... in pl.range/pl.parallel/pl.spmd, if/else, with pl.<scope>(), pass")
    return ctx.error(st, f"unsupported Python statement ({what.lower()}): '{first}'", help=help_)


HANDLERS = {
    ast.Assign: _assign, ast.AnnAssign: _ann_assign, ast.AugAssign: _aug_assign, ast.Expr: _expr_stmt,
    ast.Return: _return, ast.Pass: _pass, ast.For: _for, ast.If: _if, ast.With: _with, ast.Assert: _assert,
}


def _rebound_by_write(ctx, st) -> str | None:
    """The tensor a statement `pl.tensor.write(t, ...)` / `pl.write(t, ...)` of an orchestration
    rebinds (_expr_stmt binds its result to `t`), else None."""
    if not (ctx.is_orchestration and isinstance(st, ast.Expr) and isinstance(st.value, ast.Call)):
        return None
    call = st.value
    if not call.args or not isinstance(call.args[0], ast.Name):
        return None
    b = try_eval_py(ctx, call.func, None)
    if isinstance(b, Builtin) and (b.kind == "write" or (b.kind == "op" and b.spec.op == "tensor.write")):
        return call.args[0].id
    return None


def assigned_names(body: list, ctx) -> list:
    """Names (re)bound anywhere in `body`, in first-assignment order (for loop carries). A write
    statement of an orchestration rebinds its tensor: without it here, a loop writing a tensor
    parameter made it a name first bound in the body, seeded with a fresh tensor that later
    writes went to when the loop ran no iteration (orch_flow_fuzz.py, seed 0)."""
    out: list[str] = []

    def add(n):
        if n not in out:
            out.append(n)

    def targets(t):
        if isinstance(t, ast.Name):
            add(t.id)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                targets(e)
        elif isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
            add(t.value.id)
        elif isinstance(t, ast.Starred):
            targets(t.value)

    def walk(stmts):
        for s in stmts:
            if isinstance(s, ast.Assign):
                for t in s.targets:
                    targets(t)
            elif isinstance(s, (ast.AnnAssign, ast.AugAssign)):
                targets(s.target)
            elif (written := _rebound_by_write(ctx, s)) is not None:
                add(written)
            elif type(s) is ast.Pass and hasattr(s, "pypto_calls"):   # a masked run (call_runs.py)
                for name in s.pypto_calls.targets:
                    add(name)
            elif isinstance(s, ast.For):
                walk(s.body)
                walk(s.orelse)
            elif isinstance(s, ast.If):
                walk(s.body)
                walk(s.orelse)
            elif isinstance(s, ast.With):
                for it in s.items:
                    if it.optional_vars is not None:
                        targets(it.optional_vars)
                walk(s.body)
    walk(body)
    return out
