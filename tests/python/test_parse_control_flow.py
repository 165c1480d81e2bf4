"""Loops and branches: SSA conversion into iter_args / return_vars / yields, the explicit
(printed) form, pl.parallel, elif, nesting, and scopes that carry nothing."""

import textwrap

import pypto.language as pl
from pypto._core import ir

T = "pl.Tensor[[16, 16], pl.FP32]"
KERNEL = f"""
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: {T}, c: pl.Out[{T}]) -> {T}:
        c = pl.store(pl.exp(pl.load(a, [0, 0], [16, 16])), [0, 0], c)
        return c
"""


def main_src(body):
    body = textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8)
    return (f"import pypto.language as pl\nN = 4\n\n@pl.program\nclass P:{KERNEL}\n"
            f"    @pl.function(type=pl.FunctionType.Orchestration)\n"
            f"    def main(self, a: {T}, d: pl.Out[{T}], n: pl.Scalar[pl.INDEX]) -> {T}:\n{body}\n")


def main_stmts(body):
    p = pl.parse_program(main_src(body), "t.py")
    return ir.flatten_stmts(p.get("main").body)


def test_range_forms():
    f1, f2, f3, _ = main_stmts("""
        for i in pl.range(N):
            pass
        for i in pl.range(1, n):
            pass
        for i in pl.parallel(0, 8, 2):
            pass
        return d
    """)
    assert (f1.start.value, f1.stop.value, f1.step.value) == (0, 4, 1)
    assert f1.for_kind == ir.ForKind.Sequential and list(f1.iter_args) == []
    assert f2.start.value == 1 and isinstance(f2.stop, ir.Var) and f2.step.value == 1
    assert f3.for_kind == ir.ForKind.Parallel and f3.step.value == 2
    assert f1.loop_var.type == ir.ScalarType.make(ir.DataType.INDEX)


def test_loop_carries_rebound_names():
    pre, loop, ret = main_stmts("""
        x = n
        for i in pl.range(4):
            d = self.k(a, d)
            x = x + i
        return d
    """)
    assert [ia.name for ia in loop.iter_args] == ["d", "x"]
    d_param = loop.iter_args[0].init
    assert isinstance(d_param, ir.Var) and d_param.name == "d"
    assert loop.iter_args[1].init.same_as(pre.var)
    body = ir.flatten_stmts(loop.body)
    y = body[-1]
    assert isinstance(y, ir.YieldStmt) and y.values[0].same_as(body[0].var) and y.values[1].same_as(body[1].var)
    assert body[0].value.args[1].same_as(loop.iter_args[0])             # reads the carry
    assert [rv.name for rv in loop.return_vars] == ["d", "x"]
    assert ret.values[0].same_as(loop.return_vars[0])                   # rebinding after the loop


def test_names_first_bound_in_loop_are_not_carried():
    (loop, _) = main_stmts("""
        for i in pl.range(4):
            t = self.k(a, d)
        return d
    """)
    assert list(loop.iter_args) == [] and list(loop.return_vars) == []
    assert not any(isinstance(s, ir.YieldStmt) for s in ir.flatten_stmts(loop.body))


def test_nested_loops_thread_carries():
    (outer, ret) = main_stmts("""
        for i in pl.range(2):
            for j in pl.parallel(4):
                d = self.k(a, d)
        return d
    """)
    inner = ir.flatten_stmts(outer.body)[0]
    assert inner.iter_args[0].init.same_as(outer.iter_args[0])
    outer_yield = ir.flatten_stmts(outer.body)[-1]
    assert outer_yield.values[0].same_as(inner.return_vars[0])
    assert ret.values[0].same_as(outer.return_vars[0])


def test_explicit_iter_args_form():
    loop, ret = main_stmts("""
        for i, (acc, m) in pl.range(0, 4, 1, init_values=(d, n), attrs={"unroll": 2}):
            acc2 = self.k(a, acc)
            acc_out, m_out = pl.yield_(acc2, m)
        return acc_out
    """)
    assert [ia.name for ia in loop.iter_args] == ["acc", "m"]
    assert [rv.name for rv in loop.return_vars] == ["acc_out", "m_out"]
    assert loop.attrs == {"unroll": 2}
    assert ret.values[0].same_as(loop.return_vars[0])


def test_if_else_return_vars():
    branch, ret = main_stmts("""
        if n > 0:
            d = self.k(a, d)
        else:
            d = self.k(d, d)
        return d
    """)
    assert isinstance(branch, ir.IfStmt) and [rv.name for rv in branch.return_vars] == ["d"]
    ty = ir.flatten_stmts(branch.then_body)[-1]
    ey = ir.flatten_stmts(branch.else_body)[-1]
    assert isinstance(ty, ir.YieldStmt) and isinstance(ey, ir.YieldStmt)
    assert ret.values[0].same_as(branch.return_vars[0])


