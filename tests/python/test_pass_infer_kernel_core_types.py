"""InferKernelCoreTypes (the kernel pipeline): each kernel and Group function gets its typed
core type, printed as ``core_type=pl.CoreType.X`` (DSL Before / Expected)."""

import pytest

import pypto.language as pl
from pypto import ir
from pypto._core import kernel_cpu
from pypto.errors import InternalCompilerError
from pypto.ir import passes

from pass_test_util import assert_pass


def test_incore_kernels_are_aiv_unless_a_tile_lives_in_cube_memory():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def vec(self, x: pl.Tensor[[16, 16], pl.FP32],
                y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            y2 = pl.store(pl.exp(pl.load(x, [0, 0], [16, 16])), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.InCore)
        def cube(self, a: pl.Tensor[[16, 16], pl.FP16], b: pl.Tensor[[16, 16], pl.FP16],
                 c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            ta = pl.move(pl.load(a, [0, 0], [16, 16]), target_memory=pl.MemorySpace.Left)
            tb = pl.move(pl.load(b, [0, 0], [16, 16]), target_memory=pl.MemorySpace.Right)
            c2 = pl.store(pl.matmul(ta, tb), [0, 0], c)
            return c

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore, core_type=pl.CoreType.AIV)
        def vec(self, x: pl.Tensor[[16, 16], pl.FP32],
                y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            y2 = pl.store(pl.exp(pl.load(x, [0, 0], [16, 16])), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.InCore, core_type=pl.CoreType.AIC)
        def cube(self, a: pl.Tensor[[16, 16], pl.FP16], b: pl.Tensor[[16, 16], pl.FP16],
                 c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            ta = pl.move(pl.load(a, [0, 0], [16, 16]), target_memory=pl.MemorySpace.Left)
            tb = pl.move(pl.load(b, [0, 0], [16, 16]), target_memory=pl.MemorySpace.Right)
            c2 = pl.store(pl.matmul(ta, tb), [0, 0], c)
            return c

    after = assert_pass(passes.InferKernelCoreTypes(), Before, Expected)
    assert after.get("cube").core_type == ir.CoreType.AIC
    assert kernel_cpu.core_type(after, "vec") == ir.CoreType.AIV
    assert passes.verify_property(passes.IRProperty.KernelCoreTypesInferred, Before) != []
    assert passes.verify_property(passes.IRProperty.KernelCoreTypesInferred, after) == []
    # The stamp is printed and parsed back.
    assert ir.structural_equal(pl.parse_program(ir.python_print(after)), after)


def test_a_matrix_product_makes_an_aic_kernel_whatever_its_tiles_are_bound_to():
    """`pl.store(pl.matmul(...), ...)` binds the product to no Var, and `pl.matmul_acc` into a
    `pl.tile.full` accumulator keeps it in Vec: both were AIV kernels, so `pypto run` ran a GEMM on
    0 AIC workers (session 54 tester G #2)."""
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def nested(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                   c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c = pl.store(pl.matmul(pl.load(a, [0, 0], [16, 16]), pl.load(b, [0, 0], [16, 16])), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.InCore)
        def vec_acc(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                    c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            acc = pl.tile.full([16, 16], pl.FP32, 0.0)
            acc = pl.matmul_acc(acc, pl.load(a, [0, 0], [16, 16]), pl.load(b, [0, 0], [16, 16]))
            c = pl.store(acc, [0, 0], c)
            return c

    after = passes.InferKernelCoreTypes()(Before)
    assert after.get("nested").core_type == ir.CoreType.AIC
    assert after.get("vec_acc").core_type == ir.CoreType.AIC


def test_declared_aic_aiv_and_group_functions():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.AIC)
        def mm(self, x: pl.Tensor[[16, 16], pl.FP32],
               out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            out2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.AIV)
        def act(self, x: pl.Tensor[[16, 16], pl.FP32],
                out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            out2 = pl.store(pl.exp(pl.load(x, [0, 0], [16, 16])), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Group)
        def grp(self, x: pl.Tensor[[16, 16], pl.FP32],
                out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            o1 = self.mm(x, out)
            o2 = self.act(x, o1)
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.AIC, core_type=pl.CoreType.AIC)
        def mm(self, x: pl.Tensor[[16, 16], pl.FP32],
               out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            out2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.AIV, core_type=pl.CoreType.AIV)
        def act(self, x: pl.Tensor[[16, 16], pl.FP32],
                out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            out2 = pl.store(pl.exp(pl.load(x, [0, 0], [16, 16])), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Group, core_type=pl.CoreType.MIXED)
        def grp(self, x: pl.Tensor[[16, 16], pl.FP32],
                out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            o1 = self.mm(x, out)
            o2 = self.act(x, o1)
            return out

    assert_pass(passes.InferKernelCoreTypes(), Before, Expected)


def test_orchestration_is_not_stamped_and_unstamped_kernels_are_refused_by_readers():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            y2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32],
                 y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            y2 = self.k(x, y)
            return y

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore, core_type=pl.CoreType.AIV)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            y2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32],
                 y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            y2 = self.k(x, y)
            return y

    after = assert_pass(passes.InferKernelCoreTypes(), Before, Expected)
    assert after.get("main").core_type == ir.CoreType.Unknown
    with pytest.raises(InternalCompilerError, match="no stamped core type"):
        kernel_cpu.core_type(Before, "k")
    assert [p.name for p in passes.kernel_pipeline()] == ["InferKernelCoreTypes", "KernelParamSlots", "KernelGroupSync",
                                                          "KernelInPlaceCarries", "KernelShareTileMoves",
                                                          "KernelInPlaceMatmulLoads", "KernelLendLoopInits",
                                                          "ResolvePeerBufferBases", "StampCountedLoops"]
    assert passes.default_pipeline()[-len(passes.kernel_pipeline())].name == "InferKernelCoreTypes"
