"""Deep nesting (issue 15): an IR nested 30,000 scopes deep used to overflow the C++ stack in
the pass pipeline (a segfault); it is now a clear error before any recursive pass runs, while
nesting far beyond what the DSL can express (2,000 statements, 10,000 expression levels) still
compiles. A scalar expression 1,000 levels deep written in the DSL compiles and runs.

The 30,000-deep cases run in a subprocess so that a regression is a failed test, not a dead runner.
"""
import subprocess
import sys
import textwrap

import numpy as np

import pypto
import pypto.language as pl

BUILD = textwrap.dedent('''
    import sys
    from pypto import ir, codegen
    from pypto.errors import PyptoError

    def t16():
        return ir.TensorType.make([ir.ConstInt.make(16), ir.ConstInt.make(16)], ir.DataType.FP32)

    def program(scopes, expr_depth):
        In, Out = ir.ParamDirection.In, ir.ParamDirection.Out
        a, c, c2 = ir.Var.make("a", t16()), ir.Var.make("c", t16()), ir.Var.make("c", t16())
        s = ir.Var.make("s", ir.ScalarType.make(ir.DataType.INDEX))
        zeros = ir.MakeTuple.make([ir.ConstInt.make(0), ir.ConstInt.make(0)])
        sizes = ir.MakeTuple.make([ir.ConstInt.make(16), ir.ConstInt.make(16)])
        ta = ir.Var.make("ta", ir.TileType.make([ir.ConstInt.make(16)] * 2, ir.DataType.FP32))
        kbody = ir.SeqStmts.make([ir.AssignStmt.make(ta, ir.Call.make_op("tile.load", [a, zeros, sizes])),
                                  ir.AssignStmt.make(c2, ir.Call.make_op("tile.store", [ta, zeros, c])),
                                  ir.ReturnStmt.make([c2])])
        kernel = ir.Function.make("k", ir.FunctionType.InCore, [a, c, s], [In, Out, In], [t16()], kbody)
        x, d = ir.Var.make("x", t16()), ir.Var.make("d", t16())
        n, m = (ir.Var.make(v, ir.ScalarType.make(ir.DataType.INDEX)) for v in "nm")
        e = n
        for _ in range(expr_depth):
            e = ir.BinaryExpr.make(ir.BinaryOp.Add, e, ir.ConstInt.make(1))
        body = ir.SeqStmts.make([ir.AssignStmt.make(m, e), ir.EvalStmt.make(ir.Call.make_func("k", [x, d, m], t16()))])
        for _ in range(scopes):
            body = ir.RuntimeScopeStmt.make(ir.RuntimeScopeMode.Auto, body)
        main = ir.Function.make("main", ir.FunctionType.Orchestration, [x, d, n], [In, Out, In], [t16()],
                                ir.SeqStmts.make([body, ir.ReturnStmt.make([d])]))
        return ir.Program.make("Deep", [kernel, main])

    try:
        r = codegen.generate_orchestration(program(int(sys.argv[1]), int(sys.argv[2])), "main")
        print("GENERATED", len(r.code))
    except PyptoError as e:
        print("ERROR", str(e).splitlines()[0])
''')


def run(scopes, expr_depth):
    r = subprocess.run([sys.executable, "-c", BUILD, str(scopes), str(expr_depth)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, "crashed (status %d): %s" % (r.returncode, r.stderr[-2000:])
    return r.stdout.strip()


def test_30000_nested_scopes_is_an_error_not_a_crash():
    out = run(30000, 1)
    assert out.startswith("ERROR") and "nested more than 2000 levels deep in function 'main'" in out, out


def test_an_expression_30000_levels_deep_is_an_error_not_a_crash():
    out = run(1, 30000)
    assert out.startswith("ERROR") and "an expression is nested more than 10000 levels" in out, out


def test_deep_but_within_the_limits_compiles():
    assert run(1990, 1).startswith("GENERATED")
    assert run(1, 9990).startswith("GENERATED")


def test_scalar_expression_1000_levels_deep_in_the_dsl_runs():
    expr = "n" + " + 1" * 1000       # Python parses it left-associated: 1,000 nested additions
    src = '''
import pypto.language as pl

@pl.program
class DeepExpr:
    @pl.function(type=pl.FunctionType.InCore)
    def put(self, y: pl.Out[pl.Tensor[[1, 8], pl.INT64]], v: pl.Scalar[pl.INDEX]) -> pl.Tensor[[1, 8], pl.INT64]:
        y = pl.store(pl.tile.full([1, 8], pl.INT64, v), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, y: pl.Out[pl.Tensor[[1, 8], pl.INT64]], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[1, 8], pl.INT64]:
        m = %s
        y = self.put(y, m)
        return y
''' % expr
    prog = pypto.compile(pl.parse_program(src, filename="deep.py"))
    y = np.zeros((1, 8), np.int64)
    prog(y, 5)
    prog.close()
    assert (y == 1005).all()
