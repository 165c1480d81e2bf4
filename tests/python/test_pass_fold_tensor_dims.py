"""FoldTensorDims: in an Orchestration function, ``tensor.dim(t, k)`` becomes the extent t's type
declares on axis k when it is a literal or a dynamic-dim symbol a tensor parameter declares: the
form the DSL parser writes for ``pl.tensor.dim``. The Before programs are built with the Python
IR builder (the parser has already folded any ``pl.tensor.dim`` of an orchestration body); the
Expected ones are DSL."""

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
