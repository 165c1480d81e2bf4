"""Freeing a deep IR (issue 15): an expression built through the Python API with 100,000+ nested
levels used to overflow the C++ stack in the recursive node destructors (a segfault when freed).
Node destruction is iterative now (src/ir/node_release.cpp); 200,000 levels are built and freed.

Each case runs in a subprocess so that a regression is a failed test, not a dead runner.
"""
import subprocess
import sys
import textwrap

BUILD = textwrap.dedent('''
    import gc, sys
    from pypto import ir

    levels = int(sys.argv[1])
    n = ir.Var.make("n", ir.ScalarType.make(ir.DataType.INDEX))
    c = ir.Var.make("c", ir.ScalarType.make(ir.DataType.BOOL))
    e = n
    for i in range(levels):
        e = ir.BinaryExpr.make(ir.BinaryOp.Add, e, ir.ConstInt.make(i))
    s = ir.EvalStmt.make(e)
    for _ in range(levels):
        s = ir.IfStmt.make(c, ir.RuntimeScopeStmt.make(ir.RuntimeScopeMode.Auto, s), None)
    top = s.then_body.body   # a handle into the tree: it must stay valid after its parent is freed
    del e, s
    gc.collect()
    print("FREED", type(top).__name__, type(top.then_body.body).__name__)
    del top
    gc.collect()
    print("DONE")
''')


def test_200000_nested_levels_are_freed_without_a_crash():
    r = subprocess.run([sys.executable, "-c", BUILD, "200000"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, "crashed (status %d): %s" % (r.returncode, r.stderr[-2000:])
    assert r.stdout.split() == ["FREED", "IfStmt", "IfStmt", "DONE"], r.stdout
