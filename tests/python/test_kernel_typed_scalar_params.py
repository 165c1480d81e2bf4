"""Kernel scalar parameters and run-time scalar operands hold values of their dtype.

- A pl.Scalar[pl.FP16] / pl.Scalar[pl.BF16] parameter is its FP32 argument rounded to the dtype
  (it kept the FP32 value: 0.1 stayed 0.1, 70000.0 stayed 70000 instead of FP16's inf).
- pl.tile.ci's start must have the result's dtype (reference_ops.md §10; a literal is re-typed):
  an INT64 start of 2^33 + 5 counted from 5, silently."""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto.errors import PyptoError


@pl.program
class HalfScalars:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[1, 2], pl.FP32], s: pl.Scalar[pl.FP16], b: pl.Scalar[pl.BF16],
          o: pl.Out[pl.Tensor[[1, 2], pl.FP32]]) -> pl.Tensor[[1, 2], pl.FP32]:
        t = pl.load(x, [0, 0], [1, 2])
        o = pl.store(pl.tile.slice(pl.adds(t, s), [1, 1], [0, 0]), [0, 0], o)
        o = pl.store(pl.tile.slice(pl.adds(t, b), [1, 1], [0, 1]), [0, 1], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[1, 2], pl.FP32], s: pl.Scalar[pl.FP16], b: pl.Scalar[pl.BF16],
             o: pl.Out[pl.Tensor[[1, 2], pl.FP32]]) -> pl.Tensor[[1, 2], pl.FP32]:
        o = self.k(x, s, b, o)
        return o


def _bf16(v):
    """Round-to-nearest-even of an FP32 to BF16, as an FP32."""
    u = int(np.array([v], np.float32).view(np.uint32)[0])
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return float(np.array([u], np.uint32).view(np.float32)[0])


@pytest.fixture(scope="module")
def halves():
    p = pypto.compile(HalfScalars)
    yield p
    p.close()


@pytest.mark.parametrize("s, b", [(0.1, 0.1), (70000.0, 3.0e38), (-65519.0, 1.0 / 3.0)])
def test_fp16_and_bf16_parameters_are_rounded_to_their_dtype(halves, s, b):
    o = np.zeros((1, 2), np.float32)
    halves(np.zeros((1, 2), np.float32), s, b, o)
    with np.errstate(over="ignore"):
        want = [float(np.float16(s)), _bf16(b)]
    assert o[0].tolist() == want, (o, want)


def test_a_ci_start_of_another_dtype_is_refused_at_the_call():
    src = '''import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, s: pl.Scalar[pl.INT64], o: pl.Out[pl.Tensor[[1, 8], pl.INT32]]) -> pl.Tensor[[1, 8], pl.INT32]:
        o = pl.store(pl.tile.ci(s, [1, 8], dtype=pl.INT32), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, s: pl.Scalar[pl.INT64], o: pl.Out[pl.Tensor[[1, 8], pl.INT32]]) -> pl.Tensor[[1, 8], pl.INT32]:
        o = self.k(s, o)
        return o
'''
    with pytest.raises(PyptoError, match="tile.ci: start is INT64, the result INT32: they must be the same dtype") as ei:
        pl.parse_program(src, "c.py")
    assert ei.value.line == 8 and "pl.cast(start, pl.INT32)" in ei.value.help
