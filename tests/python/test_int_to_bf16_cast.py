"""An integer converts to BF16 with one rounding, to the nearest BF16 (ties to even), in a tile
cast, a kernel scalar cast and an orchestration scalar cast. Through float it rounded twice:
INT32 2^30 + 2^22 + 1, just above the midpoint of 2^30 and 2^30 + 2^23, gave 2^30 (session 54
tester E #1); every other int -> float pair was already rounded once."""
import numpy as np

import pypto
import pypto.language as pl

SRC = '''
import pypto.language as pl

T = pl.Tensor[[1, 4], pl.INT32]
B = pl.Tensor[[1, 4], pl.BF16]
S = pl.Tensor[[4], pl.FP32]


@pl.program
class IntToBf16:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: T, n: pl.Scalar[pl.INT64], y: pl.Out[B], s: pl.InOut[S]) -> tuple[B, S]:
        y = pl.store(pl.cast(pl.load(x, [0, 0], [1, 4]), pl.BF16), [0, 0], y)
        s = pl.write(s, [0], pl.cast(pl.cast(n, pl.BF16), pl.FP32))
        return y, s

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: T, n: pl.Scalar[pl.INT64], y: pl.Out[B], s: pl.InOut[S]) -> tuple[B, S]:
        y, s = self.k(x, n, y, s)
        s = pl.tensor.write(s, [1], pl.cast(pl.cast(n, pl.BF16), pl.FP32))
        return y, s
'''


def test_integers_round_once_to_bf16():
    prog = pypto.compile(pl.parse_program(SRC, "int_bf16.py"))
    x = np.array([[2**30 + 2**22 + 1, 2**30 + 2**22, -(2**30 + 2**22 + 1), 257]], np.int32)
    y = np.zeros((1, 4), np.uint16)           # BF16 as its bits (ml_dtypes is optional)
    s = np.zeros(4, np.float32)
    prog(x, 2**62 + 2**54 + 1, y, s)          # int64 -> double would land on the midpoint too
    got = (y.astype(np.uint32) << 16).view(np.float32)[0]
    assert [int(v) for v in got] == [2**30 + 2**23, 2**30, -(2**30 + 2**23), 256]
    assert s[0] == s[1] == np.float32(2.0**62 + 2.0**55)
