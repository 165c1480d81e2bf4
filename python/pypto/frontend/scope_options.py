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

from pypto.frontend.pyeval import PyEvalFailure, eval_py


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
