"""Kernel-side tensor.write (spec anchor_features §11 "Kernels"): `pl.tensor.write(t, [i, j], v)`
in a kernel stores one element to global memory. It is checked against the declared parameter
shape, clipped to a smaller run-time tensor (§18), counts as a write for the direction upgrade of
§16 (a plain-In parameter it writes becomes Out, submitted add_inout here) and for the race checker. NumPy-checked end to
end; the orchestration C++ is the golden case tests/golden/kernel_tensor_write."""
import os

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import ir
from pypto.compiler import RunError
from pypto.errors import PyptoError
from pypto.ir import passes
from pypto._core.ir import ParamDirection as PD

from codegen_test_util import GOLDEN_DIR, load_single_program


def _program():
    return load_single_program(os.path.join(GOLDEN_DIR, "kernel_tensor_write", "program.py"))


@pytest.fixture(scope="module")
def compiled():
    prog = pypto.compile(_program())
    yield prog
    prog.close()


@pytest.mark.parametrize("race_check", [False, True])
@pytest.mark.parametrize("i", [0, 3])
def test_scalar_stores_reach_global_memory(compiled, race_check, i):
    x = np.random.default_rng(5).standard_normal((4, 8)).astype(np.float32)
    flags = np.full((4, 8), -1, np.float32)
    y = np.zeros((4, 8), np.float32)
    z = np.zeros((4, 8), np.float32)
    stats = compiled(x, flags, y, z, i, race_check=race_check)
    assert stats.races == 0
    want_flags = np.full((4, 8), -1, np.float32)
    want_flags[i, 1] = 2 * i
    want_y = x.copy()
    want_y[0, 7] = i
    np.testing.assert_array_equal(flags, want_flags)
    np.testing.assert_array_equal(y, want_y)
    np.testing.assert_array_equal(z, want_flags)     # copy runs after mark's write (InOut)


def test_written_in_parameter_is_upgraded():
    # flags is declared plain In; the kernel writes it with tensor.write (and never loads it) -> Out
    # (§16 A); the call site passes main's InOut flags -> InOut (§16 B, R-enclosing): add_inout.
    out = passes.UpgradeWrittenParamDirections()(_program())
    assert out.get("mark").param_directions[1] == PD.Out, out.get("mark").param_directions
    assert "pl.tensor.write(flags, [i, 1]" in ir.python_print(out)


def test_index_outside_the_declared_shape_fails_the_run(compiled):
    x = np.zeros((4, 8), np.float32)
    with pytest.raises(RunError, match=r"program.py:15: tensor.write: index 4 of axis 0 is outside \[0, 4\)"):
        compiled(x, np.zeros((4, 8), np.float32), np.zeros((4, 8), np.float32), np.zeros((4, 8), np.float32), 4)


HEAD = '''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[4, 8], pl.FP32], c: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        t = pl.load(a, [0, 0], [4, 8])
        {kernel}
        c = pl.store(t, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4, 8], pl.FP32], c: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        c = self.k(a, c)
        return c
'''

MISUSE = [
    ("pl.tensor.write(c, [0, 0], 1)", "tensor.write: value Scalar[INDEX] must have the tensor's dtype FP32",
     "pl.cast(v, pl.FP32)"),
    ("pl.tensor.write(c, [0], 1.0)", "tensor.write: indices count (1) must match tensor rank (2)", None),
    ("pl.tensor.write(t, [0, 0], 1.0)", "argument 'tensor' must be a Tensor", None),
]


@pytest.mark.parametrize("kernel,message,help", MISUSE, ids=[m[0] for m in MISUSE])
def test_misuse_is_located(kernel, message, help):
    text = HEAD.replace("{kernel}", kernel)
    with pytest.raises(PyptoError) as ei:
        pypto.compile(pl.parse_program(text, "w.py"))
    e = ei.value
    line = next(n for n, t in enumerate(text.splitlines(), 1) if t.strip() == kernel)
    assert message in e.message, f"\nwant: {message}\ngot:  {e.message}"
    assert (e.file, e.line) == ("w.py", line), str(e)
    if help is not None:
        assert help in e.help, e.help
