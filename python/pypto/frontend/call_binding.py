"""Binding a DSL call's arguments to parameter names, as Python binds a call, with the reference
compiler's keyword names accepted next to ours (spec reference_ops.md §2-§7).

    bind(ctx, <ast of pl.cast(tile=t, target_type=pl.INT32)>, "cast", ("x", "target_type", "mode"),
         {"tile": "x"})  ->  {"x": <ast t>, "target_type": <ast pl.INT32>}
"""

from __future__ import annotations

import ast

from pypto.frontend.diagnostics import did_you_mean
from pypto.language._builtins import REFERENCE_KEYWORDS


def parameter_of(spec, keyword: str):
    """The parameter of an OpSpec a keyword names: its own, or the one the reference calls so
    (REFERENCE_KEYWORDS); None when the op has neither.

        parameter_of(<tile.store spec>, "output_tensor")  ->  "tensor"
    """
    if keyword in spec.params:
        return keyword
    alias = REFERENCE_KEYWORDS.get(spec.op, {}).get(keyword)
    return alias if alias in spec.params else None


def bind(ctx, node: ast.Call, pl_name: str, params, aliases=None, usage: str = "") -> dict:
    """{parameter: argument node} of a call to a construct with fixed parameters.

    Positional arguments fill `params` in order; a keyword is a parameter's name or an alias
    (`aliases`: the reference's name -> ours). Too many arguments, an unknown keyword, a
    parameter given twice, *args and **kwargs are located errors; `usage` is the help line."""
    aliases = aliases or {}
    for a in node.args:
        if isinstance(a, ast.Starred):
            raise ctx.error(a, "*args are not supported in DSL calls")
    if len(node.args) > len(params):
        raise ctx.error(node, f"pl.{pl_name} takes at most {len(params)} positional arguments "
                        f"({', '.join(params)}), got {len(node.args)}", help=usage)
    bound = dict(zip(params, node.args))
    for kw in node.keywords:
        if kw.arg is None:
            raise ctx.error(kw.value, "**kwargs are not supported in DSL calls")
        name = kw.arg if kw.arg in params else aliases.get(kw.arg)
        if name not in params:
            raise ctx.error(kw.value, f"pl.{pl_name} has no parameter '{kw.arg}'",
                            help=did_you_mean(kw.arg, list(params)) or usage or f"parameters: {', '.join(params)}")
        if name in bound:
            raise ctx.error(kw.value, f"pl.{pl_name} got '{kw.arg}' twice"
                            + (f": it names the parameter '{name}', already given" if name != kw.arg else ""))
        bound[name] = kw.value
    return bound


def require(ctx, node: ast.Call, bound: dict, params, message: str, usage: str = ""):
    """The argument nodes of `params` in order; a missing one is the located error `message`."""
    missing = [p for p in params if p not in bound]
    if missing:
        raise ctx.error(node, message, help=usage or f"missing: {', '.join(missing)}")
    return [bound[p] for p in params]
