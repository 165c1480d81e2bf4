"""FoldTensorDims: in an Orchestration function, ``tensor.dim(t, k)`` becomes the extent t's type
declares on axis k when it is a literal or a dynamic-dim symbol a tensor parameter declares: the
form the DSL parser writes for ``pl.tensor.dim``. The Before programs are built with the Python
IR builder (the parser has already folded any ``pl.tensor.dim`` of an orchestration body); the
Expected ones are DSL. The last test compiles and runs such a program."""

import numpy as np

import pypto
import pypto.language as pl
from pypto import ir
from pypto.ir import passes

from pass_test_util import assert_equal, assert_pass

In, Out = ir.ParamDirection.In, ir.ParamDirection.Out
INDEX = ir.ScalarType.make(ir.DataType.INDEX)

M = pl.dynamic("M")


def i(v):
    return ir.ConstInt.make(v)


def tensor(*shape):
    return ir.TensorType.make([i(d) if isinstance(d, int) else d for d in shape], ir.DataType.FP32)


def dim(t, axis):
    return ir.Call.make_op("tensor.dim", [t, i(axis)])


def orchestration(params, dirs, stmts, ret):
    """def main(self, *params) -> <ret's type>: *stmts; return ret"""
    body = ir.SeqStmts.make([*stmts, ir.ReturnStmt.make([ret])])
    return ir.Function.make("main", ir.FunctionType.Orchestration, params, dirs, [ret.type], body)


def test_dynamic_axis_of_a_parameter_becomes_its_dim_symbol():
    m = ir.Var.make("M", INDEX)
    x, o = ir.Var.make("x", tensor(m, 16)), ir.Var.make("o", tensor(16, 16))
    n = ir.Var.make("n", INDEX)
    before = ir.Program.make("Before", [orchestration([x, o], [In, Out], [ir.AssignStmt.make(n, dim(x, 0))], o)], [m])

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[M, 16], pl.FP32],
                 o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            n = pl.tensor.dim(x, 0)   # the parser writes n = M
            return o

    after = assert_pass(passes.FoldTensorDims(), before, Expected)
    assert passes.verify_property(passes.IRProperty.TensorDimsFolded, after) == []
    assert passes.verify_property(passes.IRProperty.TensorDimsFolded, before) != []


def test_static_axis_becomes_the_literal_also_inside_an_expression():
    m = ir.Var.make("M", INDEX)
    x, o = ir.Var.make("x", tensor(m, 16)), ir.Var.make("o", tensor(16, 16))
    c, c2 = ir.Var.make("c", INDEX), ir.Var.make("c2", INDEX)
    twice = ir.BinaryExpr.make(ir.BinaryOp.Mul, dim(x, 1), i(2))
    stmts = [ir.AssignStmt.make(c, dim(x, -1)), ir.AssignStmt.make(c2, twice)]
    before = ir.Program.make("Before", [orchestration([x, o], [In, Out], stmts, o)], [m])

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[M, 16], pl.FP32],
                 o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c = pl.tensor.dim(x, -1)        # c = 16
            c2 = pl.tensor.dim(x, 1) * 2    # c2 = 16 * 2
            return o

    assert_pass(passes.FoldTensorDims(), before, Expected)


def test_extent_no_parameter_declares_is_left():
    # v = tensor.slice(x, [m, 16], [0, 0]) with m a scalar parameter: v's extent `m` is no dim
    # symbol of a tensor parameter (the run-time view may be clamped below m), so tensor.dim(v, 0)
    # stays for the generator to read from the Tensor.
    m = ir.Var.make("m", INDEX)
    x, o = ir.Var.make("x", tensor(16, 16)), ir.Var.make("o", tensor(16, 16))
    v, d = ir.Var.make("v", tensor(m, 16)), ir.Var.make("d", INDEX)
    slice_ = ir.Call.make_op("tensor.slice", [x, ir.MakeTuple.make([m, i(16)]), ir.MakeTuple.make([i(0), i(0)])])
    stmts = [ir.AssignStmt.make(v, slice_), ir.AssignStmt.make(d, dim(v, 0))]
    before = ir.Program.make("Before", [orchestration([x, o, m], [In, Out, In], stmts, o)])
    expected = ir.Program.make("Expected", [orchestration([x, o, m], [In, Out, In], stmts, o)])
    after = assert_pass(passes.FoldTensorDims(), before, expected)
    assert passes.verify_property(passes.IRProperty.TensorDimsFolded, after) == []


