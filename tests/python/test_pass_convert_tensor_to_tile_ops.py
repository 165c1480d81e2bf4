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


def _nested_carry_program(depth, init):
    """A kernel whose accumulator (`init`: a tile, or the tensor parameter `a`) is carried through
    `depth` nested pl.range(1) loops around a two-step accumulation: the result is 3 * a."""
    lines = ["import pypto.language as pl", "", "", "@pl.program", "class Nest:",
             "    @pl.function(type=pl.FunctionType.InCore)",
             "    def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]])"
             " -> pl.Tensor[[16, 16], pl.FP32]:",
             "        acc = " + init]
    ind = "        "
    for k in range(depth):
        lines.append(ind + "for _n%d in pl.range(1):" % k)
        ind += "    "
    tile = init.startswith("pl.load")
    lines += [ind + "for s in pl.range(2):", ind + "    acc = pl.add(acc, %s)" % (init if tile else "a")]
    store = "pl.store(acc, [0, 0], c)" if tile else "pl.assemble(c, acc, [0, 0])"
    lines += ["        c = " + store, "        return c", "",
              "    @pl.function(type=pl.FunctionType.Orchestration)",
              "    def main(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]])"
              " -> pl.Tensor[[16, 16], pl.FP32]:",
              "        c = self.k(a, c)", "        return c", ""]
    return "\n".join(lines)


TILE_INIT, TENSOR_INIT = "pl.load(a, [0, 0], [16, 16])", "a"


def test_deeply_nested_carries_convert_in_time_proportional_to_the_nest():
    # Every loop was converted twice whenever its carry was already a tile (the yield of a tile
    # "asked" to make it one), so a nest of depth d took 2^d conversions: 40 nested loops (fuzz
    # family deep_nesting, seed 5353 mutant 0) never finished. A tensor carry that must become a
    # tile still needs a second conversion of its loop, d^2 / 2 in all. Each program converts in a
    # child process; the old code would still be converting when the timeout ends it.
    import subprocess
    import sys
    for init in (TILE_INIT, TENSOR_INIT):
        code = ("import pypto.language as pl\nfrom pypto import codegen\n"
                "codegen.generate_orchestration(pl.parse_program(%r, 'nest.py'), 'main')\n"
                % _nested_carry_program(40, init))
        subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_nested_carries_run_against_numpy():
    import numpy as np
    import pypto
    a = np.random.default_rng(5).standard_normal((16, 16)).astype(np.float32)
    for init in (TILE_INIT, TENSOR_INIT):
        prog = pypto.compile(pl.parse_program(_nested_carry_program(12, init), "nest.py"))
        c = np.zeros_like(a)
        prog(a, c)
        np.testing.assert_allclose(c, 3 * a, rtol=1e-6)
