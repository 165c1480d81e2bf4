"""tensor.slice valid_shape (spec anchor_features §10) on orchestration slices: rank-checked, at
most the slice shape when static, printed and re-parsed, used by the static overhang check, and
otherwise metadata (the view is the clamped box of §18). A kernel-side valid_shape is the valid
box of a 4-argument tile.load (tests/python/test_kernel_valid_shape.py). The C++ is tests/golden/tensor_slice_valid_shape."""
import os
import warnings

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import ir
from pypto.errors import PyptoError
from pypto.frontend.diagnostics import PyptoWarning

from codegen_test_util import GOLDEN_DIR, load_single_program


def _program():
    return load_single_program(os.path.join(GOLDEN_DIR, "tensor_slice_valid_shape", "program.py"))


def test_prints_and_round_trips():
    prog = _program()
    text = ir.python_print(prog)
    assert "[i * 16, 0], [n, 16])" in text, text
    assert ir.structural_equal_explain(pl.parse_program(text), prog)[0]


def test_runs_like_the_plain_slice():
    x = np.random.default_rng(4).standard_normal((40, 16)).astype(np.float32)
    out = np.zeros_like(x)
    p = pypto.compile(_program())
    try:
        p(x, out, 3)
    finally:
        p.close()
    np.testing.assert_allclose(out, x + 1, rtol=1e-6)


SRC = '''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def add_one(self, x: pl.Tensor[[16, 16], pl.FP32],
                y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.add(pl.load(x, [0, 0], [16, 16]), 1.0), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[40, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[40, 16], pl.FP32]]) -> pl.Tensor[[40, 16], pl.FP32]:
        src = pl.tensor.slice(x, [16, 16], [32, 0], valid_shape=VALID)
        dst = pl.tensor.slice(out, [16, 16], [0, 0])
        dst = self.add_one(src, dst)
        return out
'''


def test_static_check_uses_the_valid_extents():
    with warnings.catch_warnings():
        warnings.simplefilter("error", PyptoWarning)
        pl.parse_program(SRC.replace("VALID", "[8, 16]"), "v.py")       # [32, 40): inside, no warning
    with pytest.warns(PyptoWarning, match=r"\[32, 44\) of dimension 0 runs past the extent 40"):
        pl.parse_program(SRC.replace("VALID", "[12, 16]"), "v.py")


@pytest.mark.parametrize("valid,message", [
    ("[8]", "tensor.slice: valid_shape has 1 entries but the tensor"),
    ("[20, 16]", "tensor.slice: valid_shape 20 of dimension 0 exceeds the slice shape 16"),
])
def test_misuse_is_located(valid, message):
    text = SRC.replace("VALID", valid)
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(text, "v.py")
    e = ei.value
    assert message in e.message, e.message
    line = next(n for n, t in enumerate(text.splitlines(), 1) if "valid_shape=" in t)
    assert (e.file, e.line) == ("v.py", line), str(e)


def test_kernel_side_valid_shape_is_a_valid_load():
    text = '''
import pypto.language as pl


@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[32, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.tensor.slice(x, [16, 16], [0, 0], valid_shape=[8, 16])
        y = pl.assemble(y, pl.add(t, 1.0), [0, 0])
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = self.k(x, y)
        return y
'''
    x = np.random.default_rng(6).standard_normal((32, 16)).astype(np.float32)
    y = np.full((16, 16), -7.0, np.float32)
    p = pypto.compile(pl.parse_program(text, "k.py"))
    try:
        p(x, y)
    finally:
        p.close()
    want = np.full((16, 16), -7.0, np.float32)
    want[:8] = x[:8] + 1.0         # only the valid box [8, 16] is loaded, computed and stored
    np.testing.assert_allclose(y, want, rtol=1e-6)
