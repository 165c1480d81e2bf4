"""tensor.slice extent clamping (spec anchor_features §18): the orchestration clamps a slice's
shapes to the source's run-time extent (an offset at or past the end gives an empty view, which
adds no dependency), and kernels clip their loads (0 beyond the extent) and stores (dropped) to
a tensor argument smaller than the declared parameter. Statically, an offset at or past the
extent is an error and a partial overhang a warning. NumPy-checked end to end (also under the
race checker); the emitted C++ is the golden case tests/golden/tensor_slice_clamp."""
import os
import warnings

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto.errors import PyptoError
from pypto.frontend.diagnostics import PyptoWarning

from codegen_test_util import GOLDEN_DIR, load_single_program


@pytest.fixture(scope="module")
def clamp():
    prog = pypto.compile(load_single_program(os.path.join(GOLDEN_DIR, "tensor_slice_clamp", "program.py")))
    yield prog
    prog.close()


@pytest.mark.parametrize("race_check", [False, True])
def test_edge_tiles_are_clamped_and_clipped(clamp, race_check):
    x = np.random.default_rng(3).standard_normal((40, 16)).astype(np.float32)
    out = np.full((40, 16), -7, np.float32)
    sums = np.full((64, 1), -7, np.float32)
    stats = clamp(x, out, sums, race_check=race_check)
    assert stats.races == 0
    np.testing.assert_allclose(out, x + 1, rtol=1e-6)          # the 8-row edge tile too; nothing past row 40
    want = np.zeros((64, 1), np.float32)
    want[:40, 0] = x.sum(axis=1)                                 # rows 40.. of the clipped loads read 0
    np.testing.assert_allclose(sums, want, rtol=1e-5, atol=1e-5)


KERNEL = '''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def add_one(self, x: pl.Tensor[[16, 16], pl.FP32],
                y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.add(pl.load(x, [0, 0], [16, 16]), 1.0), [0, 0], y)
        return y

'''
SRC = KERNEL + '''    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[40, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[40, 16], pl.FP32]]) -> pl.Tensor[[40, 16], pl.FP32]:
        src = pl.tensor.slice(x, [16, 16], [OFF, 0])
        dst = pl.tensor.slice(out, [16, 16], [OFF, 0])
        dst = self.add_one(src, dst)
        return out
'''


def test_static_partial_overhang_warns_and_is_clamped():
    text = SRC.replace("OFF", "32")
    with pytest.warns(PyptoWarning, match=r"pl.tensor.slice \[32, 48\) of dimension 0 runs past the extent 40: "
                                          r"the view is clamped to 8 at run time") as rec:
        prog = pl.parse_program(text, "c.py")
    assert any(":%d:" % (text.splitlines().index(
        "        src = pl.tensor.slice(x, [16, 16], [32, 0])") + 1) in str(w.message) for w in rec)
    x = np.arange(40 * 16, dtype=np.float32).reshape(40, 16)
    out = np.zeros_like(x)
    p = pypto.compile(prog)
    try:
        p(x, out)
    finally:
        p.close()
    np.testing.assert_array_equal(out[32:], x[32:] + 1)
    assert (out[:32] == 0).all()


def test_in_range_slice_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", PyptoWarning)
        pl.parse_program(SRC.replace("OFF", "24"), "c.py")


@pytest.mark.parametrize("off", [40, 41])
def test_static_offset_at_or_past_the_extent_is_an_error(off):
    text = SRC.replace("OFF", str(off))
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(text, "c.py")
    e = ei.value
    assert "tensor.slice: offset %d of dimension 0 is at or past the end of the tensor shape [40, 16]" % off in e.message
    assert (e.file, e.line) == ("c.py", text.splitlines().index(
        "        src = pl.tensor.slice(x, [16, 16], [%d, 0])" % off) + 1), str(e)
    assert "clamped at run time" in e.help


LONG = KERNEL + '''    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[40, 16], pl.FP32], out: pl.InOut[pl.Tensor[[40, 16], pl.FP32]],
             acc: pl.InOut[pl.Tensor[[16, 16], pl.FP32]], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[40, 16], pl.FP32]:
FILLER
        for i in pl.range(3):
            src = pl.tensor.slice(x, [16, 16], [i * 16, 0])
            dst = pl.tensor.slice(out, [16, 16], [i * 16, 0])
            dst = self.add_one(src, dst)
        past = pl.tensor.slice(out, [16, 16], [n, 0])
        past = self.add_one(acc, past)
        return out
'''


def test_a_long_function_clamps_with_one_call_per_axis(monkeypatch, tmp_path):
    # In a function of 64 task statements or more (compiled unoptimised), the clamp is printed
    # as pto2_slice_extent(want, extent, offset): R's expression cost a third of the build of
    # 3,000 sliced calls. Same semantics: the edge tile (rows 32..39) is trimmed to 8 rows, and an
    # offset past the end (n = 48) gives an empty view that the kernel writes nothing through.
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    from pypto import codegen
    prog = pl.parse_program(LONG.replace("FILLER", "\n".join(["        acc = self.add_one(acc, acc)"] * 70)), "long.py")
    code = codegen.generate_orchestration(prog, "main").code
    assert "std::min<uint32_t>" not in code, code
    assert "uint32_t src_shapes[2] = {pto2_slice_extent(16, ext_x.shapes[0], src_offsets[0]), " \
           "pto2_slice_extent(16, ext_x.shapes[1], src_offsets[1])};" in code, code
    x = np.random.default_rng(5).standard_normal((40, 16)).astype(np.float32)
    out = np.full((40, 16), -7, np.float32)
    acc = np.zeros((16, 16), np.float32)
    p = pypto.compile(prog)
    try:
        p(x, out, acc, 48)
    finally:
        p.close()
    np.testing.assert_allclose(out, x + 1, rtol=1e-6)
    np.testing.assert_allclose(acc, np.full((16, 16), 70, np.float32))


RUNTIME_SHAPE = KERNEL + '''    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[40, 16], pl.FP32], out: pl.Out[pl.Tensor[[40, 16], pl.FP32]],
             n: pl.Scalar[pl.INDEX], off: pl.Scalar[pl.INDEX]) -> pl.Tensor[[40, 16], pl.FP32]:
        src = pl.tensor.slice(x, [16, n], [off, 0])
        dst = pl.tensor.slice(out, [16, n], [off, 0])
        dst = self.add_one(src, dst)
        return out
'''


def test_a_negative_run_time_shape_fails_whatever_the_offset():
    # The shape's check sat in the arm an offset past the end skips: n = -1 with offset 48 gave
    # an empty view and no error (with offset 0 it failed, naming the slice). (A long function's
    # pto2_slice_extent(want, ...) always evaluated it.)
    from pypto.runtime.loader import RunError
    prog = pypto.compile(pl.parse_program(RUNTIME_SHAPE, "rs.py"))
    x = np.zeros((40, 16), np.float32)
    for off in (0, 48):
        out = np.zeros_like(x)
        with pytest.raises(RunError, match=r"pl.tensor.slice 'src': shape -1 on axis 1 is outside 0\.\.4294967295"):
            prog(x, out, -1, off)
    out = np.zeros_like(x)
    prog(x, out, 16, 48)   # a valid shape past the end: an empty view, no task touches out
    assert not out.any()
    prog.close()
