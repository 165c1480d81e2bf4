"""Names first bound in a loop body and read after the loop (spec anchor_features.md §17).

Python keeps such a name alive after the loop; the frontend makes it an implicit loop carry,
seeded before the loop for the zero-trip case:

    for i in pl.range(n):                 t_seed = pl.create_tensor([16, 16], dtype=pl.FP32)
        t = pl.create_tensor(...)   ==>   for i, (t_iter,) in pl.range(n, init_values=(t_seed,)):
        t = self.k(x, t)                      t = pl.create_tensor(...); t = self.k(x, t)
    out = self.k2(t, out)                     t_out = pl.yield_(t)

Seeds: a tensor -> `tensor.create` of the same type (orchestration functions only); a TaskId ->
invalid (`None`); a bool -> False; other scalars -> 0. MaterializeRuntimeScopes then keeps the
body's allocation alive past the iteration's runtime scope (it lifts it before that scope).
"""

from __future__ import annotations

import ast

from pypto._core import ir


def _reads(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in ast.walk(node))


def _binds(st: ast.stmt, name: str) -> bool:
    """`name = ...` / `name: T = ...` / `a, name = ...` rebinds `name` unconditionally."""
    targets = st.targets if isinstance(st, ast.Assign) else [st.target]
    for t in targets:
        for n in ([t] if isinstance(t, ast.Name) else getattr(t, "elts", [])):
            if isinstance(n, ast.Name) and n.id == name:
                return True
    return False


def _first_use(stmts: list, name: str):
    """True: `name` is read before being rebound; False: rebound first on every path; None: neither."""
    for st in stmts:
        if isinstance(st, ast.With):
            if any(_reads(it.context_expr, name) for it in st.items):
                return True
            r = _first_use(st.body, name)
            if r is not None:
                return r
        elif isinstance(st, ast.For):
            # a read in the body counts; a rebind there does not hide what follows (no iteration may run)
            if _reads(st.iter, name) or _first_use(st.body, name) or _first_use(st.orelse, name):
                return True
        elif isinstance(st, ast.If):
            if _reads(st.test, name):
                return True
            then, orelse = _first_use(st.body, name), _first_use(st.orelse, name)
            if then or orelse:
                return True
            if then is False and orelse is False:   # rebound on both paths
                return False
        elif isinstance(st, (ast.Assign, ast.AnnAssign)):
            if st.value is not None and _reads(st.value, name):
                return True
            if _binds(st, name):
                return False
            if _reads(st, name):            # a subscript target arr[name] = ...
                return True
        elif _reads(st, name):
            return True
    return None


def read_after_loop(ctx, name: str) -> bool:
    """Is `name` read after the loop being parsed (in its enclosing bodies, innermost first)?"""
    for body, start in reversed(ctx.rest):
        r = _first_use(body[start:], name)
        if r is not None:
            return r
    return False


def _read_after(ctx, node: ast.For, name: str) -> bool:
    """Is `name` read after the enclosing loop `node` (whose body holds the statement being parsed)?"""
    outside = False
    for body, start in reversed(ctx.rest):
        outside = outside or (start >= 1 and body[start - 1] is node)
        if outside:
            r = _first_use(body[start:], name)
            if r is not None:
                return r
    return False


