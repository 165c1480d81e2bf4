"""Tile subscripts beyond constant windows (reference_ops.md §9): an integer index among slices drops
its axis (`t[0:8, 3]` is `pl.tile.slice(t, [8, 1], [0, 3], drop_dims=[1])`, a [1, 8] tile), and a
run-time extent from a constant start (`t[0:n, :]`) is a window to the end of the axis with a valid
extent; NumPy-checked with the race checker, type printed and re-parsed, misuse located.
"""
import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from test_kernel_valid_ops import _located, _run, _src, _x


@pytest.mark.parametrize("sub,out_shape,want_fn", [
    ("t[0:8, 3]", (1, 8), lambda x: x[0:8, 3][None, :]),
    ("t[4:12, 15]", (1, 8), lambda x: x[4:12, 15][None, :]),
    ("t[2, 0:16]", (1, 16), lambda x: x[2:3, :]),
    ("t[5, 4:8]", (1, 4), lambda x: x[5:6, 4:8]),
])
def test_an_index_drops_its_axis(sub, out_shape, want_fn):
    x = _x(41)
    body = f"t = pl.load(x, [0, 0], [16, 16])\n        c = {sub}"
    src = _src(body, "c", out_shape=out_shape)
    text = ir.python_print(pl.parse_program(src, "k.py"))
    assert f"pl.Tile[[{out_shape[0]}, {out_shape[1]}], pl.FP32" in text, text
    out = _run(src, [x], out_shape)
    np.testing.assert_array_equal(out, want_fn(x))


def test_a_dropped_slice_prints_and_round_trips():
    body = "t = pl.load(x, [0, 0], [16, 16])\n        c = t[0:8, n]"
    prog = pl.parse_program(_src(body, "c", out_shape=(1, 8), scalars="n"), "k.py")
    text = ir.python_print(prog)
    assert "drop_dims=[1]" in text, text
    assert ir.structural_equal_explain(pl.parse_program(text), prog)[0]


def test_a_run_time_index_drops_its_axis():
    x = _x(42)
    body = "t = pl.load(x, [0, 0], [16, 16])\n        c = t[0:8, n]"
    out = _run(_src(body, "c", out_shape=(1, 8), scalars="n"), [x], (1, 8), (11,))
    np.testing.assert_array_equal(out, x[0:8, 11][None, :])


@pytest.mark.parametrize("sub,out_shape,n,want_fn", [
    ("t[0:n, :]", (16, 16), 5, lambda x, o: o.__setitem__((slice(0, 5), slice(None)), x[:5])),
    ("t[4:n, 0:8]", (12, 8), 10, lambda x, o: o.__setitem__((slice(0, 6), slice(0, 8)), x[4:10, :8])),
    ("t[:, 2:n]", (16, 14), 9, lambda x, o: o.__setitem__((slice(None), slice(0, 7)), x[:, 2:9])),
])
def test_a_run_time_extent_is_a_valid_region(sub, out_shape, n, want_fn):
    x = _x(43)
    body = f"t = pl.load(x, [0, 0], [16, 16])\n        w = {sub}"
    src = _src(body, "w", out_shape=out_shape, scalars="n")
    text = ir.python_print(pl.parse_program(src, "k.py"))
    assert "pl.TileView(valid_shape=" in text, text
    out = _run(src, [x], out_shape, (n,))
    want = np.full(out_shape, -7.0, np.float32)
    want_fn(x, want)
    np.testing.assert_array_equal(out, want)


def test_a_run_time_extent_feeds_a_reduction_over_its_valid_rows():
    x = _x(44)
    body = "t = pl.load(x, [0, 0], [16, 16])\n        s = pl.col_sum(t[2:n, :])"
    out = _run(_src(body, "s", out_shape=(1, 16), scalars="n"), [x], (1, 16), (7,))
    np.testing.assert_allclose(out, x[2:7].sum(axis=0, keepdims=True), rtol=1e-5)


@pytest.mark.parametrize("sub,message", [
    ("t[r:n, :]", "the extent of slice 'r:n' is a run-time value, which needs a constant start"),
    ("t[r:, :]", "the extent of slice 'r:' is a run-time value, which needs a constant start"),
    ("t[0:8, 3, 1]", "a tile slice needs one 'start:stop' or index per axis (2)"),
    ("t[0:8:2, :]", "a tile slice has no step"),
])
def test_subscript_misuse_is_located(sub, message):
    body = f"t = pl.load(x, [0, 0], [16, 16])\n        w = {sub}"
    _located(_src(body, "w", scalars="n r"), f"w = {sub}", message)


def test_a_run_time_extent_past_the_axis_fails_the_run():
    import pypto
    body = "t = pl.load(x, [0, 0], [16, 16])\n        w = t[0:n, :]"
    p = pypto.compile(pl.parse_program(_src(body, "w", scalars="n"), "k.py"))
    try:
        with pytest.raises(Exception, match=r"valid extent 17 of axis 0 is outside \[0, 16\]"):
            p(_x(0), np.zeros((16, 16), np.float32), 17, race_check=True)
    finally:
        p.close()
