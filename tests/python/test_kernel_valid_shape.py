"""Valid shapes in kernels (spec anchor_features §10): 4-argument pl.load, transpose=, slice
valid_shape, the type rules (binary ops take the left operand's valid shape, unary ops keep it,
row reductions give [valid_rows, 1]), the CPU semantics checked against NumPy (only the valid box
is loaded, reduced, multiplied and stored; nothing outside a tensor is touched, race-checked),
the kernel C++ goldens, round-tripping and the located misuse errors.

Regenerate the kernel goldens after an intended change, then review the diff:

    PYPTO_UPDATE_GOLDEN=1 python -m pytest -q tests/python/test_kernel_valid_shape.py
"""
import os
import shutil
import subprocess

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import codegen, ir
from pypto._core import kernel_cpu
from pypto.errors import PyptoError
from pypto.runtime import include_dir, kernel_include_dir

from codegen_test_util import GOLDEN_DIR, load_single_program, significant_lines

CASE = os.path.join(GOLDEN_DIR, "kernel_valid_shape")
UPDATE = os.environ.get("PYPTO_UPDATE_GOLDEN") == "1"


def _program():
    return load_single_program(os.path.join(CASE, "program.py"))


@pytest.fixture(scope="module")
def compiled():
    p = pypto.compile(_program())
    yield p
    p.close()


def _reference(x, w):
    m = x.shape[0]
    y, s, z = (x + 1.0) * 2.0, np.zeros((m, 1), np.float32), np.zeros((m, 8), np.float32)
    s[:, 0] = (-x).max(axis=1)
    z[:] = x[:, :12] @ w[:12, :]
    return y, s, z


@pytest.mark.parametrize("m", [70, 32, 5])
@pytest.mark.parametrize("race_check", [False, True])
def test_edge_tiles_match_numpy(compiled, m, race_check):
    rng = np.random.default_rng(m)
    x = (np.abs(rng.standard_normal((m, 16))) + 0.5).astype(np.float32)   # -x < 0 everywhere
    w = rng.standard_normal((16, 8)).astype(np.float32)
    y, s, z = np.zeros((m, 16), np.float32), np.zeros((m, 1), np.float32), np.zeros((m, 8), np.float32)
    compiled(x, w, y, s, z, race_check=race_check)
    ry, rs, rz = _reference(x, w)
    np.testing.assert_allclose(y, ry, rtol=1e-6)
    np.testing.assert_allclose(s, rs, rtol=1e-6)
    np.testing.assert_allclose(z, rz, rtol=1e-5, atol=1e-5)


def test_types_follow_the_rules():
    prog = codegen.run_pipeline(_program())
    text = ir.python_print(prog)
    assert "pl.load(x, [r, 0], [32, 16], [v, 16])" in text, text
    assert "pl.Tile[[32, 16], pl.FP32, pl.TileView(valid_shape=[v, 16])]" in text, text   # load, add, mul, neg
    assert "pl.Tile[[32, 1], pl.FP32, pl.TileView(valid_shape=[v, 1])]" in text, text      # row_max
    assert "pl.Tile[[32, 8], pl.FP32, pl.MemorySpace.Acc, pl.TileView(valid_shape=[v, 8])]" in text, text  # matmul


def test_prints_and_round_trips():
    prog = _program()
    text = ir.python_print(prog)
    again = pl.parse_program(text)
    assert ir.structural_equal_explain(again, prog)[0], text
    assert ir.python_print(again) == text


def test_default_valid_shapes_print_as_three_arguments():
    src = _kernel_src("t = pl.load(x, [0, 0], [16, 16], [16, 16])\n        u = pl.load(x, [0, 0], [16, 16], valid_shapes=None)",
                      "pl.add(t, u)")
    text = ir.python_print(pl.parse_program(src))
    assert text.count("pl.load(x, [0, 0], [16, 16])") == 2, text
    assert "TileView" not in text