def enclosing_loop_carry(ctx, name: str, t):
    """The value an inner loop's implicit carry of the scalar `name` starts from, when an enclosing
    loop must carry it too; else None (the carry is seeded with 0 / False).

    Python keeps a name bound in an earlier iteration of an enclosing loop:

        for i in pl.range(3):
            for j in pl.range(k[i]):   # on an iteration where this loop runs no iteration,
                last = j               # `last` is still the value of an earlier one,
        out = ... last ...             # not 0

    When the innermost enclosing implicit loop reads `name` around its back edge or after it, that
    loop carries it (an IterArg registered in its frame's `pending`, seeded before it once its body is
    parsed) and the inner loop starts from that IterArg. Not for TaskIds: their carries through
    pl.parallel loops are arrays (docs/dsl.md "TaskId carries")."""
    if not isinstance(t, ir.ScalarType) or t.dtype == ir.DataType.TASK_ID:
        return None
    for f in reversed(ctx.frames):
        if f.kind == "function":
            return None
        if f.kind != "loop":
            continue
        if f.node is None:      # an init_values= loop carries only what it declares
            return None
        if name not in f.pending:
            if _first_use(f.node.body, name) is not True and not _read_after(ctx, f.node, name):
                return None
            sp = ctx.span(f.node)
            seed = ir.Var.make(name, t, sp)
            f.pending[name] = (seed, ir.IterArg.make(name, t, seed, sp))
            f.vars.setdefault(name, f.pending[name][1])
        return f.pending[name][1]
    return None


def dead_on_entry(ctx, node: ast.For, name: str) -> bool:
    """Does the loop `node` rebind `name` before any read in its body, with the name read neither
    after the loop nor around the back edge of an enclosing loop? Then no value of it flows into
    or out of the loop, and each iteration's value is its own."""
    if _first_use(node.body, name) is not False or read_after_loop(ctx, name):
        return False
    for body, start in ctx.rest:   # body[start - 1] is the compound statement holding the loop (or the loop)
        st = body[start - 1]
        if st is not node and isinstance(st, ast.For) and _first_use(st.body, name):
            return False
    return True


def _vars_in(e, out: list) -> list:
    if isinstance(e, ir.Var):
        out.append(e)
    for attr in ("a", "b", "value"):
        sub = getattr(e, attr, None)
        if isinstance(sub, ir.Expr):
            _vars_in(sub, out)
    return out


def _visible_before_loop(ctx, v) -> bool:
    """`v` (a Var in a shape) is bound outside the loop body: a parameter, a dynamic dim or an
    enclosing name (ctx.frames no longer holds the loop frame)."""
    if any(d.same_as(v) for d in ctx.prog.dyn_vars.values()):
        return True
    outer = ctx.lookup(v.name)
    return outer is not None and outer.same_as(v)


def seed_for(ctx, name: str, t, node: ast.For, use_line: int):
    """The seed value of an escaping name of type `t`, or None when the type has no seed.
    Raises a located error for a tensor whose shape is computed inside the loop body."""
    sp = ctx.span(node)
    if isinstance(t, ir.ScalarType):
        if t.dtype == ir.DataType.TASK_ID:
            return ir.Call.make_op("system.task_invalid", [], {}, sp)
        if t.dtype == ir.DataType.BOOL:
            return ir.ConstBool.make(False, sp)
        if t.dtype in (ir.DataType.FP32, ir.DataType.FP16, ir.DataType.BF16):
            return ir.ConstFloat.make(0.0, t.dtype, sp)
        return ir.ConstInt.make(0, t.dtype, sp)
    if isinstance(t, ir.TensorType) and ctx.is_orchestration:
        for d in t.shape:
            for v in _vars_in(d, []):
                if not _visible_before_loop(ctx, v):
                    raise ctx.error(node.iter, f"'{name}' is used after this loop (line {use_line}), but its shape "
                                    f"depends on '{v.name}', which is computed inside the loop body",
                                    help=f"compute the shape before the loop, or create '{name}' before the loop "
                                         "with pl.create_tensor(...) and reassign it in the body")
        attrs = {"dtype": t.dtype.name}
        if t.layout != ir.Layout.ND:
            attrs["layout"] = t.layout.name
        return ir.Call.make_op("tensor.create", [ir.MakeTuple.make(list(t.shape), sp)], attrs, sp)
    return None


def first_read_line(ctx, name: str) -> int:
    """The source line of the first read of `name` after the loop (for messages)."""
    for body, start in reversed(ctx.rest):
        for st in body[start:]:
            for n in ast.walk(st):
                if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load):
                    return n.lineno + ctx.src.line_offset
    return 0
