"""Python's int(), float(), bool(), abs() on DSL scalars, and `**` between compile-time numbers.
Before, each was "cannot call 'abs' in a DSL function" or "unsupported operator"."""
import importlib.util
import math

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import ir
from pypto.errors import PyptoError

import scalar_expr_fuzz as sf

INT64_MIN = -(1 << 63)


@pytest.mark.parametrize("side", ["kernel", "orchestration"])
def test_integer_builtins_agree_with_python(side):
    exprs = ["abs(a)", "abs(a - b)", "int(pl.cast(a, pl.FP32) / 4.0)", "pl.cast(bool(a), pl.INT64)",
             "abs(pl.cast(a, pl.INT8))", "abs(pl.cast(a, pl.UINT16))", "int(a) + int(2.9)", "abs(pl.cast(a > b, pl.BOOL))"]
    prog = pypto.compile(pl.parse_program(sf.program_text(exprs, side), "builtins_%s.py" % side))
    for a, b in ((5, 9), (-7, -7), (INT64_MIN, 0), (-128, 3), (70000, -1)):
        c = np.zeros(len(exprs), np.int64)
        prog(a, b, c)
        i8 = (a + 128) % 256 - 128
        want = [sf.wrap(abs(a)), sf.wrap(abs(a - b)), int(float(np.float32(a)) / 4.0), int(a != 0),
                (abs(i8) + 128) % 256 - 128, a % 65536, a + 2, int(a > b)]
        assert list(c) == want, (a, b, list(c), want)


KERNEL = '''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[1, 8], pl.FP32], s: pl.Scalar[pl.FP32], y: pl.Out[pl.Tensor[[1, 8], pl.FP32]]) -> pl.Tensor[[1, 8], pl.FP32]:
        v = pl.tensor.read(x, [0, 0])
        t = pl.tile.full([1, 8], pl.FP32, 0.0)
        t = pl.write(t, [0, 0], abs(v))
        t = pl.write(t, [0, 1], s)
        t = pl.write(t, [0, 2], float(int(v)))
        t = pl.write(t, [0, 3], float(2 ** 3) + 2 ** -2)
        y = pl.store(t, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[1, 8], pl.FP32], y: pl.Out[pl.Tensor[[1, 8], pl.FP32]]) -> pl.Tensor[[1, 8], pl.FP32]:
        v = x[0, 0]
        y = self.k(x, abs(v), y)
        return y
'''


@pytest.mark.parametrize("v", [-0.0, 0.0, -2.5, 3.75, -math.inf, math.nan, -1e30])
def test_float_abs_and_int_in_kernels_and_orchestrations(tmp_path, v):
    """abs of -0.0 is 0.0 (sign cleared) on both sides; int() truncates toward zero and
    saturates where Python would raise (pl.cast's rule)."""
    prog = pypto.compile(pl.parse_program(KERNEL, "float_builtins.py"))
    x = np.full((1, 8), v, np.float32)
    y = np.zeros((1, 8), np.float32)
    prog(x, y)
    for got in y[0, :2]:
        if math.isnan(v):
            assert math.isnan(got)
        else:
            assert got == abs(v) and not math.copysign(1.0, got) < 0, (v, y)
    want_int = 0 if math.isnan(v) else (-2**63 if v == -math.inf else int(v) if abs(v) < 2**63 else -2**63)
    assert y[0, 2] == np.float32(want_int)
    assert y[0, 3] == 8.25


def test_compile_time_calls_are_constants(tmp_path):
    """int(N / 2), 2 ** K, abs(-3), min(N, 16) are constants where one is needed (a tile shape)."""
    text = KERNEL.replace("t = pl.tile.full([1, 8], pl.FP32, 0.0)",
                          "t = pl.tile.full([int(N / 16), 2 ** K * abs(-1) + min(N, 0)], pl.FP32, 0.0)")
    text = text.replace("import pypto.language as pl\n", "import pypto.language as pl\nN = 16\nK = 3\n", 1)
    prog = pl.parse_program(text, "consts.py")
    printed = ir.python_print(prog)
    # the calls are folded when parsed; min stays as written (the printer's form), its value known
    assert "t: pl.Tile[[1, 8], pl.FP32] = pl.tile.full([1, 8 * 1 + min(16, 0)]" in printed, printed
    x = np.full((1, 8), -2.0, np.float32)
    y = np.zeros((1, 8), np.float32)
    pypto.compile(prog)(x, y)
    assert list(y[0, :4]) == [2.0, 2.0, -2.0, 8.25]


def test_printed_form_round_trips():
    prog = pl.parse_program(KERNEL, "float_builtins.py")
    text = ir.python_print(prog)
    assert "abs(" not in text and "max(v, -v) + 0.0" in text, text
    assert ir.structural_equal_explain(pl.parse_program(text), prog)[0]


@pytest.mark.parametrize("stmt,message", [
    ("u = abs(t)", "abs() needs a number or a bool, got a tile"),
    ("u = float(t)", "float() needs a number or a bool, got a tile"),
    ("u = int(s, 2)", "int() takes one scalar argument"),
    ("u = s ** 2", "** is only computed between compile-time numbers"),
    ("u = 2 ** 64", "does not fit in 64 bits"),
])
def test_misuse_is_a_located_error(stmt, message):
    text = KERNEL.replace("        y = pl.store(t, [0, 0], y)", "        " + stmt + "\n        y = pl.store(t, [0, 0], y)")
    with pytest.raises(PyptoError) as e:
        pl.parse_program(text, "bad_builtins.py")
    assert message in str(e.value) and "bad_builtins.py:" in str(e.value), str(e.value)
