"""Valid regions in gather_mask, scatter_mask and scatter_update (spec reference_ops.md §1.5, §12):
the result's valid shape (type rules, printed and re-parsed) and the CPU semantics over the valid
box, NumPy-checked with the race checker; elements outside a box are neither read nor written.
"""
import subprocess

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import codegen, ir
from test_kernel_valid_ops import _run, _src, _x


def _ints(shape, fill, values):
    a = np.full(shape, fill, np.int32)
    a[tuple(slice(0, n) for n in np.shape(values))] = values
    return a


# ---- gather_mask ------------------------------------------------------------------------------------

@pytest.mark.parametrize("pattern,first,stride", [(1, 0, 2), (2, 1, 2), (4, 1, 4), (6, 3, 4), (7, 0, 1)])
def test_gather_mask_reads_only_the_valid_box(pattern, first, stride):
    x = _x(21, (4, 8))
    w = 8 // stride
    body = f"g = pl.tile.gather_mask(pl.load(x, [0, 0], [4, 8], [3, 5]), mask_pattern={pattern})"
    out = _run(_src(body, "g", out_shape=(4, w), x_shape=(4, 8)), [x], (4, w))
    sel = x[:3, first:5:stride]                  # the selected columns below the valid 5
    want = np.full((4, w), -7.0, np.float32)
    want[:3, :sel.shape[1]] = sel
    np.testing.assert_array_equal(out, want)


