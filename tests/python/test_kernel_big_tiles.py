"""Tiles too big for the kernel's stack (more than 64 KiB at 8 bytes an element) live on the heap
(kernel_cpu_codegen.cpp): every dtype, BOOL included, compiles and round-trips its elements.

Found by `make fuzz-programs` (seed 2701): a [128, 128] BOOL tile was a std::vector<bool>, whose
data() does not exist, so the generated kernel did not compile.
"""
import numpy as np
import pytest

import pypto
import pypto.language as pl

_PROGRAM = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[{R}, {C}], pl.{DT}], y: pl.Out[pl.Tensor[[{R}, {C}], pl.{DT}]]
          ) -> pl.Tensor[[{R}, {C}], pl.{DT}]:
        t = pl.load(x, [0, 0], [{R}, {C}])
        y = pl.store(t, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[{R}, {C}], pl.{DT}], y: pl.Out[pl.Tensor[[{R}, {C}], pl.{DT}]]
             ) -> pl.Tensor[[{R}, {C}], pl.{DT}]:
        y = self.k(x, y)
        return y
"""

_DTYPES = {"BOOL": np.bool_, "INT8": np.int8, "INT32": np.int32, "FP16": np.float16, "FP32": np.float32,
           "INT64": np.int64}


@pytest.mark.parametrize("dt", sorted(_DTYPES))
def test_a_heap_tile_of_every_dtype_round_trips(dt):
    rows, cols = 128, 128  # 16384 elements: 128 KiB at 8 bytes each, past the stack's 64 KiB
    prog = pypto.compile(pl.parse_program(_PROGRAM.format(R=rows, C=cols, DT=dt)))
    src = prog.files["kernels/k.cpp"]
    assert "_storage.get()" in src, "the tile should be on the heap"
    rng = np.random.default_rng(7)
    x = (rng.integers(0, 2, (rows, cols)) if dt == "BOOL" else rng.integers(-100, 100, (rows, cols))).astype(_DTYPES[dt])
    y = np.zeros_like(x)
    if dt == "BOOL":
        y[:] = ~x  # every element must be overwritten
    prog(x, y)
    np.testing.assert_array_equal(y, x)


def test_a_small_bool_tile_stays_on_the_stack():
    prog = pypto.compile(pl.parse_program(_PROGRAM.format(R=16, C=16, DT="BOOL")))
    assert "_storage" not in prog.files["kernels/k.cpp"]
    x = np.eye(16, dtype=np.bool_)
    y = np.ones((16, 16), dtype=np.bool_)
    prog(x, y)
    np.testing.assert_array_equal(y, x)
