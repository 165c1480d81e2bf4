"""`pl.const(value, dtype)` (spec reference_ops.md §10): a compile-time number typed as `dtype`, the
reference's way to write a literal into an INT32 tile (`pl.tile.write` needs exactly the tile dtype,
and a bare int literal is INDEX)."""
import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import PyptoError

from e2e_util import kernel_program, kernel_program_text, run_kernel_program

S = [4, 8]


def test_const_writes_typed_literals_into_tiles_e2e_numpy():
    body = ["pl.tile.write(ti, [1, 2], pl.const(-7, pl.INT32))",
            "pl.tile.write(ti, [3, 7], pl.const(2147483647, pl.INT32))",
            "pl.tile.write(tf, [0, 0], pl.const(2, pl.FP32))",
            "tg = pl.adds(tf, pl.const(0.5, pl.FP32))"]
    compiled = kernel_program([("i", S, "INT32"), ("f", S, "FP32")],
                              [("oi", S, "INT32", "ti"), ("of", S, "FP32", "tg")], body=body)
    rng = np.random.default_rng(13)
    vi = rng.integers(-100, 100, S).astype(np.int32)
    vf = rng.standard_normal(S).astype(np.float32)
    outs = run_kernel_program(compiled, {"i": vi, "f": vf})
    want_i, want_f = vi.copy(), vf.copy()
    want_i[1, 2], want_i[3, 7], want_f[0, 0] = -7, 2147483647, 2.0
    np.testing.assert_array_equal(outs["oi"], want_i)
    np.testing.assert_allclose(outs["of"], want_f + np.float32(0.5), rtol=0, atol=0)


def test_const_is_typed_and_round_trips():
    text = kernel_program_text([("i", S, "INT32")], [("oi", S, "INT32", "ti")],
                               body=["pl.tile.write(ti, [0, 0], pl.const(3, pl.INT32))"])
    prog = pl.parse_program(text)
    printed = ir.python_print(prog)
    assert "pl.cast(3, pl.INT32)" in printed
    assert ir.structural_equal_explain(pl.parse_program(printed), prog)[0]


@pytest.mark.parametrize("expr,message", [
    ("pl.const(1.5, pl.INT32)", "pl.const: 1.5 is not an integer, but the dtype is INT32"),
    ("pl.const(300, pl.UINT8)", "pl.const: 300 does not fit in UINT8 (0..255)"),
    ("pl.const(-1, pl.UINT32)", "pl.const: -1 does not fit in UINT32"),
    ("pl.const(True, pl.INT32)", "pl.const needs a compile-time number, got 'True'"),
    ("pl.const(ti, pl.INT32)", "pl.const needs a compile-time number, got 'ti'"),
    ("pl.const(1)", "pl.const takes a number and a dtype"),
    ("pl.const(1, pl.BOOL)", "pl.const needs an integer or float dtype, got BOOL"),
])
def test_const_misuse_is_located(expr, message):
    text = kernel_program_text([("i", S, "INT32")], [("oi", S, "INT32", "ti")], body=["x = " + expr])
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(text, "t.py")
    line = next(n for n, t in enumerate(text.splitlines(), 1) if t.strip().startswith("x = "))
    assert message in ei.value.message, ei.value.message
    assert (ei.value.file, ei.value.line) == ("t.py", line)
