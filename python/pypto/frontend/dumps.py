"""Selective tensor dumps (spec anchor_features §6): the ``pl.dump_tag(t)`` statement and the
``dumps=[...]`` keyword of pl.submit / pl.spmd_submit and of the scopes pl.at / pl.spmd.

    pl.dump_tag(x)                                  # every later task consuming this x dumps it
    out, tid = pl.submit(self.k, x, out, dumps=[out])
    with pl.at(level=pl.Level.CORE_GROUP, dumps=[y]):   # scope attr dump_vars = [y, x (tagged)]

Marks land in the typed ``dump_vars`` field of the Call / Submit; codegen writes
``params_tN.dump(...)`` and the CPU runtime records the marks (docs/dsl.md).
"""

from __future__ import annotations

import ast

from pypto._core import ir
from pypto.frontend.diagnostics import a_or_an

_DUMP_TAG_FUNCS = (ir.FunctionType.Orchestration, ir.FunctionType.Inline)


def parse_dump_tag(ctx, node: ast.Call) -> None:
    """`pl.dump_tag(t)`: tags the SSA value bound to `t` (forward-sticky by value identity). No IR."""
    if ctx.sig.ftype not in _DUMP_TAG_FUNCS:
        # (The spec allows Inline functions too; pypto refuses pl.FunctionType.Inline itself.)
        raise ctx.error(node, f"pl.dump_tag is only allowed in Orchestration functions, not in "
                        f"'{ctx.sig.name}' ({a_or_an(ctx.sig.ftype.name)} function)",
                        help="tag the tensor in the orchestration that submits the kernel")
    if node.keywords or len(node.args) != 1:
        raise ctx.error(node, "pl.dump_tag takes exactly one positional argument: the name of a tensor",
                        help="write pl.dump_tag(x)")
    arg = node.args[0]
    if not isinstance(arg, ast.Name):
        raise ctx.error(arg, f"pl.dump_tag needs the bare name of a tensor, not '{ast.unparse(arg)}'",
                        help="bind the value first: t = ...; pl.dump_tag(t)")
    v = ctx.lookup(arg.id)
    if v is None:
        raise ctx.unknown_name_error(arg)
    if not (isinstance(v, ir.Var) and isinstance(v.type, ir.TensorType)):
        raise ctx.error(arg, f"pl.dump_tag needs a tensor, but '{arg.id}' is not one",
                        help="only whole-tensor task arguments can be dumped")
    ctx.dump_tags.append(v)


def parse_dumps(ctx, node: ast.AST, args: list, what: str) -> list:
    """`dumps=[x, ...]` of a submit: tensor Vars passed positionally to it (duplicates dropped)."""
    if not isinstance(node, (ast.List, ast.Tuple)):
        raise ctx.error(node, f"dumps= of {what} must be a list of tensor names, e.g. dumps=[x]")
    out = []
    for e in node.elts:
        if not isinstance(e, ast.Name):
            raise ctx.error(e, f"dumps= entries must be tensor names, not '{ast.unparse(e)}'")
        v = ctx.lookup(e.id)
        if v is None:
            raise ctx.unknown_name_error(e)
        if not (isinstance(v, ir.Var) and isinstance(v.type, ir.TensorType)):
            raise ctx.error(e, f"dumps= entry '{e.id}' is not a tensor", help="only tensor arguments can be dumped")
        if not any(a.same_as(v) for a in args):
            raise ctx.error(e, f"dumps= entry '{e.id}' is not an argument of {what}",
                            help=f"pass '{e.id}' to the kernel, or drop it from dumps=")
        if not any(o.same_as(v) for o in out):
            out.append(v)
    return out


def with_tags(ctx, task, extra: list = ()):
    """`task` (a Call or Submit) with dump_vars = `extra` plus its arguments tagged by pl.dump_tag."""
    marks = list(extra) + [a for a in task.args if any(a.same_as(t) for t in ctx.dump_tags)]
    if not marks:
        return task
    return ir.with_dump_vars(task, marks)


def dump_vars_of_attrs(ctx, node: ast.Dict, args: list, what: str):
    """Printed form `attrs={..., "dump_vars": [x]}` of a plain call: splits off the dump marks.
    Returns (remaining attrs node or None, marks)."""
    for i, k in enumerate(node.keys):
        if isinstance(k, ast.Constant) and k.value == "dump_vars":
            marks = parse_dumps(ctx, node.values[i], args, what)
            rest = ast.Dict(keys=node.keys[:i] + node.keys[i + 1:], values=node.values[:i] + node.values[i + 1:])
            ast.copy_location(rest, node)
            return (rest if rest.keys else None), marks
    return node, []


def scope_dump_vars(ctx, node, attrs: dict, what: str) -> None:
    """Scope attr ``dump_vars`` of a CORE_GROUP pl.at / pl.spmd: its ``dumps=[...]`` entries (names
    of visible tensors, no duplicates, not necessarily used by the body) and then the tensors
    pl.dump_tag tagged before the scope that are still visible. OutlineIncoreScopes keeps the
    entries the task takes as arguments.

        with pl.at(level=pl.Level.CORE_GROUP, dumps=[y]):   ->  attrs["dump_vars"] = [y, <tagged x>]
    """
    marks = []
    if node is not None:
        if not isinstance(node, ast.List):
            raise ctx.error(node, f"dumps= of {what} must be a list literal of tensor names, e.g. dumps=[x]")
        for e in node.elts:
            if not isinstance(e, ast.Name):
                raise ctx.error(e, f"dumps= entries must be tensor names, not '{ast.unparse(e)}'")
            v = ctx.lookup(e.id)
            if v is None:
                raise ctx.unknown_name_error(e)
            if not (isinstance(v, ir.Var) and isinstance(v.type, ir.TensorType)):
                raise ctx.error(e, f"dumps= entry '{e.id}' is not a tensor", help="only tensor arguments can be dumped")
            if any(m.same_as(v) for m in marks):
                raise ctx.error(e, f"dumps= entry '{e.id}' is given twice", help="list each tensor once")
            marks.append(v)
    for t in ctx.dump_tags:
        visible = ctx.lookup(t.name)
        if visible is not None and visible.same_as(t) and not any(m.same_as(t) for m in marks):
            marks.append(t)
    if marks:
        attrs["dump_vars"] = marks
