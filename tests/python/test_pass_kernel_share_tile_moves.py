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
