"""KernelInPlaceCarries (the kernel pipeline): each kernel loop gets its typed
``ForStmt.inplace_carries`` (the carries whose yielded tile the body computes straight into the
carry's storage), printed as ``pl.range(..., inplace_carries=[0])`` (DSL Before / Expected)."""

import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import PyptoError
from pypto.ir import passes

from pass_test_util import assert_pass


def _loop(prog, fn="k"):
    return [s for s in ir.flatten_stmts(prog.get(fn).body) if isinstance(s, ir.ForStmt)][0]


def test_accumulator_updated_by_an_elementwise_op_is_in_place():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            t = pl.load(x, [0, 0], [16, 16])
            for i, (acc,) in pl.range(0, 4, 1, init_values=(t,)):
                nxt = pl.add(acc, t)
                acc_out = pl.yield_(nxt)
            y2 = pl.store(acc_out, [0, 0], y)
            return y

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            t = pl.load(x, [0, 0], [16, 16])
            for i, (acc,) in pl.range(0, 4, 1, init_values=(t,), inplace_carries=[0]):
                nxt = pl.add(acc, t)
                acc_out = pl.yield_(nxt)
            y2 = pl.store(acc_out, [0, 0], y)
            return y

    after = assert_pass(passes.KernelInPlaceCarries(), Before, Expected)
    assert list(_loop(after).inplace_carries) == [0]
    assert passes.verify_property(passes.IRProperty.InPlaceCarriesFound, Before) != []
    assert passes.verify_property(passes.IRProperty.InPlaceCarriesFound, after) == []
    text = ir.python_print(after)
    assert "inplace_carries=[0]" in text
    assert ir.structural_equal(pl.parse_program(text), after)


def test_carry_read_after_the_update_or_swapped_is_not_in_place():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            t = pl.load(x, [0, 0], [16, 16])
            for i, (a, b) in pl.range(0, 4, 1, init_values=(t, t)):
                a2 = pl.add(a, t)
                b2 = pl.mul(b, a)
                a_out, b_out = pl.yield_(a2, b2)
            y2 = pl.store(a_out, [0, 0], y)
            return y

    # a2 is computed before `a` is read again (by b2): not in place; b2 is the last op: in place.
    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            t = pl.load(x, [0, 0], [16, 16])
            for i, (a, b) in pl.range(0, 4, 1, init_values=(t, t), inplace_carries=[1]):
                a2 = pl.add(a, t)
                b2 = pl.mul(b, a)
                a_out, b_out = pl.yield_(a2, b2)
            y2 = pl.store(a_out, [0, 0], y)
            return y

    assert_pass(passes.KernelInPlaceCarries(), Before, Expected)


def test_tile_yielded_twice_is_not_in_place_and_orchestration_is_untouched():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            t = pl.load(x, [0, 0], [16, 16])
            for i, (a, b) in pl.range(0, 2, 1, init_values=(t, t)):
                nxt = pl.add(a, b)
                a_out, b_out = pl.yield_(nxt, nxt)
            y2 = pl.store(a_out, [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            y2 = self.k(x, y)
            return y

    after = assert_pass(passes.KernelInPlaceCarries(), Before, Before)
    assert list(_loop(after).inplace_carries) == []


def test_inplace_carries_index_out_of_range_is_a_located_error():
    src = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 16])
        for i, (acc,) in pl.range(0, 4, 1, init_values=(t,), inplace_carries=[1]):
            acc_out = pl.yield_(pl.add(acc, t))
        y2 = pl.store(acc_out, [0, 0], y)
        return y
'''
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(src, "c.py")
    assert "inplace_carries= names iter_arg 1, but the loop has 1" in ei.value.message
    assert ei.value.line == 9
