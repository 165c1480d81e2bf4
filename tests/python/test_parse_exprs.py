"""Expressions and ops: scalars, operators, min/max, subscripts, casts, pl.tensor.dim folding,
op calls (list args -> MakeTuple, dtype/memory -> attrs), kernel calls."""

import textwrap

import pypto.language as pl
from pypto._core import ir

T = "pl.Tensor[[16, 16], pl.FP32]"
KERNEL = f"""
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: {T}, s: pl.Scalar[pl.FP32], c: pl.Out[{T}]) -> {T}:
        c = pl.store(pl.mul(pl.load(a, [0, 0], [16, 16]), s), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def two(self, a: {T}, p: pl.Out[{T}], m: pl.Out[{T}]) -> tuple[{T}, {T}]:
        p = pl.store(pl.exp(pl.load(a, [0, 0], [16, 16])), [0, 0], p)
        m = pl.store(pl.neg(pl.load(a, [0, 0], [16, 16])), [0, 0], m)
        return p, m
"""


def main_stmts(body, params=f"a: {T}, b: {T}, d: pl.Out[{T}], n: pl.Scalar[pl.INDEX]", ftype="Orchestration",
               prelude=""):
    body = textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8)
    src = (f"import pypto.language as pl\n{prelude}\n@pl.program\nclass P:{KERNEL}\n"
           f"    @pl.function(type=pl.FunctionType.{ftype})\n    def main(self, {params}):\n{body}\n")
    p = pl.parse_program(src, "t.py")
    return ir.flatten_stmts(p.get("main").body)


def test_scalar_arithmetic_and_literals():
    (s,) = main_stmts("x = (n * 4 + 1) // 2 % 3 - n / 2")
    e = s.value
    assert e.op == ir.BinaryOp.Sub and e.b.op == ir.BinaryOp.Div
    mod = e.a
    assert mod.op == ir.BinaryOp.Mod and mod.a.op == ir.BinaryOp.FloorDiv
    assert mod.a.a.op == ir.BinaryOp.Add and mod.a.a.a.op == ir.BinaryOp.Mul
    assert isinstance(mod.a.a.a.b, ir.ConstInt) and mod.a.a.a.b.type == ir.ScalarType.make(ir.DataType.INDEX)


def test_literal_kinds():
    a, b, c, d = main_stmts("x = 3\ny = 2.5\nz = True\nw = -7")
    assert isinstance(a.value, ir.ConstInt) and a.value.value == 3
    assert isinstance(b.value, ir.ConstFloat) and b.value.type == ir.ScalarType.make(ir.DataType.FP32)
    assert isinstance(c.value, ir.ConstBool) and c.value.value is True
    assert isinstance(d.value, ir.ConstInt) and d.value.value == -7


def test_comparisons_logic_unary_min_max():
    a, b, c = main_stmts("x = (n > 1) and not (n == 2) or n != 3\ny = -n\nz = max(min(n, 4), 1)")
    assert a.value.op == ir.BinaryOp.Or and a.value.a.op == ir.BinaryOp.And
    assert a.value.a.b.op == ir.UnaryOp.Not
    assert b.value.op == ir.UnaryOp.Neg
    assert c.value.op == ir.BinaryOp.Max and c.value.a.op == ir.BinaryOp.Min


def test_tensor_subscript_is_tensor_read():
    (s,) = main_stmts("x = a[1, n]")
    call = s.value
    assert call.callee == "tensor.read" and call.is_op
    assert isinstance(call.args[1], ir.MakeTuple) and call.args[1].elements[1].same_as(
        call.args[1].elements[1])
    assert s.var.type == ir.ScalarType.make(ir.DataType.FP32)


def test_scalar_and_tile_casts():
    (sc,) = main_stmts("x = pl.cast(n, pl.FP32)")
    assert isinstance(sc.value, ir.Cast) and sc.var.type == ir.ScalarType.make(ir.DataType.FP32)
    # A tile op runs only in a kernel (an Orchestration body refuses it at the op).
    (tile_cast,) = main_stmts("t = pl.cast(pl.load(a, [0, 0], [16, 16]), pl.FP16)", ftype="InCore")
    tc = tile_cast.value
    assert tc.callee == "tile.cast" and tc.attrs == {"dtype": "FP16"}
    assert tc.type.dtype == ir.DataType.FP16


