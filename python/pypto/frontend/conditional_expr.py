"""Conditional expressions: ``a if c else b``, and ``and`` / ``or`` that must not evaluate
their later operands eagerly.

A run-time condition becomes an IfStmt with one result, as if the user had written

    if c:
        r = pl.yield_(a)
    else:
        r = pl.yield_(b)

so only the chosen branch is evaluated, as in Python (`x[i, 0] if i < n else 0.0` never reads
outside `x`). A compile-time condition (`16 if BIG else 8`, `BIG` a module constant) picks its
branch while parsing, and the other branch is not parsed at all, as Python would not run it.

The branches must have one type: scalars of different dtypes meet at the dtype `a + b` would
have (`n * 2 if c else 0.5` is FP32 when `n` is an integer); tiles, tensors, TaskIds and arrays
must match exactly.
"""

from __future__ import annotations

import ast

from pypto._core import ir
from pypto.frontend import irtypes, registry
from pypto.frontend.context import Frame
from pypto.frontend.exprs import CMPOPS, const_from_py, eval_expr, require_scalar, scalar_operand
from pypto.frontend.pyeval import try_eval_py
from pypto.frontend.stmts import make_body

_NOT_CONSTANT = object()


def compile_time_truth(ctx, node: ast.AST):
    """True / False when `node` is a compile-time number or bool (a literal, a module constant,
    their arithmetic and comparisons), else None. A DSL value is never compile-time."""
    v = try_eval_py(ctx, node, _NOT_CONSTANT)
    if isinstance(v, (bool, int, float)):
        return bool(v)
    return None


def _branch_value(ctx, node: ast.AST):
    """Evaluate one branch in a block of its own: (value, statements it emitted)."""
    ctx.frames.append(Frame("branch"))
    ctx.push_block()
    v = eval_expr(ctx, node)
    block = ctx.pop_block()
    ctx.frames.pop()
    return v, block


def _common_type(ctx, node: ast.IfExp, a, b):
    """The result type of the two branch values, or a located error."""
    ta, tb = a.type, b.type
    if isinstance(ta, ir.ScalarType) and isinstance(tb, ir.ScalarType) and ta.dtype != tb.dtype:
        task = ir.DataType.TASK_ID
        if task in (ta.dtype, tb.dtype):
            raise ctx.error(node, f"the branches of '{ast.unparse(node)}' are {irtypes.type_str(ta)} and "
                            f"{irtypes.type_str(tb)}: a TaskId can only meet another TaskId",
                            help="give both branches a TaskId (e.g. pl.system.task_invalid())")
        # The dtype `a + b` has: the arithmetic promotion, so both branches convert to it exactly
        # as they would in an expression.
        return ir.BinaryExpr.make(ir.BinaryOp.Add, a, b, ctx.span(node)).type
    if not (ta == tb):
        raise ctx.error(node, f"the branches of '{ast.unparse(node)}' have different types: "
                        f"{irtypes.type_str(ta)} and {irtypes.type_str(tb)}",
                        help="both branches of a conditional expression must give the same kind of value "
                             "(same shape and dtype); use an if statement to bind different values")
    return ta


def _yield_value(ctx, v, ty, block, node):
    """The branch's value converted to the result type, bound to a name when it is a call (a
    branch block yields names and plain expressions, as an if statement's does)."""
    sp = ctx.span(node)
    if isinstance(ty, ir.ScalarType) and v.type.dtype != ty.dtype:
        v = ir.Cast.make(v, ty.dtype, sp)
    if isinstance(v, ir.Call):
        tmp = ir.Var.make("cond_branch", v.type, sp)
        block.append(ir.AssignStmt.make(tmp, v, sp))
        v = tmp
    block.append(ir.YieldStmt.make([v], sp))
    return block


@registry.handles("ifexp")
def parse_if_expr(ctx, node: ast.IfExp, name: str = "cond_value"):
    """`a if c else b` -> the chosen branch (compile-time c) or the result of an IfStmt, a Var
    called `name` (the assignment's target in `r = a if c else b`)."""
    truth = compile_time_truth(ctx, node.test)
    if truth is not None:
        return eval_expr(ctx, node.body if truth else node.orelse)
    cond = scalar_operand(ctx, eval_expr(ctx, node.test))
    if not isinstance(cond.type, ir.ScalarType) or cond.type.dtype == ir.DataType.TASK_ID:
        raise ctx.error(node.test, f"the condition of a conditional expression must be a number or a bool, "
                        f"got {irtypes.describe(cond.type)}")
    a, ablock = _branch_value(ctx, node.body)
    b, bblock = _branch_value(ctx, node.orelse)
    ty = _common_type(ctx, node, a, b)
    sp = ctx.span(node)
    then_body = make_body(_yield_value(ctx, a, ty, ablock, node.body), sp)
    else_body = make_body(_yield_value(ctx, b, ty, bblock, node.orelse), sp)
    rv = ir.Var.make(name, ty, sp)
    ctx.emit(ir.IfStmt.make(cond, then_body, else_body, [rv], sp))
    return rv


