"""The Python API of the IR (pypto.ir / pypto._core.ir): building nodes, reading fields,
Attrs conversion, op registry queries, printing, structural equality/hash, Program access."""

import pytest

import pypto
from pypto import ir
from pypto.errors import InternalCompilerError, PyptoError


def t16():
    return ir.TensorType.make([ir.ConstInt.make(16), ir.ConstInt.make(16)], ir.DataType.FP32)


def build_vector_add():
    """VectorAdd (docs/dsl.md) built node by node from Python."""
    a, b, c = (ir.Var.make(n, t16()) for n in "abc")
    ta = ir.Var.make("ta", ir.TileType.make([ir.ConstInt.make(16)] * 2, ir.DataType.FP32))
    zeros = ir.MakeTuple.make([ir.ConstInt.make(0), ir.ConstInt.make(0)])
    sizes = ir.MakeTuple.make([ir.ConstInt.make(16), ir.ConstInt.make(16)])
    c2 = ir.Var.make("c", t16())
    load = ir.Call.make_op("tile.load", [a, zeros, sizes])
    body = ir.SeqStmts.make([
        ir.AssignStmt.make(ta, load),
        ir.AssignStmt.make(c2, ir.Call.make_op("tile.store", [ir.Call.make_op("tile.add", [ta, ta]), zeros, c])),
        ir.ReturnStmt.make([c2]),
    ])
    In, Out = ir.ParamDirection.In, ir.ParamDirection.Out
    kernel = ir.Function.make("kernel_add", ir.FunctionType.InCore, [a, b, c], [In, In, Out], [t16()], body)
    x, y, d = (ir.Var.make(n, t16()) for n in "xyd")
    tmp = ir.Var.make("tmp", t16())
    d2 = ir.Var.make("d", t16())
    create = ir.Call.make_op("tensor.create", [sizes], {"dtype": ir.DataType.FP32})
    main_body = ir.SeqStmts.make([
        ir.AssignStmt.make(tmp, create),
        ir.AssignStmt.make(d2, ir.Call.make_func("kernel_add", [x, y, d], t16())),
        ir.ReturnStmt.make([d2]),
    ])
    main = ir.Function.make("main", ir.FunctionType.Orchestration, [x, y, d], [In, In, Out], [t16()], main_body)
    return ir.Program.make("VectorAdd", [kernel, main])


def test_enums_have_cpp_names():
    assert ir.DataType.FP32.name == "FP32"
    assert ir.FunctionType.Orchestration.name == "Orchestration"
    assert getattr(ir.Level, "None").name == "None"
    assert ir.ArgDirection.NoDep.name == "NoDep"
    assert ir.binary_op_symbol(ir.BinaryOp.FloorDiv) == "//"
    assert ir.is_float(ir.DataType.BF16) and not ir.is_float(ir.DataType.INT32)
    assert ir.bit_width(ir.DataType.TASK_ID) == 64


def test_types_fields_and_structural_eq():
    t = t16()
    assert isinstance(t, ir.TensorType) and t.kind == ir.TypeKind.Tensor
    assert [d.value for d in t.shape] == [16, 16]
    assert t.dtype == ir.DataType.FP32 and t.layout == ir.Layout.ND
    assert t == t16() and hash(t) == hash(t16())
    assert t != ir.TensorType.make([ir.ConstInt.make(16)], ir.DataType.FP32)
    tile = ir.TileType.make([ir.ConstInt.make(8)], ir.DataType.FP16, ir.MemorySpace.Left)
    assert tile.memory == ir.MemorySpace.Left
    tup = ir.TupleType.make([t, tile])
    assert len(tup.elements) == 2 and isinstance(tup.elements[1], ir.TileType)
    assert ir.TupleType.unit().elements == []
    arr = ir.ArrayType.make(4, ir.DataType.TASK_ID)
    assert arr.size == 4 and ir.is_task_id(arr)
    assert ir.python_print(arr) == "pl.Array[4, pl.TASK_ID]"
    assert repr(tile) == "pl.Tile[[8], pl.FP16, pl.MemorySpace.Left]"