def test_op_list_args_become_make_tuple_and_dtype_attrs():
    (s,) = main_stmts("x = pl.create_tensor([16, n], dtype=pl.FP32, manual_dep=True)")
    call = s.value
    assert call.callee == "tensor.create"
    assert isinstance(call.args[0], ir.MakeTuple) and len(call.args[0].elements) == 2
    assert call.attrs == {"dtype": "FP32", "manual_dep": True}


def test_tile_ops_with_memory_attr_and_full():
    stmts = main_stmts("""
        t = pl.load(a, [0, 0], [16, 16])
        l = pl.move(t, target_memory=pl.MemorySpace.Left)
        f = pl.tile.full([16, 16], pl.FP32, 0.0)
        i = pl.tile.get_block_idx()
    """, ftype="InCore")
    assert stmts[1].value.attrs == {"target_memory": "Left"}
    assert stmts[1].var.type.memory == ir.MemorySpace.Left
    full = stmts[2].value
    assert full.callee == "tile.full" and full.attrs == {"dtype": "FP32"} and len(full.args) == 2
    assert stmts[3].value.callee == "tile.get_block_idx"


def test_tensor_dim_folds_in_orchestration_only():
    prelude = 'M = pl.dynamic("M")\n'
    params = "x: pl.Tensor[[M, 16], pl.FP32]"
    s0, s1 = main_stmts("r = pl.tensor.dim(x, 0)\nc = pl.tensor.dim(x, -1)", params=params, prelude=prelude)
    assert isinstance(s0.value, ir.Var) and s0.value.name == "M"
    assert isinstance(s1.value, ir.ConstInt) and s1.value.value == 16
    (k,) = main_stmts("r = pl.tensor.dim(x, 0)", params=params, prelude=prelude, ftype="InCore")
    assert isinstance(k.value, ir.Call) and k.value.callee == "tensor.dim"


def test_kernel_call_and_python_number_args():
    (s,) = main_stmts("d = self.k(a, 2.0, d)")
    call = s.value
    assert call.callee == "k" and not call.is_op
    assert isinstance(call.args[1], ir.ConstFloat)
    assert list(call.arg_directions) == []


def test_multi_output_unpacking_and_tuple_index():
    stmts = main_stmts("p, m = self.two(a, d, d)\npm = self.two(a, p, m)\nq = pm[1]")
    tmp, p, m, pm, q = stmts
    assert isinstance(tmp.var.type, ir.TupleType)
    assert isinstance(p.value, ir.TupleGetItem) and p.value.index == 0 and p.value.tuple.same_as(tmp.var)
    assert m.value.index == 1
    assert isinstance(q.value, ir.TupleGetItem) and q.value.index == 1 and q.value.tuple.same_as(pm.var)


def test_reassignment_creates_new_ssa_var():
    s0, s1 = main_stmts("d = self.k(a, 1.0, d)\nd = self.k(d, 1.0, d)")
    assert s0.var.name == s1.var.name == "d"
    assert not s0.var.same_as(s1.var)
    assert s1.value.args[0].same_as(s0.var)


def test_none_is_task_invalid():
    (s,) = main_stmts("t = None")
    assert s.value.callee == "system.task_invalid"
    assert s.var.type == ir.ScalarType.make(ir.DataType.TASK_ID)


def test_annotated_assignment_checked_and_kept():
    (s,) = main_stmts(f"c: {T} = pl.create_tensor([16, 16], dtype=pl.FP32)")
    assert s.var.type == ir.TensorType.make([ir.ConstInt.make(16), ir.ConstInt.make(16)], ir.DataType.FP32)


def test_scalar_augmented_assignment():
    (s,) = main_stmts("n += 1")
    assert s.var.name == "n" and s.value.op == ir.BinaryOp.Add


def test_expression_statement_is_eval():
    (s,) = main_stmts("self.k(a, 1.0, d)")
    assert isinstance(s, ir.EvalStmt) and s.expr.callee == "k"
