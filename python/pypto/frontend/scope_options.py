"""Scope keywords of the reference DSL (spec/anchor_features.md): ``name_hint=`` (§1).

    with pl.at(level=pl.Level.CORE_GROUP, name_hint="softmax"):   attrs["name_hint"] = "softmax"
    with pl.spmd(4, name_hint="rows_spmd"):                        attrs["name_hint"] = "rows_spmd"
    with pl.cluster(name_hint="pair"):                             attrs["name_hint"] = "pair"

A hint names the function the scope is outlined into; the outlining passes read it. An empty
hint (the default) is not stored, so unhinted scopes print and outline as before.
"""

from __future__ import annotations

import ast
import keyword

from pypto.frontend.pyeval import PyEvalFailure, eval_py, try_eval_py


def name_hint(ctx, node: ast.AST) -> str:
    """The value of ``name_hint=<node>``: a string literal that is empty or a non-keyword identifier.

        name_hint(ctx, ast.parse('"softmax"').body[0].value)  ->  "softmax"
    """
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        raise ctx.error(node, "'name_hint' argument must be a string literal",
                        help='e.g. name_hint="softmax" (it names the outlined function)')
    hint = node.value
    if hint and (not hint.isidentifier() or keyword.iskeyword(hint)):
        raise ctx.error(node, f"name_hint {hint!r} must be a valid non-keyword identifier",
                        help="it becomes a C++ and Python function name: letters, digits and '_', "
                             "not starting with a digit, not a Python keyword")
    return hint


def add_name_hint(ctx, kws: dict, attrs: dict) -> None:
    """Stores a non-empty ``name_hint=`` of a scope call's keywords in its attrs."""
    if "name_hint" in kws:
        hint = name_hint(ctx, kws["name_hint"])
        if hint:
            attrs["name_hint"] = hint


def auto_scope_option(ctx, node: ast.AST) -> bool:
    """``@pl.function(auto_scope=<node>)`` (§4): a bool literal.

        auto_scope_option(ctx, <ast of False>)  ->  False
    """
    if not (isinstance(node, ast.Constant) and isinstance(node.value, bool)):
        raise ctx.error(node, f"auto_scope= must be True or False, got '{ast.unparse(node)}'",
                        help="auto_scope=False: the compiler places no AUTO runtime scopes; write them with "
                             "`with pl.scope():`")
    return node.value


def strict_ssa_option(ctx, node: ast.AST) -> bool:
    """``@pl.function(strict_ssa=<node>)`` (§4's signature): a bool literal. Nothing reads it: the
    parser makes every program SSA itself, so a strict program parses as it would without it.

        strict_ssa_option(ctx, <ast of True>)  ->  True
    """
    if not (isinstance(node, ast.Constant) and isinstance(node.value, bool)):
        raise ctx.error(node, f"strict_ssa= must be True or False, got '{ast.unparse(node)}'")
    return node.value


def scope_mode(ctx, call: ast.Call, scope_mode_enum) -> str:
    """The mode of ``pl.scope(mode=pl.ScopeMode.X)`` (§4): "auto" (default) or "manual"."""
    if call.args:
        raise ctx.error(call.args[0], "pl.scope takes only mode=, e.g. pl.scope(mode=pl.ScopeMode.MANUAL)")
    mode = "auto"
    for kw in call.keywords:
        if kw.arg != "mode":
            raise ctx.error(kw.value if kw.arg else call, f"pl.scope has no keyword '{kw.arg}'", help="keywords: mode")
        try:
            v = eval_py(ctx, kw.value)
        except PyEvalFailure:
            v = None
        if not isinstance(v, scope_mode_enum):
            raise ctx.error(kw.value, f"mode= must be pl.ScopeMode.AUTO or pl.ScopeMode.MANUAL, got "
                            f"'{ast.unparse(kw.value)}'")
        mode = v.name.lower()
    return mode


_OPT_HELP = "optimizations= takes a list literal such as [pl.split(pl.SplitMode.UP_DOWN)] or [pl.auto_chunk]"

# Scope options an auto_chunk scope refuses (spec anchor_features §7, Decision): the InCore scopes
# it produces are rebuilt without them, so the reference silently drops them.
AUTO_CHUNK_REFUSED = ("deps", "allow_early_resolve", "no_dep_args", "dumps", "predicate")


