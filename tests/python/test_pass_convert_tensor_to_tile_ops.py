"""ConvertTensorToTileOps: in a kernel, tensor-level ops become tile ops — a compute op on a
global tensor loads it whole, tensor.slice of a global is a tile.load, tensor.create a
tile.full, tensor.assemble into a tile a tile.assemble and into a global a tile.store;
orchestration functions are left alone (DSL Before / Expected)."""

import pypto.language as pl
from pypto.ir import passes

from pass_test_util import assert_pass


def test_compute_op_on_global_tensors_loads_them_whole():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.tensor.assemble(c, pl.tensor.add(a, b), [0, 0])
            return c2

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                 c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = self.k(a, b, c)
            return c2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(b, [0, 0], [16, 16])), [0, 0], c)
            return c2

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                 c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = self.k(a, b, c)
            return c2

    assert_pass(passes.ConvertTensorToTileOps(), Before, Expected)


def test_slice_create_and_assemble_become_load_full_assemble_store():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            s = pl.tensor.slice(a, [8, 16], [8, 0])
            z = pl.tensor.create([16, 16], dtype=pl.FP32)
            t = pl.tensor.assemble(z, pl.tensor.mul(s, s), [0, 0])
            o2 = pl.tensor.assemble(o, t, [0, 0])
            return o2

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32],
                 o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            r = self.k(a, o)
            return r

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            s: pl.Tile[[8, 16], pl.FP32] = pl.load(a, [8, 0], [8, 16])
            z: pl.Tile[[16, 16], pl.FP32] = pl.tile.full([16, 16], pl.FP32, 0.0)
            t: pl.Tile[[16, 16], pl.FP32] = pl.assemble(z, pl.mul(s, s), [0, 0])
            o2 = pl.store(t, [0, 0], o)
            return o2

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32],
                 o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            r = self.k(a, o)
            return r

    assert_pass(passes.ConvertTensorToTileOps(), Before, Expected)


def test_tile_only_kernel_is_a_fixed_point():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            o2 = pl.store(pl.exp(pl.load(a, [0, 0], [16, 16])), [0, 0], o)
            return o2

    assert_pass(passes.ConvertTensorToTileOps(), Before, Before)
