"""KernelLendLoopInits (the kernel pipeline): each kernel loop gets its typed
``ForStmt.lent_inits`` (the iter_args whose init tile, read nowhere else, the carry takes as its
storage instead of a copy), printed as ``pl.range(..., init_values=(acc0,), lent_inits=[0])``;
the CPU kernel backend binds such a carry to its init's buffer from the stamp (DSL Before /
Expected)."""

import pytest

import pypto.language as pl
from pypto import ir
from pypto._core import kernel_cpu
from pypto.errors import PyptoError
from pypto.ir import passes

from pass_test_util import assert_pass

PROP = passes.IRProperty.LoopInitLendingStamped


def _generate(prog, skip=()):
    for p in passes.kernel_pipeline():
        prog = prog if p.name in skip else p(prog)
    return kernel_cpu.generate(prog, "k")


def test_an_init_read_only_by_the_loop_is_lent_to_its_carry():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
              ) -> pl.Tensor[[16, 16], pl.FP32]:
            acc0 = pl.tile.full([16, 16], pl.FP32, 0.0)
            for i, (acc,) in pl.range(0, 4, 1, init_values=(acc0,)):
                t = pl.load(a, [0, 0], [16, 16])
                nxt = pl.add(acc, t)
                acc_out = pl.yield_(nxt)
            c2 = pl.store(acc_out, [0, 0], c)
            return c2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
              ) -> pl.Tensor[[16, 16], pl.FP32]:
            acc0 = pl.tile.full([16, 16], pl.FP32, 0.0)
            for i, (acc,) in pl.range(0, 4, 1, init_values=(acc0,), lent_inits=[0]):
                t = pl.load(a, [0, 0], [16, 16])
                nxt = pl.add(acc, t)
                acc_out = pl.yield_(nxt)
            c2 = pl.store(acc_out, [0, 0], c)
            return c2

    after = assert_pass(passes.KernelLendLoopInits(), Before, Expected)
    loop = [s for s in ir.flatten_stmts(after.get("k").body) if isinstance(s, ir.ForStmt)][0]
    assert list(loop.lent_inits) == [0]
    assert passes.verify_property(PROP, Before) != []
    assert passes.verify_property(PROP, after) == []
    assert not ir.structural_equal(Before, after)
    # Printer round trip: printed only when set, re-parsed into the same typed field.
    text = ir.python_print(after)
    assert "lent_inits=[0]" in text and "lent_inits" not in ir.python_print(Before)
    assert ir.structural_equal(pl.parse_program(text), after)
    assert_pass(passes.KernelLendLoopInits(), Expected, Expected)   # a fixed point
    # The backend reads the stamp: without it the init is copied into a slot of its own.
    lent, copied = _generate(Before), _generate(Before, skip={"KernelLendLoopInits"})
    assert copied.count("pypto_kernel::copy(") == lent.count("pypto_kernel::copy(") + 1


def test_an_init_read_again_is_not_lent():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
              ) -> pl.Tensor[[16, 16], pl.FP32]:
            acc0 = pl.tile.full([16, 16], pl.FP32, 0.0)
            for i, (acc,) in pl.range(0, 4, 1, init_values=(acc0,)):
                t = pl.load(a, [0, 0], [16, 16])
                nxt = pl.add(acc, t)
                acc_out = pl.yield_(nxt)
            s = pl.sub(acc_out, acc0)
            c2 = pl.store(s, [0, 0], c)
            return c2

    after = assert_pass(passes.KernelLendLoopInits(), Before, Before)
    assert passes.verify_property(PROP, after) == []
    # A stale stamp (the init is read after the loop) is reported, and the pass clears it.
    wrong = pl.parse_program(ir.python_print(Before).replace("init_values=(acc0,)", "init_values=(acc0,), lent_inits=[0]"))
    assert [m for m in passes.verify_property(PROP, wrong) if "stale lent_inits" in m] != []
    assert_pass(passes.KernelLendLoopInits(), wrong, Before)


def test_an_init_from_outside_an_enclosing_loop_is_not_lent():
    # acc0 is defined outside the loop over j: the inner loop starts from it on every j, so it
    # cannot become the carry's storage; b0 is defined in the same loop as the inner loop.
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
              ) -> pl.Tensor[[16, 16], pl.FP32]:
            acc0 = pl.tile.full([16, 16], pl.FP32, 0.0)
            for j, (o,) in pl.range(0, 2, 1, init_values=(c,)):
                b0 = pl.tile.full([16, 16], pl.FP32, 1.0)
                for i, (acc, b) in pl.range(0, 4, 1, init_values=(acc0, b0)):
                    t = pl.load(a, [0, 0], [16, 16])
                    nxt = pl.add(acc, t)
                    nb = pl.mul(b, t)
                    acc_out, b_out = pl.yield_(nxt, nb)
                s = pl.add(acc_out, b_out)
                o2 = pl.store(s, [0, 0], o)
                o_out = pl.yield_(o2)
            return o_out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
              ) -> pl.Tensor[[16, 16], pl.FP32]:
            acc0 = pl.tile.full([16, 16], pl.FP32, 0.0)
            for j, (o,) in pl.range(0, 2, 1, init_values=(c,)):
                b0 = pl.tile.full([16, 16], pl.FP32, 1.0)
                for i, (acc, b) in pl.range(0, 4, 1, init_values=(acc0, b0), lent_inits=[1]):
                    t = pl.load(a, [0, 0], [16, 16])
                    nxt = pl.add(acc, t)
                    nb = pl.mul(b, t)
                    acc_out, b_out = pl.yield_(nxt, nb)
                s = pl.add(acc_out, b_out)
                o2 = pl.store(s, [0, 0], o)
                o_out = pl.yield_(o2)
            return o_out

    after = assert_pass(passes.KernelLendLoopInits(), Before, Expected)
    assert passes.verify_property(PROP, after) == []
    assert ir.structural_equal(pl.parse_program(ir.python_print(after)), after)


def test_lent_inits_index_out_of_range_is_a_located_error():
    src = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.tile.full([16, 16], pl.FP32, 0.0)
        for i, (acc,) in pl.range(0, 4, 1, init_values=(t,), lent_inits=[1]):
            acc_out = pl.yield_(pl.add(acc, acc))
        y2 = pl.store(acc_out, [0, 0], y)
        return y
'''
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(src, "c.py")
    assert "lent_inits= names iter_arg 1, but the loop has 1" in ei.value.message
    assert ei.value.line == 9
