"""An accumulator stored whole at the end of its kernel lives in the stored box (pass
KernelAccumulateInStore stamps it; pypto_kernel::accumulate_in_place decides at run time; the
store then copies nothing): the pass's decisions in the generated code, results bit-for-bit
equal to the copy path, and the run-time fallback when an input overlaps the box.

The copy path is the same kernel with one more statement after the store (a second store of
the B tile to `d`), which the pass refuses: both run the same matmul calls on the same elements
in the same order, so the check is exact.
"""
import os

import numpy as np
import pytest

import pypto
import pypto.language as pl

# d is InOut: only some variants write it (`extra`), and a pl.Out no store reaches is refused.
_PROGRAM = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[{M}, {K}], pl.FP32], b: pl.Tensor[[{K}, {N}], pl.FP32],
          c: pl.Out[pl.Tensor[[{TM}, {N}], pl.FP32]], d: pl.InOut[pl.Tensor[[{TK}, {N}], pl.FP32]],
          row: pl.Scalar[pl.INDEX]) -> pl.Tensor[[{TM}, {N}], pl.FP32]:
        acc = pl.tile.full([{TM}, {N}], pl.FP32, 0.0)
        for kk in pl.range({K} // {TK}):
            ta = pl.move(pl.load(a, [row, kk * {TK}], [{TM}, {TK}]), target_memory=pl.MemorySpace.Left)
            tb = pl.move(pl.load(b, [kk * {TK}, 0], [{TK}, {N}]), target_memory=pl.MemorySpace.Right)
            acc = pl.matmul_acc(acc, ta, tb)
        c = pl.store(acc, {OFF}, c)
        {extra}
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[{M}, {K}], pl.FP32], b: pl.Tensor[[{K}, {N}], pl.FP32],
             c: pl.Out[pl.Tensor[[{M}, {N}], pl.FP32]], d: pl.Out[pl.Tensor[[{TK}, {N}], pl.FP32]]
             ) -> pl.Tensor[[{M}, {N}], pl.FP32]:
        for i in pl.range({M} // {TM}):
            ci = pl.tensor.slice(c, [{TM}, {N}], [i * {TM}, 0])
            ci = self.k(a, b, ci, d, i * {TM})
        return c
"""

_SHAPES = dict(M=96, K=48, N=40, TM=32, TK=16)


def _compile(extra="", off="[0, 0]", **kw):
    shapes = dict(_SHAPES, **kw)
    return pypto.compile(pl.parse_program(_PROGRAM.format(extra=extra, OFF=off, **shapes)))


def _run(prog, seed=0, **kw):
    s = dict(_SHAPES, **kw)
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((s["M"], s["K"])).astype(np.float32)
    b = rng.standard_normal((s["K"], s["N"])).astype(np.float32)
    c = np.full((s["M"], s["N"]), np.nan, np.float32)
    prog(a, b, c, np.zeros((s["TK"], s["N"]), np.float32))
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-4, atol=1e-4)
    return c


def test_accumulator_lives_in_the_box_bit_for_bit():
    direct = _compile()
    copy = _compile(extra="d = pl.store(pl.load(b, [0, 0], [16, 40]), [0, 0], d)")
    src = direct.files["kernels/k.cpp"]
    assert "float* const acc = pypto_kernel::accumulate_in_place(ctx, acc_own, 2," in src
    assert "accumulate_in_place" not in copy.files["kernels/k.cpp"]   # a statement after the store
    for seed in range(3):
        np.testing.assert_array_equal(_run(direct, seed), _run(copy, seed))


def test_ragged_shapes_and_the_tiled_gemm_example(monkeypatch):
    # rows not a multiple of the register block, columns not a multiple of 16
    prog = _compile(M=42, K=24, N=19, TM=21, TK=8)
    assert "accumulate_in_place" in prog.files["kernels/k.cpp"]
    _run(prog, M=42, K=24, N=19, TM=21, TK=8)
    monkeypatch.syspath_prepend(os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
    import tiled_matmul as tm
    assert "accumulate_in_place" in pypto.compile(tm.TiledMatmul).files["kernels/mm_block.cpp"]
    tm.run(aic_workers=2, aiv_workers=0)
    tm.run()


@pytest.mark.parametrize("extra, off", [
    ("d = pl.store(pl.load(c, [0, 0], [16, 40]), [0, 0], d)", "[0, 0]"),   # c read again
    ("", "[0, row - row]"),                                                   # an offset computed in the kernel
])
def test_not_stamped(extra, off):
    prog = _compile(extra=extra, off=off)
    assert "accumulate_in_place" not in prog.files["kernels/k.cpp"]


_ALIAS = """
import pypto.language as pl

@pl.program
class Alias:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 32], pl.FP32], b: pl.Tensor[[32, 32], pl.FP32],
          c: pl.Out[pl.Tensor[[32, 32], pl.FP32]], row: pl.Scalar[pl.INDEX]) -> pl.Tensor[[32, 32], pl.FP32]:
        acc = pl.tile.full([32, 32], pl.FP32, 0.0)
        for kk in pl.range(2):
            ta = pl.move(pl.load(a, [row, kk * 16], [32, 16]), target_memory=pl.MemorySpace.Left)
            tb = pl.move(pl.load(b, [kk * 16, 0], [16, 32]), target_memory=pl.MemorySpace.Right)
            acc = pl.matmul_acc(acc, ta, tb)
        c = pl.store(acc, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.InOut[pl.Tensor[[64, 32], pl.FP32]], b: pl.Tensor[[32, 32], pl.FP32]
             ) -> pl.Tensor[[64, 32], pl.FP32]:
        for i in pl.range(2):
            xi = pl.tensor.slice(x, [32, 32], [i * 32, 0])
            xi = self.k(x, b, xi, i * 32)
        return x