def _boolop_operand(ctx, v, node):
    if not isinstance(v.type, ir.ScalarType) or v.type.dtype == ir.DataType.TASK_ID:
        raise ctx.error(node, f"an operand of and/or must be a number or a bool, got {irtypes.describe(v.type)}")
    return scalar_operand(ctx, v)


def _bound(ctx, v, node):
    """`v` as a name or a constant, so that using it twice (condition and result) computes it once."""
    if isinstance(v, (ir.Var, ir.ConstInt, ir.ConstFloat, ir.ConstBool)):
        return v
    tmp = ir.Var.make("boolop_operand", v.type, ctx.span(node))
    ctx.emit(ir.AssignStmt.make(tmp, v, ctx.span(node)))
    return tmp


@registry.handles("lazy_boolop")
def parse_lazy_boolop(ctx, node: ast.BoolOp):
    """`a and b` / `a or b` evaluating each operand only when Python would, with Python's value:
    `a or b` is `a if a else b`, `a and b` is `b if a else a` (`n or 5` is n, or 5 when n is 0),
    in the operands' common dtype (that of `a + b`). Used when a later operand holds a conditional
    expression or an element read of an orchestration (both emit statements, which an eager `and`
    would run unconditionally: `i < n and x[i, 0] > 0` must not read x[n, 0]), and when an operand
    is a number. Of bools alone the result is the BOOL `a and b` computes."""
    is_or = isinstance(node.op, ast.Or)
    sp = ctx.span(node)

    def chain(values):
        truth = compile_time_truth(ctx, values[0])
        if truth is not None and len(values) > 1:   # Python stops at it (its value) or goes on
            return chain(values[1:]) if truth != is_or else const_from_py(ctx, try_eval_py(ctx, values[0]), values[0])
        first = _boolop_operand(ctx, eval_expr(ctx, values[0]), values[0])
        if len(values) == 1:
            return first
        is_bool = first.type.dtype == ir.DataType.BOOL
        first = first if is_bool else _bound(ctx, first, values[0])
        cond = first if is_bool else ir.Cast.make(first, ir.DataType.BOOL, ctx.span(values[0]))
        ctx.frames.append(Frame("branch"))
        ctx.push_block()
        rest = chain(values[1:])
        rest_block = ctx.pop_block()
        ctx.frames.pop()
        ty = first.type if rest.type.dtype == first.type.dtype else \
            ir.BinaryExpr.make(ir.BinaryOp.Add, first, rest, sp).type
        # the operand Python stops at: a BOOL stops only at True (or) / False (and)
        stop = ir.ConstBool.make(is_or, sp) if is_bool and ty.dtype == ir.DataType.BOOL else first
        rest_block = _yield_value(ctx, rest, ty, rest_block, node)
        stop_block = _yield_value(ctx, stop, ty, [], node)
        then_block, else_block = (stop_block, rest_block) if is_or else (rest_block, stop_block)
        rv = ir.Var.make("cond_value", ty, sp)
        ctx.emit(ir.IfStmt.make(cond, make_body(then_block, sp), make_body(else_block, sp), [rv], sp))
        return rv

    return chain(node.values)


@registry.handles("lazy_compare")
def parse_lazy_compare(ctx, node: ast.Compare):
    """A chain `a < b < c` whose later operands hold a conditional expression or an element read of
    an orchestration: as in Python, `c` is evaluated only when `a < b` holds (`b` once), so
    `0 <= i < n < x[i, 0]` does not read x when i is out of range. The lazy and of the
    comparisons, as parse_lazy_boolop builds it."""
    sp = ctx.span(node)
    operands = [node.left] + list(node.comparators)

    def operand(k):
        return require_scalar(ctx, eval_expr(ctx, operands[k]), operands[k], "a comparison operand")

    def chain(left, k):   # the comparisons from the k-th on, `left` (operand k) already evaluated
        right = operand(k + 1)
        cmp = ir.BinaryExpr.make(getattr(ir.BinaryOp, CMPOPS[type(node.ops[k])]), left, right, sp)
        if k + 1 == len(node.ops):
            return cmp
        ctx.frames.append(Frame("branch"))
        ctx.push_block()
        rest = chain(right, k + 1)
        rest_block = ctx.pop_block() + [ir.YieldStmt.make([rest], sp)]
        ctx.frames.pop()
        rv = ir.Var.make("cond_value", ir.ScalarType.make(ir.DataType.BOOL), sp)
        ctx.emit(ir.IfStmt.make(cmp, make_body(rest_block, sp),
                                make_body([ir.YieldStmt.make([ir.ConstBool.make(False, sp)], sp)], sp), [rv], sp))
        return rv

    return chain(operand(0), 0)
