"""NumPy's and Python's spellings for shapes and multiple assignment: `x.shape[k]`, `len(x)`,
`m, n = x.shape`, `x.dtype`, and `a, b = b, a`. Before, `x.shape` was "unsupported expression",
`len` "cannot call 'len'", and a tuple on the right of `=` "unsupported Python expression (Tuple)"."""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import ir
from pypto.errors import PyptoError

SRC = '''
import pypto.language as pl
M = pl.dynamic("M")


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[M, 16], pl.FP32], n: pl.Scalar[pl.INDEX],
          y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        t = pl.load(x, [0, 0], [8, 16])
        rows, cols = x.shape
        t = pl.add(t, pl.cast(rows * 1000 + cols, x.dtype))
        t = pl.add(t, float(t.shape[-1] + len(t) * 100))
        t = pl.add(t, float(n))
        y = pl.store(t, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[M, 16], pl.FP32], y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        a, b = 0, 1
        for i in pl.range(x.shape[0] // 8):
            a, b = b, a + b
        y = self.k(x, a * 10000 + len(x), y)
        return y
'''


@pytest.mark.parametrize("rows", [8, 24, 56])
def test_shapes_lengths_and_swaps_run(rows):
    prog = pypto.compile(pl.parse_program(SRC, "shapes.py"))
    x = np.arange(rows * 16, dtype=np.float32).reshape(rows, 16)
    y = np.zeros((8, 16), np.float32)
    prog(x, y)
    a, b = 0, 1
    for _ in range(rows // 8):
        a, b = b, a + b                  # the Fibonacci step: both values read before either is bound
    want = x[:8] + (rows * 1000 + 16) + (16 + 8 * 100) + (a * 10000 + rows)
    np.testing.assert_array_equal(y, want)


def test_printed_form_round_trips():
    prog = pl.parse_program(SRC, "shapes.py")
    text = ir.python_print(prog)
    assert "pl.tensor.dim(x, 0)" in text and "pl.tensor.dim(x, 1)" in text, text   # kernel side: run time
    assert ir.structural_equal_explain(pl.parse_program(text), prog)[0]


@pytest.mark.parametrize("old,new,message", [
    ("rows, cols = x.shape", "rows, cols, z = x.shape", "x.shape has 2 extents but 3 names are unpacked"),
    ("rows, cols = x.shape", "rows = x.shape[2]\n        cols = 1", "x.shape[2] is out of range: x has rank 2"),
    ("rows, cols = x.shape", "rows = x.shape[n]\n        cols = 1", "the index of x.shape must be an integer constant"),
    ("rows, cols = x.shape", "rows = x.shape\n        cols = 1", "'x.shape' is a tuple of extents"),
    ("rows, cols = x.shape", "rows = n.shape[0]\n        cols = 1", "only tensors and tiles have a .shape"),
    ("rows, cols = x.shape", "rows, cols = n, n, n", "2 names are assigned 3 values"),
    ("rows, cols = x.shape", "rows = len(n)\n        cols = 1", "len() needs a tensor or tile"),
])
def test_misuse_is_a_located_error(old, new, message):
    with pytest.raises(PyptoError) as e:
        pl.parse_program(SRC.replace(old, new), "bad_shapes.py")
    assert message in str(e.value) and "bad_shapes.py:" in str(e.value), str(e.value)
