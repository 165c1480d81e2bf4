"""Batched products (reference_ops.md §11) on operands that the matmul fuzzer found refused or
mistyped: batch dims broadcast as NumPy's do (§1.4: a dim of 1 against any, a missing dim taking
the other operand's, so a 2-D operand against [1, K, N] gives a rank-3 result), and rank-3/4
`pl.tensor.slice`s of kernel tensors (at offsets, with drop_dims) as operands; a rank-3 slice used
any other way is a located error."""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto.errors import PyptoError


def _run(src, *arrays):
    prog = pypto.compile(pl.parse_program(src, "k.py"))
    try:
        prog(*arrays, race_check=True)
    finally:
        prog.close()


def _f32(rng, shape):
    return rng.integers(-3, 4, shape).astype(np.float32)   # small integers: exact products


BROADCAST = '''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[2, 3, 4, 8], pl.FP32], b: pl.Tensor[[2, 1, 8, 5], pl.FP32],
          x: pl.Tensor[[4, 8], pl.FP32], c: pl.Tensor[[1, 8, 5], pl.FP32], at: pl.Tensor[[12, 8], pl.FP32],
          bt: pl.Tensor[[16, 5], pl.FP32], o: pl.Out[pl.Tensor[[2, 3, 4, 5], pl.FP32]],
          p: pl.Out[pl.Tensor[[1, 4, 5], pl.FP32]], q: pl.Out[pl.Tensor[[24, 5], pl.FP32]]
          ) -> pl.Tensor[[2, 3, 4, 5], pl.FP32]:
        o = pl.assemble(o, pl.batch_matmul(a, b), [0, 0, 0, 0])       # [2, 3] with [2, 1]
        p = pl.assemble(p, pl.batch_matmul(x, c), [0, 0, 0])          # 2-D with [1]: rank 3
        tc = pl.tile.reshape(pl.load(at, [0, 0], [12, 8]), [3, 1, 4, 8])
        tb = pl.tile.reshape(pl.load(bt, [0, 0], [16, 5]), [2, 8, 5])
        q = pl.store(pl.tile.reshape(pl.batch_matmul(tc, tb), [24, 5]), [0, 0], q)   # tiles: [3, 1] with [2]
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[2, 3, 4, 8], pl.FP32], b: pl.Tensor[[2, 1, 8, 5], pl.FP32],
             x: pl.Tensor[[4, 8], pl.FP32], c: pl.Tensor[[1, 8, 5], pl.FP32], at: pl.Tensor[[12, 8], pl.FP32],
             bt: pl.Tensor[[16, 5], pl.FP32], o: pl.Out[pl.Tensor[[2, 3, 4, 5], pl.FP32]],
             p: pl.Out[pl.Tensor[[1, 4, 5], pl.FP32]], q: pl.Out[pl.Tensor[[24, 5], pl.FP32]]
             ) -> pl.Tensor[[2, 3, 4, 5], pl.FP32]:
        o = self.k(a, b, x, c, at, bt, o, p, q)
        return o
'''


def test_batch_dims_broadcast_as_numpy():
    rng = np.random.default_rng(1)
    a, b, x, c = _f32(rng, (2, 3, 4, 8)), _f32(rng, (2, 1, 8, 5)), _f32(rng, (4, 8)), _f32(rng, (1, 8, 5))
    at, bt = _f32(rng, (12, 8)), _f32(rng, (16, 5))
    o, p, q = np.zeros((2, 3, 4, 5), np.float32), np.zeros((1, 4, 5), np.float32), np.zeros((24, 5), np.float32)
    _run(BROADCAST, a, b, x, c, at, bt, o, p, q)
    np.testing.assert_array_equal(o, a @ b)
    np.testing.assert_array_equal(p, x @ c)                                   # NumPy's [1, 4, 5]
    np.testing.assert_array_equal(q, (at.reshape(3, 1, 4, 8) @ bt.reshape(2, 8, 5)).reshape(24, 5))   # [3, 2]


