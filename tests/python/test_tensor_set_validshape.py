"""pl.set_validshape on a tensor (reference_ops.md §9, anchor_features.md §9-10): inside a kernel
body it is tensor.set_validshape, lowered by ConvertTensorToTileOps to tile.set_validshape on the
loaded tile, so the ops after it and the exit store see the valid region (NumPy-checked, race
checker on); in an orchestration it is refused, located, saying where it belongs.
"""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import ir
from pypto.errors import PyptoError

_KERNEL = '''
import pypto.language as pl


@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[{os}], pl.FP32]],
          n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[{os}], pl.FP32]:
        t = {call}
        out = pl.assemble(out, {value}, [0, 0])
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[{os}], pl.FP32]],
             n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[{os}], pl.FP32]:
        out = self.k(x, out, n)
        return out
'''


def _run(src, x, out_shape, n):
    p = pypto.compile(pl.parse_program(src, "k.py"))
    try:
        out = np.full(out_shape, -7, np.float32)
        p(x, out, n, race_check=True)
        return out
    finally:
        p.close()


def _x(seed):
    return np.random.default_rng(seed).standard_normal((16, 16)).astype(np.float32)


@pytest.mark.parametrize("call", ["pl.set_validshape(x, n, 5)", "pl.tensor.set_validshape(x, n, 5)"])
def test_tensor_set_validshape_limits_the_exit_store(call):
    x = _x(31)
    src = _KERNEL.format(os="16, 16", call=call, value="t")
    text = ir.python_print(pl.parse_program(src, "k.py"))
    assert "tensor.set_validshape" in text or "pl.set_validshape(x, n, 5)" in text, text
    out = _run(src, x, (16, 16), 3)
    want = np.full((16, 16), -7.0, np.float32)
    want[:3, :5] = x[:3, :5]
    np.testing.assert_array_equal(out, want)


def test_tensor_set_validshape_limits_a_following_reduction():
    x = _x(32)
    src = _KERNEL.format(os="16, 1", call="pl.set_validshape(x, 4, n)", value="pl.row_sum(t)")
    out = _run(src, x, (16, 1), 6)
    want = np.full((16, 1), -7.0, np.float32)
    want[:4, 0] = x[:4, :6].sum(axis=1)
    np.testing.assert_allclose(out, want, rtol=1e-5)


def test_tensor_set_validshape_lowers_to_the_tile_op():
    from pypto import codegen
    src = _KERNEL.format(os="16, 16", call="pl.set_validshape(x, n, 5)", value="t")
    text = ir.python_print(codegen.run_pipeline(pl.parse_program(src, "k.py")))
    assert "pl.set_validshape(" in text and "pl.TileView(valid_shape=[n, 5])" in text, text
    assert "tensor.set_validshape" not in text, text


def _located(src, line_text, message, help_part):
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(src, "k.py")
    e = ei.value
    assert message in e.message, e.message
    assert help_part in (e.help or ""), e.help
    line = next(i for i, t in enumerate(src.splitlines(), 1) if t.strip() == line_text)
    assert (e.file, e.line) == ("k.py", line), str(e)


def test_tensor_set_validshape_in_an_orchestration_is_refused_with_what_to_do():
    src = '''
import pypto.language as pl


@pl.program
class K:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.set_validshape(x, n, 5)
        return t
'''
    _located(src, "t = pl.set_validshape(x, n, 5)", "tensor.set_validshape sets a kernel tile's valid region",
             "valid_shape=[rows, cols]")


@pytest.mark.parametrize("call,message", [
    ("pl.set_validshape(x, 17, 5)", "tensor.set_validshape: valid_rows 17 is outside [0, 16]"),
    ("pl.set_validshape(x, 2.0, 5)", "tensor.set_validshape: argument 'valid_rows' must be an integer scalar"),
])
def test_tensor_set_validshape_misuse_is_located_in_tensor_wording(call, message):
    src = _KERNEL.format(os="16, 16", call=call, value="t")
    _located(src, f"t = {call}", message, "")