def test_kernel_tensor_dim_is_left_to_the_kernel_backend():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[M, 16], pl.FP32],
              y: pl.Out[pl.Tensor[[M, 16], pl.FP32]]) -> pl.Tensor[[M, 16], pl.FP32]:
            rows = pl.tensor.dim(x, 0)
            t = pl.load(x, [0, 0], [16, 16])
            y2 = pl.store(t, [0, 0], y)
            return y2

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[M, 16], pl.FP32],
                 y: pl.Out[pl.Tensor[[M, 16], pl.FP32]]) -> pl.Tensor[[M, 16], pl.FP32]:
            y2 = self.k(x, y)
            return y2

    after = passes.FoldTensorDims()(Before)
    assert_equal(after, Before, "FoldTensorDims")
    assert "tensor.dim" in ir.python_print(after)   # the kernel's call is still there


@pl.program
class _Put:
    @pl.function(type=pl.FunctionType.InCore)
    def put(self, x: pl.Tensor[[M, 8], pl.FP32], y: pl.Out[pl.Tensor[[M, 8], pl.FP32]],
            n: pl.Scalar[pl.INDEX], m: pl.Scalar[pl.INDEX]) -> pl.Tensor[[M, 8], pl.FP32]:
        y = pl.store(pl.load(x, [n - 4, 0], [4, 8]), [m - 4, 0], y)   # x's last 4 rows -> rows m-4..m-1
        return y


def test_ir_built_tensor_dims_compile_and_run(tmp_path):
    # main(x: [M, 8], y: Out[M, 8], k): n = tensor.dim(x, 0) (folded to M); v = slice(x, [k, 8]);
    # m = tensor.dim(v, 0) (left: the view's run-time extent, min(k, M)); put(x, y, n, m).
    mv = _Put.dynamic_dims[0]
    tm8 = tensor(mv, 8)
    x, y, k = ir.Var.make("x", tm8), ir.Var.make("y", tm8), ir.Var.make("k", INDEX)
    n, m, y2 = ir.Var.make("n", INDEX), ir.Var.make("m", INDEX), ir.Var.make("y2", tm8)
    v = ir.Var.make("v", tensor(k, 8))
    slice_ = ir.Call.make_op("tensor.slice", [x, ir.MakeTuple.make([k, i(8)]), ir.MakeTuple.make([i(0), i(0)])])
    stmts = [ir.AssignStmt.make(n, dim(x, 0)), ir.AssignStmt.make(v, slice_), ir.AssignStmt.make(m, dim(v, 0)),
             ir.AssignStmt.make(y2, ir.Call.make_func("put", [x, y, n, m], tm8))]
    main = orchestration([x, y, k], [In, Out, In], stmts, y2)
    prog = pypto.compile(ir.Program.make("FoldRun", [_Put.get("put"), main], [mv]), output_dir=str(tmp_path))
    code = (tmp_path / "orchestration" / "main.cpp").read_text()
    assert "add_scalar((uint64_t)M);" in code            # n is M, read once in the prologue
    assert "int64_t m = (int64_t)v.shapes[0];" in code   # the view's own extent
    xa = np.arange(64, dtype=np.float32).reshape(8, 8)
    for k_value, m_value in ((6, 6), (20, 8)):   # a slice past the end is clamped to M rows
        ya = np.zeros((8, 8), np.float32)
        prog(xa, ya, k_value)
        expected = np.zeros((8, 8), np.float32)
        expected[m_value - 4:m_value] = xa[4:8]
        np.testing.assert_array_equal(ya, expected)