SLICES = '''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[3, 6, 9], pl.FP32], b: pl.Tensor[[2, 4, 10, 7], pl.FP32],
          e: pl.Tensor[[2, 4, 5], pl.FP32], r: pl.Scalar[pl.INDEX],
          o: pl.Out[pl.Tensor[[3, 6, 8], pl.FP32]], p: pl.Out[pl.Tensor[[2, 4, 5], pl.FP32]]
          ) -> pl.Tensor[[3, 6, 8], pl.FP32]:
        ta = pl.tensor.slice(a, [2, 4, 8], [1, r, 1])                      # offsets, one of them run-time
        tb = pl.tensor.slice(b, [1, 2, 8, 5], [1, 2, 1, 2], drop_dims=[0])  # rank 4 -> 3
        o = pl.assemble(o, pl.batch_matmul(ta, tb), [1, 2, 3])
        tw = pl.tensor.slice(ta, [2, 4, 6], [0, 0, 2])                      # a slice of the slice
        tv = pl.tensor.slice(tb, [2, 6, 5], [0, 1, 0])
        p = pl.assemble(p, pl.matmul_acc(e, tw, tv), [0, 0, 0])
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[3, 6, 9], pl.FP32], b: pl.Tensor[[2, 4, 10, 7], pl.FP32],
             e: pl.Tensor[[2, 4, 5], pl.FP32], r: pl.Scalar[pl.INDEX],
             o: pl.Out[pl.Tensor[[3, 6, 8], pl.FP32]], p: pl.Out[pl.Tensor[[2, 4, 5], pl.FP32]]
             ) -> pl.Tensor[[3, 6, 8], pl.FP32]:
        o = self.k(a, b, e, r, o, p)
        return o
'''


def test_rank_3_and_4_slices_are_batched_operands():
    rng = np.random.default_rng(2)
    a, b, e = _f32(rng, (3, 6, 9)), _f32(rng, (2, 4, 10, 7)), _f32(rng, (2, 4, 5))
    o, p = np.full((3, 6, 8), 77, np.float32), np.zeros((2, 4, 5), np.float32)
    _run(SLICES, a, b, e, 2, o, p)
    ta = a[1:3, 2:6, 1:9]
    tb = b[1, 2:4, 1:9, 2:7]
    want = np.full((3, 6, 8), 77, np.float32)
    want[1:3, 2:6, 3:8] = ta @ tb
    np.testing.assert_array_equal(o, want)
    np.testing.assert_array_equal(p, e + ta[:, :, 2:8] @ tb[:, 1:7, :])


@pytest.mark.parametrize("stmt,message", [
    ("o = pl.assemble(o, pl.add(ta, ta), [0, 0, 0])",
     "pl.tensor.slice of rank 3 inside a kernel ('ta') can only be an operand of pl.batch_matmul"),
    ("o = pl.assemble(o, ta, [0, 0, 0])",
     "pl.tensor.slice of rank 3 inside a kernel ('ta') can only be an operand of pl.batch_matmul"),
    ("tv = pl.tensor.slice(a, [2, 4, 8], [0, 0, 0], valid_shape=[2, 3, 8])",
     "pl.tensor.slice of rank 3 with valid_shape= or pad_value= inside a kernel: kernel tiles are 1-D or 2-D"),
])
def test_a_rank_3_slice_computed_on_otherwise_is_located(stmt, message):
    src = f'''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[3, 6, 9], pl.FP32], o: pl.Out[pl.Tensor[[2, 4, 8], pl.FP32]]) -> pl.Tensor[[2, 4, 8], pl.FP32]:
        ta = pl.tensor.slice(a, [2, 4, 8], [1, 0, 1])
        {stmt}
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[3, 6, 9], pl.FP32], o: pl.Out[pl.Tensor[[2, 4, 8], pl.FP32]]) -> pl.Tensor[[2, 4, 8], pl.FP32]:
        o = self.k(a, o)
        return o
'''
    with pytest.raises(PyptoError) as ei:
        pypto.compile(pl.parse_program(src, "k.py"))
    e = ei.value
    assert message in e.message, e.message
    line = next(n for n, t in enumerate(src.splitlines(), 1) if t.strip() == stmt)
    assert (e.file, e.line) == ("k.py", line), str(e)
    assert "drop_dims" in e.help


PLANES = '''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[3, 6, 9], pl.FP32], r: pl.Scalar[pl.INDEX],
          o: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        ta = pl.tensor.slice(a, [2, 4, 8], [1, r, 1])
        tb = pl.tensor.slice(ta, [1, 4, 8], [1, 0, 0], drop_dims=[0])   # a plane of the block: one 2-D load
        o = pl.assemble(o, pl.add(tb, 1.0), [0, 0])
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[3, 6, 9], pl.FP32], r: pl.Scalar[pl.INDEX],
             o: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        o = self.k(a, r, o)
        return o
'''


def test_a_2d_plane_of_a_rank_3_slice_loads_at_the_composed_offsets():
    a = np.arange(162, dtype=np.float32).reshape(3, 6, 9)
    o = np.zeros((4, 8), np.float32)
    _run(PLANES, a, 2, o)
    np.testing.assert_array_equal(o, a[2, 2:6, 1:9] + 1.0)
    src = PLANES.replace("[1, 0, 0], drop_dims=[0])", "[1, 0, 0], valid_shape=[1, 2, 8], drop_dims=[0])")
    with pytest.raises(PyptoError, match="pl.tensor.slice of a rank-3 slice inside a kernel takes no valid_shape="):
        pypto.compile(pl.parse_program(src, "k.py"))
