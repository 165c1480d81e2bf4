"""Run-time element indices are checked per axis (project standard: generated code never reads or
writes outside its tensors, and a wrong element is worse than an error).

`pl.tile.read(t, [i, j])`, `t[i, j]`, `pl.tile.write(t, [i, j], v)`, `t[i, j] = v` and the tensor
forms `pl.tensor.read` / `pl.tensor.write` (in a kernel and in the orchestration) with a run-time
index: an index inside the tile's element count but outside one axis ([0, 40] on [16, 32] is flat
element 40 = [1, 8]) fails the run naming the op, the axis, the index, the extent and (kernel ops)
the DSL line; negative and huge indices fail too; in-range indices give NumPy-checked values.
Each program is compiled once for the whole file."""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import codegen
from pypto._core import kernel_cpu
from pypto.compiler import RunError

from e2e_util import kernel_program_text, run_kernel_program

S = [16, 32]
FILE = "idx.py"
IN_RANGE = [(0, 0), (15, 31), (3, 17), (1, 8)]
# (i, j, axis, index, extent): flat-in-range but out of one axis, negative, huge, INT64_MIN.
OUT_OF_RANGE = [
    (0, 40, 1, 40, 32),
    (1, -1, 1, -1, 32),
    (-1, 5, 0, -1, 16),
    (16, 0, 0, 16, 16),
    (2 ** 40, 0, 0, 2 ** 40, 16),
    (0, 2 ** 40, 1, 2 ** 40, 32),
    (-2 ** 63, 0, 0, -2 ** 63, 16),
    (0, -2 ** 63, 1, -2 ** 63, 32),
]

# name -> (body statements, output expression of o, the op named in the error)
FORMS = {
    "tile.read": (["v = pl.tile.read(ta, [i, j])"], "pl.expands(ta, v)", "tile.read"),
    "subscript read": (["v = ta[i, j]"], "pl.expands(ta, v)", "tile.read"),
    "tile.write": (["pl.tile.write(ta, [i, j], pl.const(-7.0, pl.FP32))"], "ta", "tile.write"),
    "subscript write": (["ta[i, j] = pl.const(-7.0, pl.FP32)"], "ta", "tile.write"),
}

_compiled = {}


def _text(form):
    body, out, _op = FORMS[form]
    return kernel_program_text([("a", S, "FP32")], [("o", S, "FP32", out)], scalars=[("i", "INT64"), ("j", "INT64")],
                               body=body)


def _program(form):
    if form not in _compiled:
        _compiled[form] = pypto.compile(pl.parse_program(_text(form), FILE))
    return _compiled[form]


@pytest.fixture(scope="module", autouse=True)
def _close_programs():
    yield
    for p in _compiled.values():
        p.close()
    _compiled.clear()


def _a():
    return np.arange(16 * 32, dtype=np.float32).reshape(S) * 0.5 + 1.0


def _op_line(form):
    stmt = FORMS[form][0][0]
    return next(n for n, text in enumerate(_text(form).splitlines(), 1) if text.strip() == stmt)


@pytest.mark.parametrize("form", list(FORMS))
def test_in_range_indices_against_numpy(form):
    a = _a()
    for i, j in IN_RANGE:
        out = run_kernel_program(_program(form), {"a": a}, scalars=(i, j))["o"]
        if "read" in form:
            want = np.full(S, a[i, j], np.float32)
        else:
            want = a.copy()
            want[i, j] = -7.0
        np.testing.assert_array_equal(out, want, err_msg=f"{form} [{i}, {j}]")


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("i,j,axis,index,extent", OUT_OF_RANGE)
def test_index_outside_one_axis_fails_the_run(form, i, j, axis, index, extent):
    op = FORMS[form][2]
    want = f"{FILE}:{_op_line(form)}: {op}: index {index} of axis {axis} is outside [0, {extent})"
    with pytest.raises(RunError) as ei:
        run_kernel_program(_program(form), {"a": _a()}, scalars=(i, j))
    assert want in str(ei.value), str(ei.value)


def test_the_check_sits_at_the_index_not_in_element_loops():
    # One call per access with the per-axis extents; no flat index against the element count.
    src = kernel_cpu.generate(codegen.run_pipeline(pl.parse_program(_text("tile.write"), FILE)), "k")
    line = _op_line("tile.write")
    assert (f'pypto_kernel::tile_set<pypto_kernel::Storage::F32>(ctx, ta, "{FILE}", {line}, '
            "{static_cast<int64_t>(i), static_cast<int64_t>(j)}, {16, 32}, ") in src, src
    src = kernel_cpu.generate(codegen.run_pipeline(pl.parse_program(_text("tile.read"), FILE)), "k")
    assert f'pypto_kernel::tile_at(ctx, ta, "{FILE}", {_op_line("tile.read")}, ' in src, src


# ---- tensor forms --------------------------------------------------------------------------

