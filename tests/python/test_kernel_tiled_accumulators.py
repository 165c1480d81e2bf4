"""Kernel accumulators carried by a k loop and stored whole into a slice of the output (the tiled
GEMM's shape): results against NumPy for ragged shapes, an input that is also the output, blocks
of one SPMD task storing one box, and under the race checker.

The accumulator stays in the kernel's own buffer and the final store copies it into the box.
Computing it in the box itself (pass KernelAccumulateInStore, removed) saved that copy, 3 % of a
task alone, but each k step then read and wrote the box while tasks on the other cores wrote the
boxes next to it in the same array: the tiled-GEMM example ran up to 1.5x slower
(docs/kernels.md, "Values").
"""
import os

import numpy as np
import pytest

import pypto
import pypto.language as pl

_PROGRAM = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[{M}, {K}], pl.FP32], b: pl.Tensor[[{K}, {N}], pl.FP32],
          c: pl.Out[pl.Tensor[[{TM}, {N}], pl.FP32]], row: pl.Scalar[pl.INDEX]) -> pl.Tensor[[{TM}, {N}], pl.FP32]:
        acc = pl.tile.full([{TM}, {N}], pl.FP32, 0.0)
        for kk in pl.range({K} // {TK}):
            ta = pl.move(pl.load(a, [row, kk * {TK}], [{TM}, {TK}]), target_memory=pl.MemorySpace.Left)
            tb = pl.move(pl.load(b, [kk * {TK}, 0], [{TK}, {N}]), target_memory=pl.MemorySpace.Right)
            acc = pl.matmul_acc(acc, ta, tb)
        c = pl.store(acc, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[{M}, {K}], pl.FP32], b: pl.Tensor[[{K}, {N}], pl.FP32],
             c: pl.Out[pl.Tensor[[{M}, {N}], pl.FP32]]) -> pl.Tensor[[{M}, {N}], pl.FP32]:
        for i in pl.range({M} // {TM}):
            ci = pl.tensor.slice(c, [{TM}, {N}], [i * {TM}, 0])
            ci = self.k(a, b, ci, i * {TM})
        return c
"""

_SHAPES = dict(M=96, K=48, N=40, TM=32, TK=16)


def _compile(**kw):
    return pypto.compile(pl.parse_program(_PROGRAM.format(**dict(_SHAPES, **kw))))


def _run(prog, seed=0, **kw):
    s = dict(_SHAPES, **kw)
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((s["M"], s["K"])).astype(np.float32)
    b = rng.standard_normal((s["K"], s["N"])).astype(np.float32)
    c = np.full((s["M"], s["N"]), np.nan, np.float32)
    prog(a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-4, atol=1e-4)
    return c


def test_ragged_shapes_and_the_tiled_gemm_example(monkeypatch):
    for seed in range(2):
        _run(_compile(), seed)
    # rows not a multiple of the register block, columns not a multiple of 16
    _run(_compile(M=42, K=24, N=19, TM=21, TK=8), M=42, K=24, N=19, TM=21, TK=8)
    monkeypatch.syspath_prepend(os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
    import tiled_matmul as tm
    tm.run(aic_workers=2, aiv_workers=0)
    tm.run()


def test_the_accumulator_keeps_its_own_buffer():
    src = _compile().files["kernels/k.cpp"]
    assert "alignas(64) float acc[" in src and "accumulate_in_place" not in src


def test_the_removed_stamp_is_refused_with_its_location():
    text = _PROGRAM.format(**_SHAPES).replace(
        "pl.tile.full([32, 40], pl.FP32, 0.0)", "pl.tile.full([32, 40], pl.FP32, 0.0, accumulates_in=[c, 0, 0])")
    assert "accumulates_in" in text
    with pytest.raises(pypto.PyptoError, match="has no parameter 'accumulates_in'") as e:
        pl.parse_program(text)
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "accumulates_in" in t)
    assert "<string>:%d:" % line in str(e.value)


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


def test_an_input_that_is_also_the_output():
    # x is both the A operand and the output: the box must not be written while the kernel
    # still reads x's rows (the second k step).
    prog = pypto.compile(pl.parse_program(_ALIAS))
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
    prog(a, b, c, race_check=True)   # no race: disjoint boxes
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


def test_blocks_of_one_task_storing_one_box():
    # Every block computes the same product and stores it into the same box at once.
    prog = pypto.compile(pl.parse_program(_SPMD))
    rng = np.random.default_rng(2)
    a = rng.standard_normal((64, 128)).astype(np.float32)
    b = rng.standard_normal((128, 64)).astype(np.float32)
    want = a.astype(np.float64) @ b.astype(np.float64)
    for _ in range(30):
        c = np.full((64, 64), np.nan, np.float32)
        prog(a, b, c, aic_workers=4)
        np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-4)