"""


def test_an_input_overlapping_the_box_keeps_the_buffer():
    # x is both the A operand and the output: writing the box while the kernel still reads
    # x's rows (the second k step) would change them; accumulate_in_place sees the overlap.
    prog = pypto.compile(pl.parse_program(_ALIAS))
    assert "accumulate_in_place" in prog.files["kernels/k.cpp"]
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 32)).astype(np.float32)
    b = rng.standard_normal((32, 32)).astype(np.float32)
    want = x.astype(np.float64) @ b.astype(np.float64)
    prog(x, b)
    np.testing.assert_allclose(x, want, rtol=1e-4, atol=1e-4)


def test_race_checker_sees_the_store():
    prog = _compile()
    s = _SHAPES
    a = np.ones((s["M"], s["K"]), np.float32)
    b = np.ones((s["K"], s["N"]), np.float32)
    c = np.zeros((s["M"], s["N"]), np.float32)
    prog(a, b, c, np.zeros((s["TK"], s["N"]), np.float32), race_check=True)   # no race: disjoint boxes
    assert (c == s["K"]).all()


_SPMD = """
import pypto.language as pl

@pl.program
class Spmd:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 128], pl.FP32], b: pl.Tensor[[128, 64], pl.FP32],
          c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        acc = pl.tile.full([64, 64], pl.FP32, 0.0)
        for kk in pl.range(8):
            ta = pl.move(pl.load(a, [0, kk * 16], [64, 16]), target_memory=pl.MemorySpace.Left)
            tb = pl.move(pl.load(b, [kk * 16, 0], [16, 64]), target_memory=pl.MemorySpace.Right)
            acc = pl.matmul_acc(acc, ta, tb)
        c = pl.store(acc, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 128], pl.FP32], b: pl.Tensor[[128, 64], pl.FP32],
             c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        c, t = pl.spmd_submit(self.k, a, b, c, core_num=4, deps=[])
        return c
"""


def test_blocks_of_one_task_storing_one_box_keep_their_buffers():
    # Every block computes the same product into the same box at once: accumulating in the box
    # would mix the blocks' partial sums (accumulate_in_place refuses tasks of several blocks).
    prog = pypto.compile(pl.parse_program(_SPMD))
    assert "accumulate_in_place" in prog.files["kernels/k.cpp"]
    rng = np.random.default_rng(2)
    a = rng.standard_normal((64, 128)).astype(np.float32)
    b = rng.standard_normal((128, 64)).astype(np.float32)
    want = a.astype(np.float64) @ b.astype(np.float64)
    for _ in range(30):
        c = np.full((64, 64), np.nan, np.float32)
        prog(a, b, c, aic_workers=4)
        np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-4)


def test_the_pass_stamps_the_full_and_the_stamp_round_trips():
    from pypto import ir
    from pypto.ir import passes
    from pass_test_util import assert_pass

    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
              r: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
            acc0 = pl.tile.full([16, 16], pl.FP32, 0.0)
            for i, (acc,) in pl.range(0, 2, 1, init_values=(acc0,)):
                t = pl.load(a, [0, 0], [16, 16])
                nxt = pl.matmul_acc(acc, t, t)
                acc_out = pl.yield_(nxt)
            c2 = pl.store(acc_out, [r, 0], c)
            return c2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
              r: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
            acc0 = pl.tile.full([16, 16], pl.FP32, 0.0, accumulates_in=[c, r, 0])
            for i, (acc,) in pl.range(0, 2, 1, init_values=(acc0,)):
                t = pl.load(a, [0, 0], [16, 16])
                nxt = pl.matmul_acc(acc, t, t)
                acc_out = pl.yield_(nxt)
            c2 = pl.store(acc_out, [r, 0], c)
            return c2

    after = assert_pass(passes.KernelAccumulateInStore(), Before, Expected)
    assert "accumulates_in=[c, r, 0]" in ir.python_print(after)
    assert ir.structural_equal(passes.KernelAccumulateInStore()(after), after)   # idempotent
    prop = passes.IRProperty.AccumulatorsInStoreStamped
    assert passes.verify_property(prop, Before) != [] and passes.verify_property(prop, after) == []
