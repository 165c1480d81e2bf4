"""Mixed-dtype promotion in tile add/sub/mul/div (spec reference_ops.md §1.3) and the reference's
rule that a cast to the same dtype is an error (§5). NumPy-checked end to end (the kernel
computes in the promoted dtype, FP16 rounded after each op); the orchestration C++ is the golden
case tests/golden/tile_mixed_dtype."""
import os

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto.errors import PyptoError

from codegen_test_util import GOLDEN_DIR, load_single_program


def _f16(x):
    return np.asarray(x, np.float32).astype(np.float16).astype(np.float32)


def test_mixed_operands_are_promoted_end_to_end():
    rng = np.random.default_rng(11)
    a = rng.integers(1, 9, (16, 16)).astype(np.int32)
    b = rng.standard_normal((16, 16)).astype(np.float16)
    w = rng.standard_normal((16, 16)).astype(np.float32)
    c = np.zeros((16, 16), np.float16)
    d = np.zeros((16, 16), np.float32)
    prog = pypto.compile(load_single_program(os.path.join(GOLDEN_DIR, "tile_mixed_dtype", "program.py")))
    try:
        prog(a, b, w, c, d)
    finally:
        prog.close()
    bf = b.astype(np.float32)
    np.testing.assert_array_equal(c.astype(np.float32), _f16(_f16(a) + bf))     # INT32 + FP16 -> FP16
    q = (bf * w) / a.astype(np.float32)                                          # FP32 throughout
    np.testing.assert_allclose(d, q - bf, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("x,y,want", [
    ("INT32", "FP16", "FP16"), ("FP16", "INT32", "FP16"), ("FP16", "FP32", "FP32"), ("INT8", "INT32", "INT32"),
    ("UINT32", "INT32", "INT32"), ("INT32", "UINT32", "INT32"), ("FP16", "BF16", "FP16"), ("BF16", "FP16", "BF16"),
    ("UINT8", "INT16", "INT16"),
])
def test_promotion_rule(x, y, want):
    src = f'''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[4, 8], pl.{x}], b: pl.Tensor[[4, 8], pl.{y}],
          c: pl.Out[pl.Tensor[[4, 8], pl.{want}]]) -> pl.Tensor[[4, 8], pl.{want}]:
        c = pl.store(pl.mul(pl.load(a, [0, 0], [4, 8]), pl.load(b, [0, 0], [4, 8])), [0, 0], c)
        return c
'''
    pl.parse_program(src)   # the store into a pl.{want} tensor checks the product's dtype
    other = "FP32" if want != "FP32" else "INT32"
    with pytest.raises(PyptoError, match="dtype"):
        pl.parse_program(src.replace(f"pl.Out[pl.Tensor[[4, 8], pl.{want}]]", f"pl.Out[pl.Tensor[[4, 8], pl.{other}]]"))


def test_integer_promotion_end_to_end():
    src = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[4, 8], pl.INT8], b: pl.Tensor[[4, 8], pl.INT32],
          c: pl.Out[pl.Tensor[[4, 8], pl.INT32]]) -> pl.Tensor[[4, 8], pl.INT32]:
        c = pl.store(pl.sub(pl.load(a, [0, 0], [4, 8]), pl.load(b, [0, 0], [4, 8])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4, 8], pl.INT8], b: pl.Tensor[[4, 8], pl.INT32],
             c: pl.Out[pl.Tensor[[4, 8], pl.INT32]]) -> pl.Tensor[[4, 8], pl.INT32]:
        c = self.k(a, b, c)
        return c
'''
    a = np.arange(-16, 16, dtype=np.int8).reshape(4, 8)
    b = np.full((4, 8), 1000, np.int32)
    c = np.zeros((4, 8), np.int32)
    prog = pypto.compile(pl.parse_program(src))
    try:
        prog(a, b, c)
    finally:
        prog.close()
    np.testing.assert_array_equal(c, a.astype(np.int32) - 1000)   # no INT8 wrap-around


CAST_SRC = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[4, 8], pl.FP32], c: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        t = pl.load(a, [0, 0], [4, 8])
        u = pl.cast(t, pl.FP32)
        c = pl.store(u, [0, 0], c)
        return c
'''


def test_cast_to_the_same_dtype_is_a_located_error():
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(CAST_SRC, "cast.py")
    e = ei.value
    assert "tile.cast: the tile is already FP32; casting to the same dtype is an error" in e.message, e.message
    assert (e.file, e.line) == ("cast.py", CAST_SRC.splitlines().index("        u = pl.cast(t, pl.FP32)") + 1)
    assert "remove the pl.cast" in e.help


def test_max_keeps_requiring_equal_dtypes():
    src = CAST_SRC.replace("u = pl.cast(t, pl.FP32)", "u = pl.maximum(t, pl.cast(t, pl.FP16))")
    with pytest.raises(PyptoError, match="tile.maximum: dtype mismatch"):
        pl.parse_program(src, "cast.py")