def test_exprs_most_derived_class_and_identity():
    i = ir.Var.make("i", ir.ScalarType.make(ir.DataType.INDEX))
    e = ir.BinaryExpr.make(ir.BinaryOp.Add, i, ir.ConstInt.make(1))
    assert isinstance(e, ir.BinaryExpr) and isinstance(e.a, ir.Var) and isinstance(e.b, ir.ConstInt)
    assert e.op == ir.BinaryOp.Add and e.b.value == 1
    assert e.a == i and e.a.same_as(i) and hash(e.a) == hash(i)   # identity: the same C++ node
    assert ir.Var.make("i", i.type) != i                          # same name, different var
    assert {i: 1}[e.a] == 1
    assert isinstance(e.type, ir.ScalarType) and e.type.dtype == ir.DataType.INDEX
    assert ir.python_print(ir.BinaryExpr.make(ir.BinaryOp.Mul, e, ir.ConstInt.make(2))) == "(i + 1) * 2"
    assert repr(e) == "i + 1"
    f = ir.ConstFloat.make(0.5)
    assert f.value == 0.5 and f.type.dtype == ir.DataType.FP32
    assert ir.ConstBool.make(True).value is True
    c = ir.Cast.make(i, ir.DataType.INT64)
    assert c.value == i and ir.python_print(c) == "pl.cast(i, pl.INT64)"
    it = ir.IterArg.make("acc", i.type, ir.ConstInt.make(0))
    assert isinstance(it, ir.Var) and it.init.value == 0
    assert e.span.known() is False


def test_spans():
    s = ir.Span("p.py", 3, 5, 3, 9, "    x = 1")
    assert (s.file, s.line, s.col, s.end_line, s.end_col, s.source_line) == ("p.py", 3, 5, 3, 9, "    x = 1")
    v = ir.Var.make("x", ir.ScalarType.make(ir.DataType.INDEX), span=s)
    assert v.span.line == 3 and v.span.known()
    assert not ir.Span.unknown().known()


def test_attrs_dict_conversion():
    sizes = ir.MakeTuple.make([ir.ConstInt.make(4)])
    call = ir.Call.make_op("tensor.create", [sizes], {"dtype": ir.DataType.FP32, "manual_dep": True})
    assert call.attrs == {"dtype": "FP32", "manual_dep": True}
    assert call.is_op and call.callee == "tensor.create" and isinstance(call.args[0], ir.MakeTuple)
    tid = ir.Var.make("t", ir.ScalarType.make(ir.DataType.TASK_ID))
    dummy = ir.Call.make_op("system.task_dummy", [], {"manual_dep_edges": [tid], "dummy_task": True})
    # The barrier's edges are the typed Call.manual_dep_edges (issue 11: no string-keyed protocol).
    edges = dummy.manual_dep_edges
    assert isinstance(edges, list) and edges[0] == tid and "manual_dep_edges" not in dummy.attrs
    i = ir.Var.make("i", ir.ScalarType.make(ir.DataType.INDEX))
    loop = ir.ForStmt.make(i, ir.ConstInt.make(0), ir.ConstInt.make(4), ir.ConstInt.make(1), [],
                           ir.YieldStmt.make([]), [], attrs={"n": 3, "x": 1.5, "s": "text", "e": i})
    assert loop.attrs == {"e": i, "n": 3, "s": "text", "x": 1.5}
    with pytest.raises(TypeError):
        ir.Call.make_op("tensor.create", [sizes], {"dtype": object()})
    np = pytest.importorskip("numpy")
    loop2 = ir.ForStmt.make(i, ir.ConstInt.make(0), ir.ConstInt.make(4), ir.ConstInt.make(1), [],
                            ir.YieldStmt.make([]), [], attrs={"n": np.int64(5), "x": np.float64(0.25)})
    assert loop2.attrs == {"n": 5, "x": 0.25} and type(loop2.attrs["n"]) is int