KERNEL_TENSOR = '''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 32], pl.FP32], c: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
          i: pl.Scalar[pl.INT64], j: pl.Scalar[pl.INT64], p: pl.Scalar[pl.INT64],
          q: pl.Scalar[pl.INT64]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 32])
        v = pl.tensor.read(a, [i, j])
        c = pl.store(pl.expands(t, v), [0, 0], c)
        pl.tensor.write(c, [p, q], v + 1.0)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32], c: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
             i: pl.Scalar[pl.INT64], j: pl.Scalar[pl.INT64], p: pl.Scalar[pl.INT64],
             q: pl.Scalar[pl.INT64]) -> pl.Tensor[[16, 32], pl.FP32]:
        c = self.k(a, c, i, j, p, q)
        return c
'''

ORCH_TENSOR = '''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 32], pl.FP32], c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        c = pl.store(pl.load(a, [0, 0], [16, 32]), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32], c: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
             i: pl.Scalar[pl.INT64], j: pl.Scalar[pl.INT64], r: pl.Scalar[pl.INT64]) -> pl.Tensor[[16, 32], pl.FP32]:
        c = self.k(a, c)
        v = pl.tensor.read(c, [r, 0])
        c = pl.tensor.write(c, [i, j], v + 1.0)
        return c
'''


def _tensor_program(key, text):
    if key not in _compiled:
        _compiled[key] = pypto.compile(pl.parse_program(text, FILE))
    return _compiled[key]


@pytest.mark.parametrize("i,j", [(0, 0), (15, 15), (3, 10)])
def test_kernel_tensor_read_and_write_in_range(i, j):
    a = _a()
    c = np.zeros(S, np.float32)
    _tensor_program("kernel tensor", KERNEL_TENSOR)(a, c, i, j, j, i)
    want = np.full(S, a[i, j], np.float32)
    want[j, i] = a[i, j] + 1.0
    np.testing.assert_array_equal(c, want)


@pytest.mark.parametrize("i,j,axis,index,extent", [
    (0, 40, 1, 40, 32), (-1, 0, 0, -1, 16), (2 ** 40, 0, 0, 2 ** 40, 16), (0, -2 ** 63, 1, -2 ** 63, 32)])
def test_kernel_tensor_read_outside_one_axis_fails(i, j, axis, index, extent):
    with pytest.raises(RunError, match=rf"out of bounds on axis {axis}: offset {index} \+ size 1 exceeds extent {extent}"):
        _tensor_program("kernel tensor", KERNEL_TENSOR)(_a(), np.zeros(S, np.float32), i, j, 0, 0)


@pytest.mark.parametrize("p,q,axis,index,extent", [
    (0, 40, 1, 40, 32), (20, 3, 0, 20, 16), (-1, 0, 0, -1, 16), (2 ** 40, 0, 0, 2 ** 40, 16),
    (0, -2 ** 63, 1, -2 ** 63, 32)])
def test_kernel_tensor_write_outside_one_axis_fails(p, q, axis, index, extent):
    line = next(n for n, text in enumerate(KERNEL_TENSOR.splitlines(), 1) if "pl.tensor.write(" in text)
    want = f"{FILE}:{line}: tensor.write: index {index} of axis {axis} is outside [0, {extent})"
    with pytest.raises(RunError) as ei:
        _tensor_program("kernel tensor", KERNEL_TENSOR)(_a(), np.zeros(S, np.float32), 1, 2, p, q)
    assert want in str(ei.value), str(ei.value)


def test_orchestration_tensor_write_and_read_in_range():
    a = _a()
    c = np.zeros(S, np.float32)
    _tensor_program("orch tensor", ORCH_TENSOR)(a, c, 15, 31, 2)
    want = a.copy()
    want[15, 31] = a[2, 0] + 1.0
    np.testing.assert_array_equal(c, want)


@pytest.mark.parametrize("i,j,axis,index,extent", [
    (0, 40, 1, 40, 32), (-1, 0, 0, -1, 16), (2 ** 40, 0, 0, 2 ** 40, 16), (0, -2 ** 63, 1, -2 ** 63, 32)])
def test_orchestration_tensor_write_outside_one_axis_names_set_tensor_data(i, j, axis, index, extent):
    with pytest.raises(RunError) as ei:
        _tensor_program("orch tensor", ORCH_TENSOR)(_a(), np.zeros(S, np.float32), i, j, 0)
    msg = str(ei.value)
    assert f"pl.tensor.write: index {index} out of range on axis {axis} (extent {extent})" in msg, msg
    assert "pl.tensor.read" not in msg, msg


def test_orchestration_tensor_read_outside_one_axis_names_get_tensor_data():
    with pytest.raises(RunError, match=r"pl.tensor.read: index 16 out of range on axis 0 \(extent 16\)"):
        _tensor_program("orch tensor", ORCH_TENSOR)(_a(), np.zeros(S, np.float32), 0, 0, 16)
