"""KernelShareTileMoves (the kernel pipeline): each kernel ``tile.move`` gets its typed
``Call.shares_source_tile`` (a move that keeps the dtype is a no-op on the CPU: its result is the
source tile's buffer), printed as ``pl.move(t, ..., shares_source_tile=True)``; the CPU kernel
backend binds such a move to its source from the stamp (DSL Before / Expected)."""

import pytest

import pypto.language as pl
from pypto import ir
from pypto._core import kernel_cpu
from pypto.errors import PyptoError
from pypto.ir import passes

from pass_test_util import assert_pass


def _moves(prog, fn="k"):
    found = []

    def walk(e):
        if isinstance(e, ir.Call):
            if e.is_op and e.callee == "tile.move":
                found.append(e)
            for a in e.args:
                walk(a)

    for s in ir.flatten_stmts(prog.get(fn).body):
        if isinstance(s, ir.AssignStmt):
            walk(s.value)
    return found


def test_an_assigned_move_shares_its_source_tile():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            t = pl.load(x, [0, 0], [16, 16])
            v = pl.move(t, target_memory=pl.MemorySpace.Vec)
            y2 = pl.store(pl.add(v, t), [0, 0], y)
            return y2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            t = pl.load(x, [0, 0], [16, 16])
            v = pl.move(t, target_memory=pl.MemorySpace.Vec, shares_source_tile=True)
            y2 = pl.store(pl.add(v, t), [0, 0], y)
            return y2

    after = assert_pass(passes.KernelShareTileMoves(), Before, Expected)
    assert [m.shares_source_tile for m in _moves(after)] == [True]
    assert [m.shares_source_tile for m in _moves(Before)] == [False]
    assert passes.verify_property(passes.IRProperty.TileMoveSharingStamped, Before) != []
    assert passes.verify_property(passes.IRProperty.TileMoveSharingStamped, after) == []
    text = ir.python_print(after)
    assert "shares_source_tile=True" in text
    assert ir.structural_equal(pl.parse_program(text), after)
    assert not ir.structural_equal(Before, after)


def test_a_move_nested_in_an_op_is_stamped_and_the_backend_declares_no_tile_for_it():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            y2 = pl.store(pl.move(pl.load(x, [0, 0], [16, 16]), target_memory=pl.MemorySpace.Vec), [0, 0], y)
            return y2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            y2 = pl.store(pl.move(pl.load(x, [0, 0], [16, 16]), target_memory=pl.MemorySpace.Vec,
                                  shares_source_tile=True), [0, 0], y)
            return y2

    after = assert_pass(passes.KernelShareTileMoves(), Before, Expected)
    assert [m.shares_source_tile for m in _moves(after)] == [True]
    # The backend prints the stamped move as its source (the same C++ as without the move); left
    # unstamped (the kernel pipeline without this pass) it would copy into a second tile.
    @pl.program
    class NoMove:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            y2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)
            return y2

    def generate(prog, skip=""):
        for p in passes.kernel_pipeline():
            prog = prog if p.name == skip else p(prog)
        return kernel_cpu.generate(prog, "k")

    assert generate(Before) == generate(NoMove)
    assert generate(Before, skip="KernelShareTileMoves") != generate(NoMove)


def test_a_kernel_without_moves_is_unchanged_and_a_stamped_program_is_a_fixed_point():
    @pl.program
    class Plain:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            t = pl.load(x, [0, 0], [16, 16])
            y2 = pl.store(pl.mul(t, t), [0, 0], y)
            return y2

    after = assert_pass(passes.KernelShareTileMoves(), Plain, Plain)
    assert passes.verify_property(passes.IRProperty.TileMoveSharingStamped, after) == []

    @pl.program
    class Stamped:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            t = pl.load(x, [0, 0], [16, 16])
            v = pl.move(t, target_memory=pl.MemorySpace.Vec, shares_source_tile=True)
            w = pl.move(v, target_memory=pl.MemorySpace.Vec, shares_source_tile=True)
            y2 = pl.store(w, [0, 0], y)
            return y2

    assert_pass(passes.KernelShareTileMoves(), Stamped, Stamped)


def test_shares_source_tile_takes_a_bool_literal():
    with pytest.raises(PyptoError) as ei:
        @pl.program
        class Bad:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
                t = pl.load(x, [0, 0], [16, 16])
                v = pl.move(t, target_memory=pl.MemorySpace.Vec, shares_source_tile=1)
                y2 = pl.store(v, [0, 0], y)
                return y2
    assert "shares_source_tile= takes True or False" in ei.value.message


def test_a_move_whose_source_or_result_is_written_in_place_keeps_a_buffer_of_its_own():
    """tile.write, fillpad_inplace and gather_row write their first operand's buffer: a move of
    such a tile, or into one, is a copy (the accelerator's move makes one), so the write does
    not show in the other tile. The untouched move still shares."""
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[4, 4], pl.FP32], y: pl.Out[pl.Tensor[[16, 4], pl.FP32]]) -> pl.Tensor[[16, 4], pl.FP32]:
            t = pl.load(x, [0, 0], [4, 4])
            m = pl.move(t, target_memory=pl.MemorySpace.Vec)
            pl.tile.write(m, [0, 0], 99.0)
            u = pl.load(x, [0, 0], [4, 4])
            n = pl.move(u, target_memory=pl.MemorySpace.Vec)
            pl.tile.write(u, [0, 0], 98.0)
            w = pl.load(x, [0, 0], [4, 4], [2, 2])
            f = pl.tile.fillpad_inplace(pl.move(w, target_memory=pl.MemorySpace.Vec), pad_value=pl.PadValue.max)
            v = pl.load(x, [0, 0], [4, 4])
            s = pl.move(v, target_memory=pl.MemorySpace.Vec)
            y = pl.store(t, [0, 0], y)
            y = pl.store(n, [4, 0], y)
            y = pl.store(pl.add(s, f), [8, 0], y)
            y = pl.store(pl.set_validshape(w, 4, 4), [12, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[4, 4], pl.FP32], y: pl.Out[pl.Tensor[[16, 4], pl.FP32]]) -> pl.Tensor[[16, 4], pl.FP32]:
            y = self.k(x, y)
            return y

    after = passes.KernelShareTileMoves()(Before)
    assert [m.shares_source_tile for m in _moves(after)] == [False, False, False, True]
    assert passes.verify_property(passes.IRProperty.TileMoveSharingStamped, after) == []

    import numpy as np
    import pypto
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    y = np.zeros((16, 4), np.float32)
    prog = pypto.compile(Before)
    try:
        prog(x, y)
    finally:
        prog.close()
    np.testing.assert_array_equal(y[0:4], x)                 # t: the write went into m only
    np.testing.assert_array_equal(y[4:8], x)                 # n: moved before u's write
    np.testing.assert_array_equal(y[12:14, 0:2], x[0:2, 0:2])   # w: the pad went into the move's copy
    np.testing.assert_array_equal(y[12:16, 2:4], 0)
    np.testing.assert_array_equal(y[14:16, 0:2], 0)