def test_op_registry_queries():
    names = ir.op_names()
    assert names == sorted(names)
    for op in ("tensor.create", "tensor.read", "tile.add", "tile.load", "system.task_dummy", "array.create"):
        assert op in names
    info = ir.op_info("tile.load")
    assert info.name == "tile.load" and list(info.arg_names) == ["tensor", "offsets", "shapes", "valid_shapes"]
    assert "target_memory" in info.attr_names and info.doc
    assert ir.op_info("tile.nope") is None


def test_user_error_becomes_pypto_error_with_location():
    x = ir.Var.make("x", t16())
    span = ir.Span("prog.py", 7, 13, 7, 24, "        y = pl.add(x, 1)")
    with pytest.raises(PyptoError) as ei:
        ir.Call.make_op("tile.add", [x, ir.ConstInt.make(1)], {}, span)
    err = ei.value
    assert isinstance(err, pypto.PyptoError)
    assert (err.file, err.line, err.col, err.end_col) == ("prog.py", 7, 13, 24)
    assert err.source_line == "        y = pl.add(x, 1)"
    text = str(err)
    assert text.startswith("error: ") and " --> prog.py:7:13\n" in text
    assert text.splitlines()[2] == "7 |         y = pl.add(x, 1)"
    assert text.splitlines()[3] == "  |             " + "^" * 11


def test_internal_error_becomes_internal_compiler_error():
    with pytest.raises(InternalCompilerError) as ei:
        ir.ConstInt.make(1, ir.DataType.FP32)   # ConstInt needs an integer dtype
    assert "internal error" in str(ei.value)


def test_program_access_and_printing():
    prog = build_vector_add()
    assert [f.name for f in prog.functions] == ["kernel_add", "main"]
    assert prog.get("main").type == ir.FunctionType.Orchestration
    assert prog.get("nope") is None
    assert prog.kernel_add.name == "kernel_add"          # __getattr__ -> the function
    with pytest.raises(AttributeError):
        prog.no_such_function
    k = prog.kernel_add
    assert k.is_kernel() and [p.name for p in k.params] == ["a", "b", "c"]
    assert k.param_directions[2] == ir.ParamDirection.Out
    assert isinstance(k.body, ir.SeqStmts) and isinstance(k.body.stmts[-1], ir.ReturnStmt)
    assert k.call_result_type() == t16()
    text = ir.python_print(prog)
    assert text == repr(prog)
    assert text.startswith("import pypto.language as pl\n\n\n@pl.program\nclass VectorAdd:\n")
    assert "        ta: pl.Tile[[16, 16], pl.FP32] = pl.load(a, [0, 0], [16, 16])\n" in text
    assert "        tmp: pl.Tensor[[16, 16], pl.FP32] = pl.create_tensor([16, 16], dtype=pl.FP32)\n" in text
    assert "        d_1: pl.Tensor[[16, 16], pl.FP32] = self.kernel_add(x, y, d)\n" in text
    assert ir.python_print(k).startswith("@pl.function(type=pl.FunctionType.InCore)\ndef kernel_add(self, ")
    assert ir.python_print(k.body.stmts[-1]) == "return c_1\n" or ir.python_print(k.body.stmts[-1]) == "return c\n"


def test_structural_equal_and_hash():
    p1, p2 = build_vector_add(), build_vector_add()
    assert ir.structural_equal(p1, p2)
    assert ir.structural_equal_explain(p1, p2) == (True, "")
    assert ir.structural_hash(p1) == ir.structural_hash(p2)
    # A different program: a different constant in the kernel.
    other = p1.with_function(ir.Function.make(
        "kernel_add", ir.FunctionType.InCore, list(p1.kernel_add.params), list(p1.kernel_add.param_directions),
        [t16()], ir.ReturnStmt.make([p1.kernel_add.params[0]])))
    eq, why = ir.structural_equal_explain(p1, other)
    assert not eq and why
    assert not ir.structural_equal(p1, other)
    # Different node categories are never equal.
    assert not ir.structural_equal(p1, p1.main)
    assert ir.structural_equal(p1.main, p2.main)
    assert ir.structural_equal(ir.ConstInt.make(3), ir.ConstInt.make(3))


