"""A failed orchestration run names the DSL line, in DSL terms, with the caret under it:

- an element access out of range (pl.tensor.write, x[i]) named the runtime's set_tensor_data /
  get_tensor_data and no line (generated code keeps the spec's signature; PTO2_ELEMENT_SITE before
  the call names the line now);
- a check on a line that holds no call (a run-time ``//`` by zero) was located at column 0 of the
  file's basename, without the source line."""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto.runtime.loader import RunError


@pl.program
class Elements:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16], pl.FP32], n: pl.Scalar[pl.INDEX], d: pl.Scalar[pl.INDEX],
             y: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
        v = x[n]
        y = pl.tensor.write(y, [n + 1], v)
        q = 8 // d
        y = pl.tensor.write(y, [0], pl.cast(q, pl.FP32))
        return y


def _line(text):
    """The line of this file that holds ``text`` (stripped)."""
    lines = open(__file__).read().splitlines()
    return next(i for i, t in enumerate(lines, 1) if t.strip() == text)


@pytest.fixture(scope="module")
def prog():
    p = pypto.compile(Elements)
    yield p
    p.close()


@pytest.mark.parametrize("n, d, text, caret, what", [
    (16, 1, "v = x[n]", "x[n]", "pl.tensor.read: index 16 out of range on axis 0 (extent 16)"),
    (15, 1, "y = pl.tensor.write(y, [n + 1], v)", "pl.tensor.write(", "pl.tensor.write: index 16 out of range on axis 0"),
    (0, 0, "q = 8 // d", "q = 8", "integer division or modulo by zero"),   # no call: the whole line
])
def test_the_failure_is_located_at_its_line(prog, n, d, text, caret, what):
    x = np.arange(16, dtype=np.float32)
    y = np.zeros(16, np.float32)
    with pytest.raises(RunError) as ei:
        prog(x, n, d, y)
    e = ei.value
    line = _line(text)
    assert what in e.message, e.message
    assert (e.file, e.line) == (__file__, line), str(e)
    assert e.source_line.strip() == text and e.col == e.source_line.index(caret) + 1, str(e)
    assert "set_tensor_data" not in e.message and "get_tensor_data" not in e.message