def chunk_options(ctx, kws: dict, pl_name: str):
    """``chunk=C`` / ``chunk_policy="guarded" | "leading_full"`` of pl.range / pl.parallel / pl.unroll
    (§7) -> (C, ir.ChunkPolicy) for the typed ForStmt.chunk / chunk_policy, or None without chunk=;
    only inside an auto_chunk scope.

        for i in pl.parallel(0, N, 1, chunk=4):   ->  (4, ir.ChunkPolicy.Guarded)
    """
    from pypto._core import ir
    if "chunk" not in kws and "chunk_policy" not in kws:
        return None
    first = kws.get("chunk", kws.get("chunk_policy"))
    if not any(s.kind == "at" and s.auto_chunk for s in ctx.scopes):
        raise ctx.error(first, f"chunk= on pl.{pl_name} is only valid inside "
                        "`with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.auto_chunk]):`",
                        help="chunking is how pl.auto_chunk picks kernel boundaries; drop the keyword outside one")
    if "chunk" not in kws:
        raise ctx.error(first, "chunk_policy= needs chunk=C", help='e.g. chunk=4, chunk_policy="leading_full"')
    c = kws["chunk"]
    v = try_eval_py(ctx, c, None)
    if type(v) is not int or v <= 0:
        raise ctx.error(c, f"chunk= must be a positive int constant, got '{ast.unparse(c)}'",
                        help="the number of iterations per chunk, e.g. chunk=4")
    policy = "guarded"
    if "chunk_policy" in kws:
        p = kws["chunk_policy"]
        if not (isinstance(p, ast.Constant) and isinstance(p.value, str)):
            raise ctx.error(p, f"chunk_policy= must be a string literal, got '{ast.unparse(p)}'",
                            help='"guarded" (default) or "leading_full"')
        if p.value not in ("guarded", "leading_full"):
            raise ctx.error(p, f"unknown chunk_policy {p.value!r}", help='"guarded" (default) or "leading_full"')
        policy = p.value
    return v, {"guarded": ir.ChunkPolicy.Guarded, "leading_full": ir.ChunkPolicy.LeadingFull}[policy]


def _split_entry(ctx, node: ast.Call, split_mode_enum) -> dict:
    """pl.split(mode, *, slot_num=None) -> {"split": int(mode)[, "slot_num": n]}."""
    if len(node.args) != 1:
        raise ctx.error(node, "pl.split takes one positional argument, the pl.SplitMode",
                        help="e.g. pl.split(pl.SplitMode.UP_DOWN, slot_num=4)")
    try:
        mode = eval_py(ctx, node.args[0])
    except PyEvalFailure:
        mode = None
    if not isinstance(mode, split_mode_enum):
        raise ctx.error(node.args[0], f"pl.split needs a pl.SplitMode, got '{ast.unparse(node.args[0])}'",
                        help="pl.SplitMode.NONE, pl.SplitMode.UP_DOWN or pl.SplitMode.LEFT_RIGHT")
    out = {"split": mode.value}
    for kw in node.keywords:
        if kw.arg != "slot_num":
            raise ctx.error(kw.value if kw.arg else node, f"pl.split has no keyword '{kw.arg}'", help="keywords: slot_num")
        v = kw.value
        if not (isinstance(v, ast.Constant) and type(v.value) is int and v.value > 0):
            raise ctx.error(v, f"slot_num= must be a positive int literal, got '{ast.unparse(v)}'",
                            help="the depth of the cross-core pipe, e.g. slot_num=4")
        out["slot_num"] = v.value
    return out


def optimizations(ctx, node: ast.AST, owner: str, level: str, builtin_cls, split_mode_enum) -> dict:
    """``optimizations=[...]`` of pl.at / pl.spmd (§5, §7) -> scope attrs {"split", "slot_num", "auto_chunk"}.

    pl.split is accepted on a CORE_GROUP pl.at and on pl.spmd (a no-op on the CPU: the whole
    kernel runs on one worker); pl.auto_chunk on a CORE_GROUP pl.at only (the passes
    SplitChunkedLoops and InterchangeChunkLoops pick the kernel boundaries)."""
    if not isinstance(node, ast.List):
        raise ctx.error(node, "optimizations= must be a list literal", help=_OPT_HELP)
    attrs, seen = {}, set()
    for el in node.elts:
        head = el.func if isinstance(el, ast.Call) else el
        try:
            b = eval_py(ctx, head)
        except PyEvalFailure:
            b = None
        kind = b.kind if isinstance(b, builtin_cls) and b.kind in ("split", "auto_chunk") else None
        if kind is None:
            raise ctx.error(el, f"unknown optimization '{ast.unparse(el)}'", help="entries: pl.split(...), pl.auto_chunk")
        if kind in seen:
            raise ctx.error(el, f"duplicate optimization '{ast.unparse(head)}'", help="give each entry once")
        seen.add(kind)
        if kind == "auto_chunk":
            if isinstance(el, ast.Call):
                raise ctx.error(el, "pl.auto_chunk is not called: write optimizations=[pl.auto_chunk]")
            if owner != "pl.at":
                raise ctx.error(el, f"pl.auto_chunk is not valid on {owner}",
                                help="use it on with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.auto_chunk])")
            if level != "CORE_GROUP":
                raise ctx.error(el, f"pl.auto_chunk needs level=pl.Level.CORE_GROUP, got pl.Level.{level}",
                                help="the compiler picks kernel boundaries inside a CORE_GROUP scope")
            attrs["auto_chunk"] = True
            continue
        if not isinstance(el, ast.Call):
            raise ctx.error(el, "pl.split must be called: pl.split(pl.SplitMode.UP_DOWN)")
        if owner == "pl.at" and level != "CORE_GROUP":
            raise ctx.error(el, f"pl.split needs level=pl.Level.CORE_GROUP, got pl.Level.{level}",
                            help="only a CORE_GROUP scope becomes a kernel that can be split")
        attrs.update(_split_entry(ctx, el, split_mode_enum))
    return attrs