def test_stmt_nodes_fields():
    i = ir.Var.make("i", ir.ScalarType.make(ir.DataType.INDEX))
    tid = ir.Var.make("tid", ir.ScalarType.make(ir.DataType.TASK_ID))
    a = ir.Var.make("a", t16())
    call = ir.EvalStmt.make(ir.Call.make_func("k", [a], ir.TupleType.unit(), [ir.ArgDirection.NoDep]))
    scope = ir.ScopeStmt.make(ir.ScopeKind.Spmd, {"core_num": ir.ConstInt.make(4)}, call, tid)
    assert scope.scope_kind == ir.ScopeKind.Spmd and scope.task_id_var == tid and scope.block_var is None
    assert ir.python_print(scope) == "with pl.spmd(4) as tid:\n    self.k(pl.no_dep(a))\n"
    rs = ir.RuntimeScopeStmt.make(ir.RuntimeScopeMode.Manual, call)
    assert rs.mode == ir.RuntimeScopeMode.Manual and rs.body == call
    br = ir.IfStmt.make(ir.BinaryExpr.make(ir.BinaryOp.Lt, i, ir.ConstInt.make(2)), call)
    assert br.else_body is None and br.return_vars == []
    assert ir.python_print(br) == "if i < 2:\n    self.k(pl.no_dep(a))\n"
    sub = ir.Submit.make("k", [a], [], deps=[tid], core_num=ir.ConstInt.make(2), sync_start=True, timing_slot=1)
    assert sub.core_num.value == 2 and sub.sync_start and sub.timing_slot == 1 and sub.predicate is None
    assert isinstance(sub.type, ir.TupleType) and sub.type.elements[-1].dtype == ir.DataType.TASK_ID
    assert ir.flatten_stmts(ir.SeqStmts.make([call, ir.SeqStmts.make([call])])) == [call, call]
    assert ir.make_seq([call]) == call


def test_top_level_package():
    assert pypto.__version__
    assert pypto.PyptoError is PyptoError
    assert pypto.ir is ir
    with pytest.raises(AttributeError):
        pypto.no_such_thing


def test_float_literals_print_like_python_repr():
    import random
    rng = random.Random(7)
    values = [0.0, 1.0, -2.5, 100.0, 1e-4, 9.99e-5, 1e16, 123456789.125, 0.1 + 0.2]
    values += [rng.uniform(-1e6, 1e6) for _ in range(200)]
    values += [10.0 ** rng.randint(-30, 30) * rng.random() for _ in range(200)]
    for v in values:
        assert ir.python_print(ir.ConstFloat.make(v)) == repr(v)


def test_barrier_edges_are_a_typed_field_compared_hashed_and_printed():
    # Call.manual_dep_edges (issue 11: no string-keyed attr between layers): the barrier's edges
    # take part in structural equality and hashing, print as deps= and parse back.
    import pypto.language as pl
    src = '''import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32],
          c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32],
             d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.manual_scope():
            d, t1 = pl.submit(self.k, a, d)
            d, t2 = pl.submit(self.k, a, d)
            b = pl.system.task_dummy(deps=[EDGES])
            d, t3 = pl.submit(self.k, a, d, deps=[b])
        return d
'''
    both, one = pl.parse_program(src.replace("EDGES", "t1, t2")), pl.parse_program(src.replace("EDGES", "t1"))
    assert not ir.structural_equal(both, one)
    assert ir.structural_hash(both) != ir.structural_hash(one)
    text = ir.python_print(both)
    assert "pl.system.task_dummy(deps=[t1, t2])" in text
    back = pl.parse_program(text)
    assert ir.structural_equal(both, back) and ir.structural_hash(both) == ir.structural_hash(back)
    barrier = [s.value for s in ir.flatten_stmts(back.get("main").body.stmts[0].body)
               if isinstance(s, ir.AssignStmt) and isinstance(s.value, ir.Call) and s.value.callee == "system.task_dummy"]
    assert [e.name for e in barrier[0].manual_dep_edges] == ["t1", "t2"] and "manual_dep_edges" not in barrier[0].attrs
