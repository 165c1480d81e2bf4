"""Parse-time checks of op keywords from the reference DSL (spec/anchor_features.md).

    pl.create_tensor([16, 16], dtype=pl.FP32, init_value=0.25)   attrs["init_value"] = 0.25 (float64)

The dtype-dependent rules (integral values for integer dtypes, zero for FP16 / BF16) live in
the op's C++ type rule, so IR built without the parser is checked too.
"""

from __future__ import annotations

import ast
import math

from pypto.frontend.pyeval import PyEvalFailure, eval_py

_INIT_HELP = "init_value takes an int or float constant, e.g. init_value=0 or init_value=-1.5"


def init_value(ctx, node: ast.AST) -> float:
    """``init_value=<node>`` of pl.create_tensor: a finite int or float constant -> float64.

        init_value(ctx, <ast of 7>)  ->  7.0
    """
    try:
        v = eval_py(ctx, node)
    except PyEvalFailure:
        raise ctx.error(node, f"init_value must be a compile-time constant, got '{ast.unparse(node)}'",
                        help=_INIT_HELP + "; to fill with a run-time value use a pl.full kernel") from None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ctx.error(node, f"init_value must be an int or float constant, got {type(v).__name__} "
                        f"'{ast.unparse(node)}'", help=_INIT_HELP)
    if isinstance(v, float) and not math.isfinite(v):
        raise ctx.error(node, f"init_value {v} is not finite", help=_INIT_HELP)
    if isinstance(v, int) and abs(v) > 2 ** 53:
        raise ctx.error(node, f"init_value {v} is beyond +-2^53 and cannot be represented exactly",
                        help="the fill value travels as a float64; an init_value must lie within +-2^53")
    return float(v)


# The tensor.<op> mirrors of tile ops (src/ir/ops/tensor_compute_ops.cpp, spec anchor_features §9).
TENSOR_COMPUTE_OPS = frozenset("tensor." + n for n in (
    "add", "sub", "mul", "div", "maximum", "minimum", "adds", "subs", "muls", "divs", "maximums", "minimums",
    "exp", "log", "sqrt", "rsqrt", "recip", "neg", "abs", "relu", "row_max", "row_sum", "row_min",
    "row_expand_add", "row_expand_sub", "row_expand_mul", "row_expand_div", "matmul", "matmul_acc", "cast", "full"))
# A tensor op with a scalar right operand is the scalar variant: pl.add(t, 2.0) -> tensor.adds.
SCALAR_VARIANTS = {"tensor.add": "tensor.adds", "tensor.sub": "tensor.subs", "tensor.mul": "tensor.muls",
                   "tensor.div": "tensor.divs", "tensor.maximum": "tensor.maximums",
                   "tensor.minimum": "tensor.minimums"}
_KERNEL_TYPES = ("InCore", "AIC", "AIV")


def check_tensor_compute_site(ctx, node: ast.AST, op_name: str) -> None:
    """A tensor compute op (pl.add on tensors, pl.tensor.exp, ...) is valid in a kernel function
    and in the body of a CORE_GROUP pl.at or a pl.spmd scope; an orchestration computes nothing."""
    if op_name not in TENSOR_COMPUTE_OPS or ctx.sig.ftype.name in _KERNEL_TYPES:
        return
    if any(s.kind == "spmd" or (s.kind == "at" and s.level == "CORE_GROUP") for s in ctx.scopes):
        return
    raise ctx.error(node, f"{op_name} computes on tensor data, which a {ctx.sig.ftype.name} function cannot do "
                    "outside a kernel scope",
                    help="wrap it in `with pl.at(level=pl.Level.CORE_GROUP):` (the body becomes a kernel), or "
                         "move it into an InCore function")
