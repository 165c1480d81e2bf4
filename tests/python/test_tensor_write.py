"""tensor.write (anchor §11): `pl.tensor.write(t, [i, j], v)` / `pl.write(t, ...)` in an
orchestration stores one element after its earlier readers and writers finished; later tasks see
it. NumPy-checked end to end (also under the race checker), the printed IR, and misuse errors.
The emitted C++ is the golden case tests/golden/tensor_write."""
import os

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import ir
from pypto.errors import PyptoError

from codegen_test_util import GOLDEN_DIR, load_single_program


def _program():
    return load_single_program(os.path.join(GOLDEN_DIR, "tensor_write", "program.py"))


@pytest.mark.parametrize("race_check", [False, True])
def test_written_elements_are_seen_by_later_tasks(race_check):
    a = np.random.default_rng(2).standard_normal((4, 8)).astype(np.float32)
    c = np.zeros((4, 8), np.float32)
    counts = np.array([7, 7], np.int32)
    stats = pypto.compile(_program())(a, c, counts, 2, race_check=race_check)
    assert stats.races == 0
    t = 2 * a
    t[2, 3] = t[1, 2] + 100
    t[0, 0] = t[3, 7] * 0.5
    np.testing.assert_allclose(c, 2 * t, rtol=1e-6)
    np.testing.assert_array_equal(counts, [7, 2])


def test_statement_form_rebinds_the_tensor_and_round_trips():
    prog = _program()
    text = ir.python_print(prog)
    assert "pl.tensor.write(t_1, [n, 3], v + 100.0)" in text, text
    assert ir.structural_equal_explain(pl.parse_program(text), prog)[0]


HEAD = '''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[4, 8], pl.FP32], c: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        {kernel}
        c = pl.store(pl.load(a, [0, 0], [4, 8]), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4, 8], pl.FP32], c: pl.Out[pl.Tensor[[4, 8], pl.FP32]],
             i: pl.Tensor[[4], pl.INT32]) -> pl.Tensor[[4, 8], pl.FP32]:
        {orch}
        c = self.k(a, c)
        return c
'''

MISUSE = [
    ("pl.tensor.write(c, [0, 0], 1)", None, "tensor.write: value Scalar[INDEX] must have the tensor's dtype FP32",
     "pl.cast(v, pl.FP32)"),
    ("pl.tensor.write(c, [0], 1.0)", None, "tensor.write: indices count (1) must match tensor rank (2)", None),
    ("pl.write(3, [0], 1.0)", None, "pl.write needs a tensor or a tile", None),
    ("pl.write(c, [0, 0])", None, "pl.write takes a tensor or tile, indices and a value", None),
]


@pytest.mark.parametrize("orch,kernel,message,help", MISUSE, ids=[m[0] for m in MISUSE])
def test_misuse_is_located(orch, kernel, message, help):
    text = HEAD.replace("{kernel}", kernel or "pass").replace("{orch}", orch)
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(text, "w.py")
    e = ei.value
    line = next(n for n, t in enumerate(text.splitlines(), 1) if t.strip() == orch)
    assert message in e.message, f"\nwant: {message}\ngot:  {e.message}"
    assert (e.file, e.line) == ("w.py", line), str(e)
    if help is not None:
        assert help in e.help, e.help


def test_a_value_that_is_a_read_inside_an_expression_is_bound_first():
    """`pl.tensor.write(c, [0, 0], pl.tensor.read(c, [1, 1]) * 2.0)` was refused ("'tensor.read'
    cannot be used inside an expression in orchestration code"): the read is now bound to a name
    first (docs/dsl.md, "Element reads as operands"), after the task that wrote c."""
    text = HEAD.replace("{kernel}", "pass").replace(
        "{orch}\n        c = self.k(a, c)", "c = self.k(a, c)\n        pl.tensor.write(c, [0, 0], pl.tensor.read(c, [1, 1]) * 2.0)")
    prog = pl.parse_program(text, "w.py")
    assert "c_elem = c_1[1, 1]" in ir.python_print(prog)
    a = np.random.default_rng(3).standard_normal((4, 8)).astype(np.float32)
    c = np.zeros((4, 8), np.float32)
    pypto.compile(prog)(a, c, np.zeros(4, np.int32))
    want = a.copy()
    want[0, 0] = a[1, 1] * 2
    np.testing.assert_array_equal(c, want)
