"""The well-formedness verifier (``passes.verify_well_formed``, src/transforms/verify_well_formed.cpp)
that runs after every pass in the test suites (PYPTO_VERIFY_PASSES=1): each of its checks fires
on IR built node by node that breaks it (one definition per Var, uses dominated by their
definition, iter_arg / return_var / yield arity, yield last, spans present), and a pass run in
well-formed mode refuses a malformed input."""

import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import InternalCompilerError
from pypto.ir import passes

IDX = ir.ScalarType.make(ir.DataType.INDEX)


def c(v):
    return ir.ConstInt.make(v)


def add(a, b):
    return ir.BinaryExpr.make(ir.BinaryOp.Add, a, b)


def program(body, params=(), span=None):
    """One Opaque function `f(params) -> INDEX` with `body`."""
    fn = ir.Function.make("f", ir.FunctionType.Opaque, list(params), [ir.ParamDirection.In] * len(params), [IDX], body)
    return ir.Program.make("P", [fn], [], span) if span is not None else ir.Program.make("P", [fn])


def loop(iter_args, body, return_vars):
    i = ir.Var.make("i", IDX)
    return ir.ForStmt.make(i, c(0), c(4), c(1), iter_args, body, return_vars)


def test_a_well_formed_program_has_no_violation():
    n = ir.Var.make("n", IDX)
    acc = ir.IterArg.make("acc", IDX, n)
    out = ir.Var.make("out", IDX)
    body = ir.make_seq([loop([acc], ir.YieldStmt.make([add(acc, c(1))]), [out]), ir.ReturnStmt.make([out])])
    assert passes.verify_well_formed(program(body, [n])) == []


def test_a_var_defined_twice_is_reported():
    x = ir.Var.make("x", IDX)
    body = ir.make_seq([ir.AssignStmt.make(x, c(1)), ir.AssignStmt.make(x, c(2)), ir.ReturnStmt.make([x])])
    assert passes.verify_well_formed(program(body)) == ["function 'f': 'x' is defined more than once"]


def test_a_use_before_its_definition_is_reported():
    x, y = ir.Var.make("x", IDX), ir.Var.make("y", IDX)
    body = ir.make_seq([ir.AssignStmt.make(y, add(x, c(1))), ir.AssignStmt.make(x, c(2)), ir.ReturnStmt.make([y])])
    assert passes.verify_well_formed(program(body)) == ["function 'f': use of 'x' is not dominated by its definition"]


def test_a_value_defined_in_a_loop_body_is_not_visible_after_the_loop():
    inner = ir.Var.make("inner", IDX)
    body = ir.make_seq([loop([], ir.AssignStmt.make(inner, c(1)), []), ir.ReturnStmt.make([inner])])
    assert passes.verify_well_formed(program(body)) == [
        "function 'f': use of 'inner' is not dominated by its definition"]


def test_iter_arg_return_var_and_yield_arity_are_checked():
    n = ir.Var.make("n", IDX)
    acc = ir.IterArg.make("acc", IDX, n)
    out, extra = ir.Var.make("out", IDX), ir.Var.make("extra", IDX)
    # Two return vars for one iter_arg: the node itself refuses it (the verifier's check of it is
    # for nodes built another way).
    with pytest.raises(InternalCompilerError, match="ForStmt has 1 iter_args but 2 return vars"):
        loop([acc], ir.YieldStmt.make([acc]), [out, extra])
    # A yield of two values for one iter_arg.
    acc2, out2 = ir.IterArg.make("acc", IDX, n), ir.Var.make("out", IDX)
    body = ir.make_seq([loop([acc2], ir.YieldStmt.make([acc2, acc2]), [out2]), ir.ReturnStmt.make([out2])])
    assert passes.verify_well_formed(program(body, [n])) == ["function 'f': for loop yields 2 values, expected 1"]
    # No yield at all.
    acc3, out3, t = ir.IterArg.make("acc", IDX, n), ir.Var.make("out", IDX), ir.Var.make("t", IDX)
    body = ir.make_seq([loop([acc3], ir.AssignStmt.make(t, acc3), [out3]), ir.ReturnStmt.make([out3])])
    assert passes.verify_well_formed(program(body, [n])) == [
        "function 'f': for loop body does not end in a yield of 1 values"]