def test_if_without_else_yields_outer_value():
    (branch, _) = main_stmts("""
        if n > 0:
            d = self.k(a, d)
        return d
    """)
    (ey,) = ir.flatten_stmts(branch.else_body)
    assert isinstance(ey, ir.YieldStmt) and isinstance(ey.values[0], ir.Var) and ey.values[0].name == "d"
    assert ey.values[0].same_as(ey.values[0])


def test_name_bound_in_both_branches_is_visible():
    (branch, ret) = main_stmts("""
        if n > 0:
            t = self.k(a, d)
        else:
            t = self.k(d, d)
        return t
    """)
    assert [rv.name for rv in branch.return_vars] == ["t"]
    assert ret.values[0].same_as(branch.return_vars[0])


def test_elif_is_nested_if_in_else():
    (branch, _) = main_stmts("""
        if n == 0:
            d = self.k(a, d)
        elif n == 1:
            d = self.k(d, d)
        return d
    """)
    inner = ir.flatten_stmts(branch.else_body)[0]
    assert isinstance(inner, ir.IfStmt) and [rv.name for rv in inner.return_vars] == ["d"]
    assert ir.flatten_stmts(branch.else_body)[-1].values[0].same_as(inner.return_vars[0])


def test_explicit_if_yield_form():
    (branch, ret) = main_stmts("""
        if n > 0:
            r = pl.yield_(a)
        else:
            r = pl.yield_(d)
        return r
    """)
    assert [rv.name for rv in branch.return_vars] == ["r"]
    assert ret.values[0].same_as(branch.return_vars[0])


def test_if_without_changes_has_no_return_vars():
    (branch, _) = main_stmts("""
        if n > 0:
            self.k(a, d)
        return d
    """)
    assert list(branch.return_vars) == [] and branch.else_body is None


def test_scopes_carry_nothing_and_names_stay_visible():
    (scope, ret) = main_stmts("""
        with pl.scope():
            d = self.k(a, d)
        return d
    """)
    assert isinstance(scope, ir.RuntimeScopeStmt) and scope.mode == ir.RuntimeScopeMode.Auto
    inner = ir.flatten_stmts(scope.body)[0]
    assert ret.values[0].same_as(inner.var)


def test_task_id_carry_seeded_with_task_invalid():
    seed, loop, _ = main_stmts("""
        prev = None
        for i in pl.range(4):
            d, prev = pl.submit(self.k, a, d, deps=[prev])
        return d
    """)
    assert seed.value.callee == "system.task_invalid"
    tid_carry = loop.iter_args[1]
    assert tid_carry.name == "prev" and tid_carry.type == ir.ScalarType.make(ir.DataType.TASK_ID)
    assert tid_carry.init.same_as(seed.var)
    sub = [s for s in ir.flatten_stmts(loop.body) if isinstance(s.value if hasattr(s, "value") else None,
                                                                   ir.Submit)][0].value
    assert sub.deps[0].same_as(tid_carry)


BODY_WITH_SCOPES = """
    for i, (acc,) in pl.range(0, 4, 1, init_values=(d,)):
        with pl.scope():
            acc2 = self.k(a, acc)
            acc_out = pl.yield_(acc2)
    if n > 0:
        with pl.scope():
            r = pl.yield_(acc_out)
    else:
        with pl.manual_scope():
            r = pl.yield_(a)
    return r
"""


def test_yield_inside_trailing_runtime_scope():
    """The shape MaterializeRuntimeScopes produces: a loop / branch body wrapped in
    `with pl.scope():`, its yield inside the scope."""
    loop, branch, ret = main_stmts(BODY_WITH_SCOPES)
    (scope,) = ir.flatten_stmts(loop.body)
    assert isinstance(scope, ir.RuntimeScopeStmt)
    inner = ir.flatten_stmts(scope.body)
    assert isinstance(inner[-1], ir.YieldStmt) and inner[-1].values[0].same_as(inner[0].var)
    assert [rv.name for rv in loop.return_vars] == ["acc_out"]
    (tscope,) = ir.flatten_stmts(branch.then_body)
    (escope,) = ir.flatten_stmts(branch.else_body)
    assert isinstance(ir.flatten_stmts(tscope.body)[-1], ir.YieldStmt)
    assert escope.mode == ir.RuntimeScopeMode.Manual
    assert ret.values[0].same_as(branch.return_vars[0])
    # and it round-trips through the printer
    from pypto import ir as pir
    prog = pl.parse_program(main_src(BODY_WITH_SCOPES), "t.py")
    again = pl.parse_program(pir.python_print(prog), "printed.py")
    assert ir.structural_equal(prog, again)