@pytest.mark.parametrize("fn", ["edge", "proj"])
def test_kernel_cpp_golden(fn):
    code = kernel_cpu.generate(codegen.run_pipeline(_program()), fn)
    path = os.path.join(CASE, "kernel_%s.cpp" % fn)
    if UPDATE:
        with open(path, "w") as f:
            f.write(code)
    with open(path) as f:
        assert significant_lines(code) == significant_lines(f.read()), code


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
@pytest.mark.parametrize("fn", ["edge", "proj"])
def test_kernel_cpp_compiles_warning_free(fn, tmp_path):
    path = tmp_path / (fn + ".cpp")
    path.write_text(kernel_cpu.generate(codegen.run_pipeline(_program()), fn))
    r = subprocess.run(["g++", "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-I" + include_dir(),
                        "-I" + kernel_include_dir(), "-c", str(path), "-o", str(tmp_path / (fn + ".o"))],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


# ---- small kernels: x [40, 16] -> out [40, 16] ------------------------------------------------------

def _kernel_src(body: str, out_expr: str, out_shape=(40, 16), x_shape=(40, 16), scalars=""):
    xs, os_ = ", ".join(map(str, x_shape)), ", ".join(map(str, out_shape))
    zeros = ", ".join("0" for _ in out_shape)
    store = f"out = pl.store({out_expr}, [{zeros}], out)" if out_expr else ""
    extra = "".join(", %s: pl.Scalar[pl.INDEX]" % n for n in scalars.split()) if scalars else ""
    call_extra = "".join(", " + n for n in scalars.split()) if scalars else ""
    return f'''
import pypto.language as pl


@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[{xs}], pl.FP32], out: pl.Out[pl.Tensor[[{os_}], pl.FP32]]{extra}) -> pl.Tensor[[{os_}], pl.FP32]:
        {body}
        {store}
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[{xs}], pl.FP32], out: pl.Out[pl.Tensor[[{os_}], pl.FP32]]{extra}) -> pl.Tensor[[{os_}], pl.FP32]:
        out = self.k(x, out{call_extra})
        return out
'''


def _run(src, x, out_shape, scalars=()):
    p = pypto.compile(pl.parse_program(src, "k.py"))
    try:
        out = np.full(out_shape, -7.0, np.float32)
        p(x, out, *scalars, race_check=True)
        return out
    finally:
        p.close()


def test_transposed_load_swaps_the_valid_box():
    x = np.random.default_rng(1).standard_normal((40, 16)).astype(np.float32)
    src = _kernel_src("t = pl.load(x, [8, 0], [16, 16], [16, n], target_memory=pl.MemorySpace.Mat, transpose=True)",
                      "pl.move(t, target_memory=pl.MemorySpace.Vec)", out_shape=(16, 16), scalars="n")
    out = _run(src, x, (16, 16), (5,))
    want = np.full((16, 16), -7.0, np.float32)
    want[:5, :] = x[8:24, :5].T            # the tile is [16, 16] with valid [5, 16] after the swap
    np.testing.assert_array_equal(out, want)


def test_kernel_side_tensor_slice_with_valid_shape_is_a_valid_load():
    x = np.random.default_rng(2).standard_normal((40, 16)).astype(np.float32)
    src = _kernel_src("t = pl.tensor.slice(x, [16, 16], [r, 0], valid_shape=[40 - r, 16])\n"
                      "        out = pl.assemble(out, pl.add(t, 1.0), [0, 0])", None, out_shape=(16, 16), scalars="r")
    out = _run(src, x, (16, 16), (32,))
    want = np.full((16, 16), -7.0, np.float32)
    want[:8] = x[32:] + 1.0
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_slice_of_a_tile_sets_the_valid_region():
    x = np.random.default_rng(3).standard_normal((40, 16)).astype(np.float32)
    src = _kernel_src("t = pl.load(x, [0, 0], [40, 16])\n        u = pl.slice(t, [8, 16], [4, 0], valid_shape=[3, 16])",
                      "pl.row_sum(u)", out_shape=(8, 1))
    out = _run(src, x, (8, 1))
    want = np.full((8, 1), -7.0, np.float32)
    want[:3, 0] = x[4:7].sum(axis=1)
    np.testing.assert_allclose(out, want, rtol=1e-5)


@pytest.mark.parametrize("n", [17, -1, 1 << 40])
def test_a_dynamic_valid_extent_outside_the_tile_fails_the_run(n):
    src = _kernel_src("t = pl.load(x, [0, 0], [16, 16], [n, 16])", "t", out_shape=(16, 16), scalars="n")
    p = pypto.compile(pl.parse_program(src, "k.py"))
    try:
        with pytest.raises(Exception, match=r"valid extent %d of axis 0 is outside \[0, 16\]" % n) as ei:
            p(np.zeros((40, 16), np.float32), np.zeros((16, 16), np.float32), n, race_check=True)
    finally:
        p.close()
    line = src.splitlines().index("        t = pl.load(x, [0, 0], [16, 16], [n, 16])") + 1
    assert "failed: k.py:%d: tile 't': valid extent" % line in str(ei.value), ei.value   # the op's line


def _run_failure(src, out_shape, n):
    """The error of running kernel program `src` on zeros with scalar `n`."""
    p = pypto.compile(pl.parse_program(src, "k.py"))
    try:
        with pytest.raises(Exception) as ei:
            p(np.zeros((40, 16), np.float32), np.zeros(out_shape, np.float32), n)
    finally:
        p.close()
    return ei.value


def test_a_negative_run_time_tile_extent_is_located_at_its_op():
    # It was located at the orchestration's call (the kernel check names the tile, not its line).
    src = _kernel_src("t = pl.load(x, [0, 0], [n, 16])", "pl.fillpad(pl.tile.set_validshape(t, 0, 16))",
                      out_shape=(16, 16), scalars="n")
    error = _run_failure(src, (16, 16), -1)
    line = src.splitlines().index("        t = pl.load(x, [0, 0], [n, 16])") + 1
    assert "failed: k.py:%d: tile 't': extent -1 of axis 0 at run time is negative" % line in str(error), error
    assert error.line == line


def test_a_computed_tile_with_a_bad_valid_extent_is_located_at_its_op():
    # a nested slice's result was 'tile 'tmp'' (the kernel's C++ name), located at the submission
    src = _kernel_src("t = pl.load(x, [0, 0], [16, 16])", "pl.add(pl.tile.slice(t, [8, 16], [0, 0], valid_shape=[n, 16]), 1.0)",
                      out_shape=(8, 16), scalars="n")
    error = _run_failure(src, (8, 16), 12)
    line = next(i for i, t in enumerate(src.splitlines(), 1) if "pl.tile.slice(" in t)
    assert "failed: k.py:%d: a computed tile: valid extent 12 of axis 0 is outside [0, 8]" % line in str(error), error
    assert "'tmp'" not in str(error) and error.line == line


def test_a_valid_box_past_the_declared_tensor_fails_the_run():
    src = _kernel_src("t = pl.load(x, [r, 0], [16, 16], [n, 16])", "t", out_shape=(16, 16), scalars="r n")
    p = pypto.compile(pl.parse_program(src, "k.py"))
    try:
        p(np.zeros((40, 16), np.float32), np.zeros((16, 16), np.float32), 30, 10)    # rows [30, 40): inside
        with pytest.raises(Exception, match=r"load of tensor 'x' out of bounds on axis 0: offset 30 \+ size 11"):
            p(np.zeros((40, 16), np.float32), np.zeros((16, 16), np.float32), 30, 11)
    finally:
        p.close()


def test_tile_type_valid_shape_api():
    c = lambda v: ir.ConstInt.make(v, ir.DataType.INDEX)   # noqa: E731
    full = ir.TileType.make([c(32), c(16)], ir.DataType.FP32, ir.MemorySpace.Vec, [c(32), c(16)])
    assert list(full.valid_shape) == [] and full == ir.TileType.make([c(32), c(16)], ir.DataType.FP32)
    part = ir.TileType.make([c(32), c(16)], ir.DataType.FP32, ir.MemorySpace.Vec, [c(8), c(16)])
    assert [e.value for e in part.valid_shape] == [8, 16]
    assert part != full and hash(part) != hash(full)
    assert ir.python_print(part) == "pl.Tile[[32, 16], pl.FP32, pl.TileView(valid_shape=[8, 16])]"


@pytest.mark.parametrize("body,message", [
    ("t = pl.load(x, [0, 0], [16, 16], [8])", "tile.load: valid_shapes [8] has 1 entries, shapes [16, 16] has 2"),
    ("t = pl.load(x, [0, 0], [16, 16], [17, 16])", "tile.load: valid extent 17 of dimension 0 exceeds the tile shape 16"),
    ("t = pl.load(x, [0, 0], [16, 16], [-1, 16])", "tile.load: valid extent -1 of dimension 0 is negative"),
    ("t = pl.load(x, [0, 0], [])", "tile.load: shapes is empty"),
    ("t = pl.load(x, [0, 0], [16, 16], transpose=True)", "transpose=True needs target_memory=pl.MemorySpace.Mat"),
    ("t = pl.load(x, [32, 0], [16, 16], [9, 16])", "tile.load: block [32, 41) of dimension 0 is outside"),
    ("t = pl.slice(pl.load(x, [0, 0], [16, 16]), [8, 16], [0, 0], valid_shape=[9, 16])",
     "tile.slice: valid extent 9 of dimension 0 is outside [0, 8]"),
])
def test_misuse_is_located(body, message):
    src = _kernel_src(body, "t" if body.startswith("t = pl.load") else "t", out_shape=(16, 16))
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(src, "k.py")
    e = ei.value
    assert message in e.message, e.message
    line = next(n for n, t in enumerate(src.splitlines(), 1) if t.strip() == body.strip())
    assert (e.file, e.line) == ("k.py", line), str(e)


def test_static_bounds_use_the_valid_extents():
    src = _kernel_src("t = pl.load(x, [32, 0], [16, 16], [8, 16])", "t", out_shape=(16, 16))
    x = np.random.default_rng(5).standard_normal((40, 16)).astype(np.float32)
    out = _run(src, x, (16, 16))
    want = np.full((16, 16), -7.0, np.float32)
    want[:8] = x[32:]
    np.testing.assert_array_equal(out, want)


# ---- pad_value= and fillpad ---------------------------------------------------------------------

@pytest.mark.parametrize("pad,fill", [("zero", 0.0), ("max", np.inf), ("min", -np.inf)])
def test_fillpad_writes_the_pad_value_outside_the_valid_box(pad, fill):
    x = np.random.default_rng(7).standard_normal((40, 16)).astype(np.float32)
    src = _kernel_src(f"t = pl.load(x, [0, 0], [16, 16], [n, 5])\n        u = pl.tile.fillpad(t, pad_value=pl.PadValue.{pad})",
                      "u", out_shape=(16, 16), scalars="n")
    out = _run(src, x, (16, 16), (3,))
    want = np.full((16, 16), fill, np.float32)
    want[:3, :5] = x[:3, :5]
    np.testing.assert_array_equal(out, want)       # fillpad's result is fully valid: stored whole


def test_slice_pad_value_prints_and_round_trips():
    src = _kernel_src("t = pl.tensor.slice(x, [16, 16], [0, 0], valid_shape=[8, 16], pad_value=pl.PadValue.max)\n"
                      "        out = pl.assemble(out, pl.add(t, 1.0), [0, 0])", None, out_shape=(16, 16))
    prog = pl.parse_program(src, "k.py")
    text = ir.python_print(prog)
    assert 'pad_value="max"' in text, text
    assert ir.structural_equal_explain(pl.parse_program(text), prog)[0]


def test_pad_value_without_valid_shape_warns():
    from pypto.frontend.diagnostics import PyptoWarning
    src = _kernel_src("t = pl.slice(pl.load(x, [0, 0], [16, 16]), [8, 16], [0, 0], pad_value=pl.PadValue.zero)",
                      "t", out_shape=(16, 16))
    with pytest.warns(PyptoWarning, match="pad_value=zero without valid_shape= has no effect"):
        pl.parse_program(src, "k.py")


def test_bad_pad_value_is_located():
    body = 't = pl.slice(pl.load(x, [0, 0], [16, 16]), [8, 16], [0, 0], [4, 16], pad_value="edge")'
    src = _kernel_src(body, "t", out_shape=(16, 16))
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(src, "k.py")
    assert "tile.slice: pad_value must be pl.PadValue.null, .zero, .max or .min" in ei.value.message
    assert ei.value.line == next(n for n, t in enumerate(src.splitlines(), 1) if t.strip() == body)


# ---- drop_dims= -------------------------------------------------------------------------------

DROP_SRC = '''
import pypto.language as pl


@pl.program
class D:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[3, 40, 16], pl.FP32], out: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
          b: pl.Scalar[pl.INDEX]) -> pl.Tensor[[32, 16], pl.FP32]:
        t = pl.tensor.slice(x, [1, 32, 16], [b, 8, 0], valid_shape=[1, 20, 16], drop_dims=[0])
        out = pl.assemble(out, pl.mul(t, 3.0), [0, 0])
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[3, 40, 16], pl.FP32], out: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
             b: pl.Scalar[pl.INDEX]) -> pl.Tensor[[32, 16], pl.FP32]:
        out = self.k(x, out, b)
        return out
'''


def test_drop_dims_loads_a_plane_of_a_3d_tensor():
    x = np.random.default_rng(8).standard_normal((3, 40, 16)).astype(np.float32)
    prog = pl.parse_program(DROP_SRC, "d.py")
    text = ir.python_print(prog)
    assert "drop_dims=[0]" in text and ir.structural_equal_explain(pl.parse_program(text), prog)[0], text
    assert "pl.load(x, [b, 8, 0], [1, 32, 16], [1, 20, 16], drop_dims=[0])" in ir.python_print(codegen.run_pipeline(prog))
    out = _run(DROP_SRC, x, (32, 16), (2,))
    want = np.full((32, 16), -7.0, np.float32)
    want[:20] = x[2, 8:28] * 3.0
    np.testing.assert_allclose(out, want, rtol=1e-6)


@pytest.mark.parametrize("old,new,message", [
    ("drop_dims=[0]", "drop_dims=[1]", "tensor.slice: drop_dims axis 1 has extent 32, only an axis of constant extent 1"),
    ("drop_dims=[0]", "drop_dims=[0, 0]", "tensor.slice: drop_dims names axis 0 twice"),
    ("drop_dims=[0]", "drop_dims=[3]", "tensor.slice: drop_dims axis 3 is out of range for rank 3"),
])
def test_drop_dims_misuse_is_located(old, new, message):
    src = DROP_SRC.replace(old, new)
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(src, "d.py")
    assert message in ei.value.message, ei.value.message
    assert ei.value.line == next(n for n, t in enumerate(src.splitlines(), 1) if new in t)


def test_drop_dims_in_an_orchestration_is_refused():
    src = '''
import pypto.language as pl


@pl.program
class O:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[3, 40, 16], pl.FP32]) -> pl.Tensor[[40, 16], pl.FP32]:
        v = pl.tensor.slice(x, [1, 40, 16], [0, 0, 0], drop_dims=[0])
        return v
'''
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(src, "o.py")
    assert "drop_dims= of pl.tensor.slice is only supported inside kernels" in ei.value.message
    assert ei.value.line == 9


def test_an_inline_dynamic_valid_extent_round_trips_and_runs():
    src = _kernel_src("t = pl.load(x, [r, 0], [16, 16], [min(40 - r, 16), 16])", "pl.exp(t)", out_shape=(16, 16),
                      scalars="r")
    prog = pl.parse_program(src, "k.py")
    text = ir.python_print(prog)
    assert "pl.TileView(valid_shape=[min(40 - r, 16), 16])" in text, text
    assert ir.structural_equal_explain(pl.parse_program(text), prog)[0]
    x = np.random.default_rng(9).standard_normal((40, 16)).astype(np.float32)
    out = _run(src, x, (16, 16), (30,))
    want = np.full((16, 16), -7.0, np.float32)
    want[:10] = np.exp(x[30:])
    np.testing.assert_allclose(out, want, rtol=1e-5)