def test_an_if_with_results_needs_an_else_and_a_yield_that_is_last():
    n = ir.Var.make("n", IDX)
    r = ir.Var.make("r", IDX)
    cond = ir.BinaryExpr.make(ir.BinaryOp.Lt, n, c(2))
    with pytest.raises(InternalCompilerError, match="IfStmt with return vars needs an else body"):
        ir.IfStmt.make(cond, ir.YieldStmt.make([n]), None, [r])
    r1 = ir.Var.make("r", IDX)
    body = ir.make_seq([ir.IfStmt.make(cond, ir.YieldStmt.make([n]), ir.YieldStmt.make([]), [r1]),
                        ir.ReturnStmt.make([r1])])
    assert passes.verify_well_formed(program(body, [n])) == ["function 'f': if yields 0 values, expected 1"]
    r2, t = ir.Var.make("r", IDX), ir.Var.make("t", IDX)
    then = ir.SeqStmts.make([ir.YieldStmt.make([n]), ir.AssignStmt.make(t, n)])
    body = ir.make_seq([ir.IfStmt.make(cond, then, ir.YieldStmt.make([n]), [r2]), ir.ReturnStmt.make([r2])])
    assert "function 'f': yield is not the last statement of its body" in passes.verify_well_formed(program(body, [n]))


def test_statements_of_a_parsed_program_need_spans():
    x = ir.Var.make("x", IDX)
    body = ir.make_seq([ir.AssignStmt.make(x, c(1)), ir.ReturnStmt.make([x])])
    # IR built with the API (no program span) has no spans to keep; a parsed program (known span) does.
    assert passes.verify_well_formed(program(body)) == []
    problems = passes.verify_well_formed(program(body, span=ir.Span("p.py", 1, 1)))
    assert problems == ["function 'f': AssignStmt has no source span", "function 'f': ReturnStmt has no source span"]


def test_a_pass_in_well_formed_mode_refuses_a_malformed_input():
    x = ir.Var.make("x", IDX)
    body = ir.make_seq([ir.AssignStmt.make(x, c(1)), ir.AssignStmt.make(x, c(2)), ir.ReturnStmt.make([x])])
    bad = program(body)
    with pytest.raises(InternalCompilerError, match="the input program is not well formed"):
        passes.StampStaticTripCounts()(bad, verify_well_formed=True)


def test_every_pipeline_pass_keeps_a_parsed_program_well_formed():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), 1.0), [0, 0], c)
            return c2

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32],
                 d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            for i, (acc,) in pl.range(3, init_values=(d,)):
                acc2 = self.k(a, acc)
                acc3 = pl.yield_(acc2)
            return acc3

    p = P
    assert passes.verify_well_formed(p) == []
    for pass_ in passes.default_pipeline():
        p = pass_(p, verify_well_formed=True)
        assert passes.verify_well_formed(p) == [], pass_.name


def test_the_test_suite_runs_the_verifier_after_every_pass():
    # conftest.py sets PYPTO_VERIFY_PASSES=1, and the C++ side reads it (PassOptions::FromEnv):
    # a pass and the whole pipeline, called without verify_well_formed, refuse a malformed input.
    import os
    from pypto import codegen
    assert os.environ.get("PYPTO_VERIFY_PASSES") not in (None, "", "0")
    x = ir.Var.make("x", IDX)
    bad = program(ir.make_seq([ir.AssignStmt.make(x, c(1)), ir.AssignStmt.make(x, c(2)), ir.ReturnStmt.make([x])]))
    with pytest.raises(InternalCompilerError, match="the input program is not well formed"):
        passes.StampStaticTripCounts()(bad)
    with pytest.raises(InternalCompilerError, match="the input program is not well formed"):
        codegen.run_pipeline(bad)
