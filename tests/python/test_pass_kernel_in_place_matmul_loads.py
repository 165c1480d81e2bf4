"""KernelInPlaceMatmulLoads (the kernel pipeline): each kernel ``tile.load`` gets its typed
``Call.reads_in_place`` (only a matmul reads the tile and no tensor is written before it does, so
the matmul reads the box where it lies in the tensor), printed as
``pl.load(a, ..., reads_in_place=True)``; the CPU kernel backend prints a stamped load as
``load_view`` from the stamp (DSL Before / Expected)."""

import pytest

import pypto.language as pl
from pypto import ir
from pypto._core import kernel_cpu
from pypto.errors import PyptoError
from pypto.ir import passes

from pass_test_util import assert_pass

PROP = passes.IRProperty.InPlaceMatmulLoadsStamped


def _generate(prog, skip=()):
    for p in passes.kernel_pipeline():
        prog = prog if p.name in skip else p(prog)
    return kernel_cpu.generate(prog, "k")


def test_loads_only_a_matmul_reads_are_read_in_place():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            ta = pl.load(a, [0, 0], [16, 16])
            tb = pl.load(b, [0, 0], [16, 16])
            acc = pl.matmul(ta, tb)
            c2 = pl.store(acc, [0, 0], c)
            return c2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            ta = pl.load(a, [0, 0], [16, 16], reads_in_place=True)
            tb = pl.load(b, [0, 0], [16, 16], reads_in_place=True)
            acc = pl.matmul(ta, tb)
            c2 = pl.store(acc, [0, 0], c)
            return c2

    after = assert_pass(passes.KernelInPlaceMatmulLoads(), Before, Expected)
    assert passes.verify_property(PROP, Before) != []
    assert passes.verify_property(PROP, after) == []
    assert not ir.structural_equal(Before, after)
    # Printer round trip: printed only when set, re-parsed into the same typed field.
    text = ir.python_print(after)
    assert text.count("reads_in_place=True") == 2 and "reads_in_place" not in ir.python_print(Before)
    assert ir.structural_equal(pl.parse_program(text), after)
    # The backend reads the stamp: load_view with it, a copying load without it.
    assert _generate(Before).count("load_view") == 2
    assert "load_view" not in _generate(Before, skip={"KernelInPlaceMatmulLoads", "KernelLendLoopInits"})


def test_a_tensor_written_between_the_load_and_its_matmul_keeps_the_copy():
    # ta: a store runs between the load and the matmul (a, z and d may view one buffer);
    # tz: read by the store; tb: loaded after the store, read only by the matmul.
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32], z: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]], d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
              ) -> pl.Tensor[[16, 16], pl.FP32]:
            ta = pl.load(a, [0, 0], [16, 16])
            tz = pl.load(z, [0, 0], [16, 16])
            d2 = pl.store(tz, [0, 0], d)
            tb = pl.load(b, [0, 0], [16, 16])
            acc = pl.matmul(ta, tb)
            c2 = pl.store(acc, [0, 0], c)
            return c2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32], z: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]], d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
              ) -> pl.Tensor[[16, 16], pl.FP32]:
            ta = pl.load(a, [0, 0], [16, 16])
            tz = pl.load(z, [0, 0], [16, 16])
            d2 = pl.store(tz, [0, 0], d)
            tb = pl.load(b, [0, 0], [16, 16], reads_in_place=True)
            acc = pl.matmul(ta, tb)
            c2 = pl.store(acc, [0, 0], c)
            return c2

    after = assert_pass(passes.KernelInPlaceMatmulLoads(), Before, Expected)
    assert passes.verify_property(PROP, after) == []
    assert _generate(Before).count("load_view") == 1


def test_a_tile_with_another_use_keeps_the_copy():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            ta = pl.load(a, [0, 0], [16, 16])
            tb = pl.load(b, [0, 0], [16, 16])
            acc = pl.matmul(ta, tb)
            s = pl.add(acc, ta)
            c2 = pl.store(s, [0, 0], c)
            return c2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            ta = pl.load(a, [0, 0], [16, 16])
            tb = pl.load(b, [0, 0], [16, 16], reads_in_place=True)
            acc = pl.matmul(ta, tb)
            s = pl.add(acc, ta)
            c2 = pl.store(s, [0, 0], c)
            return c2

    assert_pass(passes.KernelInPlaceMatmulLoads(), Before, Expected)
    # A stale stamp (the tile has another use) is reported, and the pass clears it.
    wrong = pl.parse_program(ir.python_print(Expected).replace("[16, 16])\n", "[16, 16], reads_in_place=True)\n", 1))
    assert wrong.get("k") is not None and not ir.structural_equal(wrong, Expected)
    assert [m for m in passes.verify_property(PROP, wrong) if "stale reads_in_place" in m] != []
    assert_pass(passes.KernelInPlaceMatmulLoads(), wrong, Expected)


def test_a_load_written_as_the_operand_through_a_sharing_move_is_read_in_place():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            acc = pl.matmul(pl.load(a, [0, 0], [16, 16]),
                            pl.move(pl.load(b, [0, 0], [16, 16]), target_memory=pl.MemorySpace.Right,
                                    shares_source_tile=True))
            c2 = pl.store(acc, [0, 0], c)
            return c2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            acc = pl.matmul(pl.load(a, [0, 0], [16, 16], reads_in_place=True),
                            pl.move(pl.load(b, [0, 0], [16, 16], reads_in_place=True),
                                    target_memory=pl.MemorySpace.Right, shares_source_tile=True))
            c2 = pl.store(acc, [0, 0], c)
            return c2

    after = assert_pass(passes.KernelInPlaceMatmulLoads(), Before, Expected)
    assert ir.structural_equal(pl.parse_program(ir.python_print(after)), after)
    assert_pass(passes.KernelInPlaceMatmulLoads(), Expected, Expected)   # a fixed point
    # The move is looked through only once KernelShareTileMoves stamped it (the pipeline runs
    # that pass first): unstamped, the backend copies the load into the move, so b's load keeps
    # its copy.
    unstamped = pl.parse_program(ir.python_print(Before).replace(", shares_source_tile=True", ""))
    expected = pl.parse_program(ir.python_print(Expected).replace(", shares_source_tile=True", "")
                                .replace("pl.load(b, [0, 0], [16, 16], reads_in_place=True)", "pl.load(b, [0, 0], [16, 16])"))
    assert ir.python_print(expected).count("reads_in_place=True") == 1
    assert_pass(passes.KernelInPlaceMatmulLoads(), unstamped, expected)


def test_reads_in_place_takes_a_bool_literal():
    with pytest.raises(PyptoError) as ei:
        @pl.program
        class Bad:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
                  ) -> pl.Tensor[[16, 16], pl.FP32]:
                ta = pl.load(a, [0, 0], [16, 16], reads_in_place=1)
                c2 = pl.store(ta, [0, 0], c)
                return c2
    assert "reads_in_place= takes True or False" in ei.value.message