def test_gather_mask_is_zero_outside_its_valid_box():
    x = _x(22, (4, 8))
    body = ("g = pl.tile.gather_mask(pl.load(x, [0, 0], [4, 8], [3, 5]), mask_pattern=2)\n"
            "        f = pl.set_validshape(g, 4, 4)")
    out = _run(_src(body, "f", out_shape=(4, 4), x_shape=(4, 8)), [x], (4, 4))
    want = np.zeros((4, 4), np.float32)
    want[:3, :2] = x[:3, 1:5:2]
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("pattern,expr", [(1, "(n + 1) // 2"), (2, "n // 2"), (5, "(n + 1) // 4"), (7, "n")])
def test_gather_mask_run_time_valid_columns(pattern, expr):
    x = _x(23, (4, 8))
    stride = {1: 2, 2: 2, 5: 4, 7: 1}[pattern]
    first = {1: 0, 2: 1, 5: 2, 7: 0}[pattern]
    body = f"g = pl.tile.gather_mask(pl.load(x, [0, 0], [4, 8], [2, n]), mask_pattern={pattern})"
    src = _src(body, "g", out_shape=(4, 8 // stride), x_shape=(4, 8), scalars="n")
    text = ir.python_print(pl.parse_program(src, "k.py"))
    assert f"pl.TileView(valid_shape=[2, {expr}])" in text, text
    for n in (0, 3, 6, 8):
        out = _run(src, [x], (4, 8 // stride), (n,))
        sel = x[:2, first:n:stride]
        want = np.full((4, 8 // stride), -7.0, np.float32)
        want[:2, :sel.shape[1]] = sel
        np.testing.assert_array_equal(out, want, err_msg=f"n={n}")


def test_gather_mask_valid_type_round_trips():
    body = "g = pl.tile.gather_mask(pl.load(x, [0, 0], [4, 8], [3, n]), mask_pattern=3)"
    prog = pl.parse_program(_src(body, "g", out_shape=(4, 2), x_shape=(4, 8), scalars="n"), "k.py")
    text = ir.python_print(prog)
    assert ir.structural_equal_explain(pl.parse_program(text), prog)[0]


def test_gather_mask_of_a_full_tile_has_no_valid_shape():
    body = "g = pl.tile.gather_mask(pl.load(x, [0, 0], [4, 8]), mask_pattern=1)"
    text = ir.python_print(pl.parse_program(_src(body, "g", out_shape=(4, 4), x_shape=(4, 8)), "k.py"))
    assert "valid_shape" not in text, text


# ---- scatter_mask -----------------------------------------------------------------------------------

def test_scatter_mask_writes_only_the_valid_box_of_src():
    x = _x(24, (4, 8))
    body = ("d = pl.load(x, [0, 0], [4, 8])\n"
            "        s = pl.mul(pl.load(x, [0, 4], [4, 4], [2, 3]), 10.0)\n"
            "        r = pl.tile.scatter_mask(d, s, mask_pattern=2)")
    out = _run(_src(body, "r", out_shape=(4, 8), x_shape=(4, 8)), [x], (4, 8))
    want = x.copy()
    want[:2, 1:6:2] = x[:2, 4:7] * 10.0          # odd columns 1, 3, 5 of rows 0, 1
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_scatter_mask_keeps_dst_valid_shape():
    body = ("d = pl.load(x, [0, 0], [4, 8], [3, 8])\n"
            "        r = pl.tile.scatter_mask(d, pl.load(x, [0, 0], [4, 4], [2, 2]), mask_pattern=1)")
    text = ir.python_print(pl.parse_program(_src(body, "r", out_shape=(4, 8), x_shape=(4, 8)), "k.py"))
    line = next(t for t in text.splitlines() if "scatter_mask(" in t)
    assert "valid_shape=[3, 8]" in line, line


# ---- scatter_update ---------------------------------------------------------------------------------

def _scatter_update_src(idx_valid, src_valid):
    iv = f", {idx_valid}" if idx_valid else ""
    sv = f", {src_valid}" if src_valid else ""
    body = ("d = pl.load(x, [0, 0], [8, 4])\n"
            f"        i = pl.load(y, [0, 0], [2, 2]{iv})\n"
            f"        s = pl.mul(pl.load(x, [0, 0], [4, 4]{sv}), 10.0)\n"
            "        r = pl.tile.scatter_update(d, i, s)")
    return _src(body, "r", out_shape=(8, 4), x_shape=(8, 4), y="[2, 2], pl.INT32")


def test_scatter_update_reads_only_the_valid_index_box():
    x = _x(25, (8, 4))
    idx = _ints((2, 2), 99, [[5, 2]])             # row 1 is outside the index's valid box
    out = _run(_scatter_update_src("[1, 2]", ""), [x, idx], (8, 4))
    want = x.copy()
    want[5], want[2] = x[0] * 10.0, x[1] * 10.0
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_scatter_update_copies_only_the_valid_box_of_src():
    x = _x(26, (8, 4))
    idx = _ints((2, 2), 0, [[6, 1], [6, 99]])     # k = 3 is past src's 3 valid rows: its index is not read
    out = _run(_scatter_update_src("", "[3, 2]"), [x, idx], (8, 4))
    want = x.copy()
    want[6, :2], want[1, :2] = x[0, :2] * 10.0, x[1, :2] * 10.0
    want[6, :2] = x[2, :2] * 10.0                 # row 6 twice: the last write wins
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_scatter_update_index_inside_the_box_is_still_checked():
    idx = _ints((2, 2), 0, [[0, 8]])
    p = pypto.compile(pl.parse_program(_scatter_update_src("[1, 2]", ""), "k.py"))
    try:
        with pytest.raises(Exception, match=r"k.py:\d+: scatter_update of tile 'd' with indices from tile 'i': row 8 is outside \[0, 8\)"):
            p(_x(0, (8, 4)), idx, np.zeros((8, 4), np.float32), race_check=True)
    finally:
        p.close()


def test_kernel_cpp_compiles_warning_free(tmp_path):
    from pypto._core import kernel_cpu
    from pypto.runtime import include_dir, kernel_include_dir
    body = ("d = pl.load(x, [0, 0], [8, 4])\n"
            "        i = pl.load(y, [0, 0], [2, 2], [1, n])\n"
            "        s = pl.load(x, [0, 0], [4, 4], [n, 3])\n"
            "        g = pl.tile.gather_mask(s, mask_pattern=1)\n"
            "        m = pl.tile.scatter_mask(s, g, mask_pattern=1)\n"
            "        r = pl.tile.scatter_update(d, i, m)")
    src = _src(body, "r", out_shape=(8, 4), x_shape=(8, 4), y="[2, 2], pl.INT32", scalars="n")
    path = tmp_path / "k.cpp"
    path.write_text(kernel_cpu.generate(codegen.run_pipeline(pl.parse_program(src, "k.py")), "k"))
    r = subprocess.run(["g++", "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-I" + include_dir(),
                        "-I" + kernel_include_dir(), "-c", str(path), "-o", str(tmp_path / "k.o")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
