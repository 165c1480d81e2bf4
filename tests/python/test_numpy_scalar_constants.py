"""NumPy scalars as module constants fold like Python numbers: `ROWS = np.int64(64)`,
`ALPHA = np.float32(2.5)`, `FLAG = np.bool_(True)` (what `arr.size`, `np.prod(shape)` and
`arr.sum()` give). They were refused: "shape entries must be integers ..., got 'ROWS'" and
"'ALPHA' is a Python float32, not a value the DSL can use"."""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import ir
from pypto.errors import PyptoError

SRC = '''
import numpy as np
import pypto.language as pl
ROWS = np.int64(64)
HALF = np.int32(32)
ALPHA = np.float32(2.5)
FLAG = np.bool_(True)
SHAPE = [np.uint16(64)]

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[ROWS], pl.FP32], y: pl.Out[pl.Tensor[SHAPE, pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        t = pl.load(x, [0], [HALF * 2])
        if FLAG:
            t = pl.mul(t, ALPHA)
        y = pl.store(t, [0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64], pl.FP32], y: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        for i in pl.range(ROWS // HALF - 1):
            y = self.k(x, y)
        return y
'''


def test_numpy_scalars_fold_like_python_numbers():
    prog = pl.parse_program(SRC, "np_consts.py")
    text = ir.python_print(prog)
    assert "pl.Tensor[[64], pl.FP32]" in text and "2.5" in text, text
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    pypto.compile(prog)(x, y)
    np.testing.assert_array_equal(y, x * np.float32(2.5))


def test_a_numpy_integer_beyond_int64_is_refused_like_a_python_one():
    src = SRC.replace("ROWS = np.int64(64)", "ROWS = np.uint64(2**64 - 1)")
    with pytest.raises(PyptoError, match="18446744073709551615"):
        pl.parse_program(src, "np_consts.py")
