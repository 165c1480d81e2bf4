"""A kernel tile's size: a run-time shape is checked before the tile is allocated (a negative
extent, or more than 4 GiB, fails the run naming the tile: before, a negative extent threw
std::bad_array_new_length, a huge one std::bad_alloc or an allocation of many GiB, and an extent
product that wrapped gave a buffer smaller than the loops over it); a constant shape over 4 GiB is a
located compile error (before, it compiled and allocated it)."""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto.errors import PyptoError
from pypto.runtime.loader import RunError

SRC = '''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[8, 16], pl.FP32], n: pl.Scalar[pl.INDEX], m: pl.Scalar[pl.INDEX],
          out: pl.Out[pl.Tensor[[8, 1], pl.FP32]]) -> pl.Tensor[[8, 1], pl.FP32]:
        t = pl.tile.full([n, m], pl.FP32, 2.0)
        u = pl.add(pl.load(x, [0, 0], [n, 16]), pl.row_max(t))
        out = pl.store(pl.row_max(u), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 16], pl.FP32], n: pl.Scalar[pl.INDEX], m: pl.Scalar[pl.INDEX],
             out: pl.Out[pl.Tensor[[8, 1], pl.FP32]]) -> pl.Tensor[[8, 1], pl.FP32]:
        out = self.k(x, n, m, out)
        return out
'''


@pytest.fixture(scope="module")
def prog():
    p = pypto.compile(pl.parse_program(SRC, "k.py"))
    yield p
    p.close()


def test_a_run_time_extent_of_zero_is_an_empty_tile(prog):
    out = np.full((8, 1), -1.0, np.float32)
    prog(np.ones((8, 16), np.float32), 0, 5, out)      # no row: nothing stored
    np.testing.assert_array_equal(out, np.full((8, 1), -1.0, np.float32))
    prog(np.ones((8, 16), np.float32), 2, 0, out)      # t has no column: its row max is the identity, -inf
    np.testing.assert_array_equal(out[:, 0], [-np.inf] * 2 + [-1.0] * 6)


def test_run_time_shapes_in_range_run(prog):
    x = np.arange(128, dtype=np.float32).reshape(8, 16)
    out = np.full((8, 1), -1.0, np.float32)
    prog(x, 3, 5, out)
    want = np.full((8, 1), -1.0, np.float32)
    want[:3, 0] = x[:3].max(axis=1) + 2.0
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("n,m,message", [
    (-1, 5, "tile 't': extent -1 of axis 0 at run time is negative"),
    (3, -(2 ** 63), "tile 't': extent -9223372036854775808 of axis 1 at run time is negative"),
    (2 ** 32, 2 ** 32, "tile 't': run-time shape [4294967296, 4294967296] holds more than 4294967296 bytes"),  # wraps to 0
    (2, 2 ** 31, "tile 't': run-time shape [2, 2147483648] holds more than 4294967296 bytes"),
])
def test_a_run_time_shape_out_of_range_fails_the_run_naming_the_tile(prog, n, m, message):
    out = np.zeros((8, 1), np.float32)
    with pytest.raises(RunError) as ei:
        prog(np.zeros((8, 16), np.float32), n, m, out)
    assert message in str(ei.value), str(ei.value)
    assert not out.any()
    prog(np.zeros((8, 16), np.float32), 1, 1, out)   # still usable


def test_a_constant_shape_over_4_gib_is_a_located_error():
    body = ("t = pl.tile.full([70000, 70000], pl.FP32, 2.0)\n"
            "        u = pl.add(pl.load(x, [0, 0], [8, 16]), pl.tile.slice(t, [8, 1], [0, 0]))")
    src = SRC.replace("t = pl.tile.full([n, m], pl.FP32, 2.0)\n        u = pl.add(pl.load(x, [0, 0], [n, 16]), "
                      "pl.row_max(t))", body)
    assert "70000" in src
    with pytest.raises(PyptoError) as ei:
        pypto.compile(pl.parse_program(src, "k.py"))
    e = ei.value
    assert "a tile of shape [70000, 70000] and dtype FP32 holds more than 4294967296 bytes" in e.message, e.message
    assert (e.file, e.line) == ("k.py", 10), str(e)


@pytest.mark.parametrize("dtype,nbytes", [("FP16", 2), ("BF16", 2), ("INT8", 1), ("INT32", 4), ("INT64", 8)])
def test_the_run_time_bound_counts_the_dtype_bytes_as_the_compile_time_one_does(dtype, nbytes):
    # FP16 / BF16 tiles are float arrays on the CPU: the bound counted those 4 bytes (a constant FP16
    # shape passed up to 4 GiB of FP16, a run-time one only up to 2 GiB of FP16)
    import re
    from pypto import codegen
    from pypto._core import kernel_cpu
    src = SRC.replace("t = pl.tile.full([n, m], pl.FP32, 2.0)",
                      f"s = pl.tile.full([n, m], pl.{dtype}, 2)\n        t = pl.cast(s, pl.FP32)")
    code = kernel_cpu.generate(codegen.run_pipeline(pl.parse_program(src, "k.py")), "k")
    calls = re.findall(r'tile_elements\(ctx, \w+, 2, (\d+), "s"\)', code)
    assert calls == [str(nbytes)], code
