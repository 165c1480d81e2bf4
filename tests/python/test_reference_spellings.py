"""Reference spellings of reference_ops.md §2 that existing ops take: `pl.max` / `pl.min` with two tiles stay
element-wise (the reduction needs a constant axis), `pl.rsqrt(t, tmp)` accepts the scratch tile, and
`pl.move(..., blayout=, slayout=)` accepts the layout hints. All are NumPy-checked, and each misuse is located."""
import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import PyptoError

from e2e_util import kernel_program, kernel_program_text, run_kernel_program

S, ROW = [8, 16], [8, 1]
IN = [("a", S, "FP32"), ("b", S, "FP32"), ("r", ROW, "FP32")]


def test_reference_spellings_e2e_numpy():
    outs = [("omax", S, "FP32", "pl.max(ta, tb)"), ("omin", S, "FP32", "pl.min(ta, tr)"),
            ("ored", ROW, "FP32", "pl.max(ta, axis=1, keepdim=True)"),
            ("orsq", S, "FP32", "pl.rsqrt(tb, tb)"),
            ("omov", S, "FP32", "pl.move(ta, target_memory=pl.MemorySpace.Vec, blayout=1, slayout=2)")]
    compiled = kernel_program(IN, outs)
    rng = np.random.default_rng(7)
    v = {"a": rng.standard_normal(S).astype(np.float32), "b": rng.uniform(0.5, 4, S).astype(np.float32),
         "r": rng.standard_normal(ROW).astype(np.float32)}
    got = run_kernel_program(compiled, v)
    np.testing.assert_array_equal(got["omax"], np.maximum(v["a"], v["b"]))
    np.testing.assert_array_equal(got["omin"], np.minimum(v["a"], v["r"]))
    np.testing.assert_array_equal(got["ored"], v["a"].max(axis=1, keepdims=True))
    np.testing.assert_allclose(got["orsq"], 1 / np.sqrt(v["b"]), rtol=1e-6)
    np.testing.assert_array_equal(got["omov"], v["a"])


@pytest.mark.parametrize("expr,printed", [
    ("pl.max(ta, tb)", "pl.maximum(ta, tb)"),
    ("pl.min(ta, pl.exp(tb))", "pl.minimum(ta, pl.exp(tb))"),
    ("pl.max(ta, 1)", "pl.max(ta, axis=1)"),                  # a constant second argument is the axis
    ("pl.rsqrt(ta, ta)", "pl.rsqrt(ta)"),
    ("pl.move(ta, target_memory=pl.MemorySpace.Vec, blayout=1, slayout=2)",
     "pl.move(ta, target_memory=pl.MemorySpace.Vec)"),
])
def test_spelling_prints_as_the_op_it_means_and_round_trips(expr, printed):
    prog = pl.parse_program(kernel_program_text(IN, [("o", S, "FP32", "ta")], body=["x = " + expr]))
    text = ir.python_print(prog)
    assert f"= {printed}" in text, text
    assert ir.structural_equal_explain(pl.parse_program(text), prog)[0]


@pytest.mark.parametrize("expr,message,help", [
    ("pl.max(ta, s)", "pl.max(t, s) with a run-time scalar s is ambiguous", "pl.maximums(t, s)"),
    ("pl.rsqrt(ta, tr)", "pl.rsqrt: 'tmp' must have the operand's type", "scratch"),
    ("pl.move(ta, target_memory=pl.MemorySpace.Vec, blayout=ta)", "'blayout=' must be a compile-time constant", None),
])
def test_misuse_is_located(expr, message, help):
    text = kernel_program_text(IN, [("o", S, "FP32", "ta")], scalars=[("s", "FP32")], body=["x = " + expr])
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(text, "t.py")
    line = next(n for n, t in enumerate(text.splitlines(), 1) if t.strip().startswith("x = "))
    assert message in ei.value.message, ei.value.message
    assert (ei.value.file, ei.value.line) == ("t.py", line)
    if help:
        assert help in ei.value.help, ei.value.help


def test_scatter_update_dim_first_form_e2e_numpy():
    """`pl.tile.scatter_update(input, dim, index, src)`, the reference's other argument order (§12)."""
    compiled = kernel_program([("a", S, "FP32"), ("idx", [1, 4], "INT32"), ("src", [4, 16], "FP32")],
                              [("o1", S, "FP32", "pl.tile.scatter_update(pl.tile.muls(ta, 1.0), -2, tidx, tsrc)"),
                               ("o2", S, "FP32", "pl.tile.scatter_update(ta, tidx, tsrc, dim=-2)")])
    rng = np.random.default_rng(12)
    v = {"a": rng.standard_normal(S).astype(np.float32), "idx": np.array([[5, 0, 7, 2]], np.int32),
         "src": rng.standard_normal([4, 16]).astype(np.float32)}
    got = run_kernel_program(compiled, v)
    want = v["a"].copy()
    want[v["idx"].ravel()] = v["src"]
    np.testing.assert_array_equal(got["o1"], want)
    np.testing.assert_array_equal(got["o2"], want)


def test_scatter_update_dim_first_form_keeps_the_dim_check():
    text = kernel_program_text([("a", S, "FP32"), ("idx", [1, 4], "INT32"), ("src", [4, 16], "FP32")],
                               [("o", S, "FP32", "ta")], body=["x = pl.tile.scatter_update(ta, 1, tidx, tsrc)"])
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(text, "t.py")
    assert "tile.scatter_update: only dim=-2 is currently supported" in ei.value.message
    assert ei.value.file == "t.py"


def test_tile_subscript_sugar_e2e_numpy():
    """`t[i, j]` reads an element and `t[a:b, :]` / `t[r:r + h, c:d]` slice a tile (reference_ops.md §9, §10)."""
    compiled = kernel_program([("a", S, "FP32")],
                              [("o1", S, "FP32", "pl.adds(ta, ta[1, 2])"),
                               ("o2", [4, 16], "FP32", "ta[4:8, :]"),
                               ("o3", [2, 8], "FP32", "ta[r:r + 2, 8:16]"),
                               ("o4", S, "FP32", "pl.muls(ta, pl.read(ta, [r, 3]))")],
                              scalars=[("r", "INDEX")])
    v = {"a": np.random.default_rng(3).standard_normal(S).astype(np.float32)}
    got = run_kernel_program(compiled, v, scalars=[5])
    np.testing.assert_array_equal(got["o1"], v["a"] + v["a"][1, 2])
    np.testing.assert_array_equal(got["o2"], v["a"][4:8, :])
    np.testing.assert_array_equal(got["o3"], v["a"][5:7, 8:16])
    np.testing.assert_array_equal(got["o4"], v["a"] * v["a"][5, 3])     # pl.read dispatches to tile.read


@pytest.mark.parametrize("expr,printed", [("ta[1, 2]", "pl.tile.read(ta, [1, 2])"),
                                          ("pl.read(ta, [1, 2])", "pl.tile.read(ta, [1, 2])"),
                                          ("ta[0:4, :]", "pl.slice(ta, [4, 16], [0, 0])")])
def test_tile_subscript_sugar_round_trips(expr, printed):
    prog = pl.parse_program(kernel_program_text(IN, [("o", S, "FP32", "ta")], body=["x = " + expr]))
    text = ir.python_print(prog)
    assert printed in text, text
    assert ir.structural_equal_explain(pl.parse_program(text), prog)[0]


@pytest.mark.parametrize("expr,message", [
    ("ta[1]", "tile.read: indices count (1) must match tile rank (2)"),
    ("ta[0:4, 3, 1]", "a tile slice needs one 'start:stop' or index per axis (2)"),   # ta[0:4, 3] drops axis 1
    ("ta[0:4:2, :]", "a tile slice has no step"),
    ("ta[s:8, :]", "the extent of slice 's:8' is a run-time value, which needs a constant start"),
    ("ta[2:1, :]", "the extent of slice '2:1' must be positive"),
])
def test_tile_subscript_misuse_is_located(expr, message):
    text = kernel_program_text(IN, [("o", S, "FP32", "ta")], scalars=[("s", "INDEX")], body=["x = " + expr])
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(text, "t.py")
    line = next(n for n, t in enumerate(text.splitlines(), 1) if t.strip().startswith("x = "))
    assert message in ei.value.message, ei.value.message
    assert (ei.value.file, ei.value.line) == ("t.py", line)


def test_tile_subscript_assignment_e2e_numpy():
    """`t[i, j] = v` writes the element in place; `t[a:b, c:d] = s` assembles s into t (reference sugar)."""
    body = ["tb[1, 2] = pl.const(-3.5, pl.FP32)",
            "tb[r, 0] = ta[0, 0]",
            "tc = pl.tile.slice(ta, [2, 8], [0, 0])",
            "tb[4:6, 8:16] = tc"]
    compiled = kernel_program([("a", S, "FP32"), ("b", S, "FP32")], [("o", S, "FP32", "tb")],
                              scalars=[("r", "INDEX")], body=body)
    rng = np.random.default_rng(5)
    v = {"a": rng.standard_normal(S).astype(np.float32), "b": rng.standard_normal(S).astype(np.float32)}
    got = run_kernel_program(compiled, v, scalars=[6])
    want = v["b"].copy()
    want[1, 2], want[6, 0] = -3.5, v["a"][0, 0]
    want[4:6, 8:16] = v["a"][0:2, 0:8]
    np.testing.assert_array_equal(got["o"], want)


@pytest.mark.parametrize("stmt,message", [
    ("ta[0:4, 3] = ta", "a tile slice target needs one 'start:stop' per axis (2) and no step"),
    ("ta[0:4, :] = s", "a tile slice is assigned a tile, got"),
    ("ta[1, 2] = 1", "tile.write: value Scalar[INDEX] must have the tile's dtype FP32"),
])
def test_tile_subscript_assignment_misuse_is_located(stmt, message):
    text = kernel_program_text(IN, [("o", S, "FP32", "ta")], scalars=[("s", "FP32")], body=[stmt + "  # here"])
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(text, "t.py")
    line = next(n for n, t in enumerate(text.splitlines(), 1) if t.endswith("# here"))
    assert message in ei.value.message, ei.value.message
    assert (ei.value.file, ei.value.line) == ("t.py", line)
