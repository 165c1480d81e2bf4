"""Scalar `& | ^ << >> ~` on integers, with Python's meaning wrapped to the dtype (as + - * are):
a negative shift count fails the run at its line (Python's ValueError), a count of the width or
more shifts everything out (`>>` of a negative value leaves -1), narrow types wrap (UINT8 200 << 1
is 144), and float or bool operands are refused when parsed. Before, each was "unsupported
operator". The differential fuzzer (scalar_expr_fuzz.py) covers random expressions of them."""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto.errors import PyptoError
from pypto.runtime.loader import RunError

N = 12
KERNEL = f'''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Scalar[pl.INT32], u: pl.Scalar[pl.UINT8], n: pl.Scalar[pl.INT64],
          c: pl.Out[pl.Tensor[[{N}], pl.INT64]]) -> pl.Tensor[[{N}], pl.INT64]:
        BODY
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Scalar[pl.INT32], u: pl.Scalar[pl.UINT8], n: pl.Scalar[pl.INT64],
             c: pl.Out[pl.Tensor[[{N}], pl.INT64]]) -> pl.Tensor[[{N}], pl.INT64]:
        c = self.k(a, u, n, c)
        return c
'''
ORCH = f'''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def put(self, v: pl.Scalar[pl.INT64], i: pl.Scalar[pl.INDEX],
            c: pl.InOut[pl.Tensor[[{N}], pl.INT64]]) -> pl.Tensor[[{N}], pl.INT64]:
        c = pl.write(c, [i], v)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Scalar[pl.INT32], u: pl.Scalar[pl.UINT8], n: pl.Scalar[pl.INT64],
             c: pl.InOut[pl.Tensor[[{N}], pl.INT64]]) -> pl.Tensor[[{N}], pl.INT64]:
        BODY
        return c
'''
# a literal is INDEX (int64): `u << 1` is computed in int64; `pl.cast(1, pl.UINT8)` keeps it in UINT8
EXPRS = ["a & 12", "a | 3", "a ^ -1", "~a", "u << pl.cast(1, pl.UINT8)", "u >> 3", "~u", "a << n", "a >> n", "a & n",
         "(a << pl.cast(31, pl.INT32)) >> pl.cast(31, pl.INT32)", "1 << n | a & 7 ^ 2"]


def _want(a, u, n):
    u8 = lambda x: x & 0xFF
    shl = lambda x, k, bits, signed: 0 if k >= bits else _wrap(x << k, bits, signed)
    return [a & 12, a | 3, a ^ -1, ~a, u8(u << 1), u >> 3, u8(~u), shl(a, n, 64, True), a >> min(n, 63), a & n,
            _wrap(_wrap(a << 31, 32, True) >> 31, 32, True), (1 << n) | ((a & 7) ^ 2) if n < 63 else None]


def _wrap(x, bits, signed):
    x &= (1 << bits) - 1
    return x - (1 << bits) if signed and x >> (bits - 1) else x


def _program(side):
    if side == "kernel":
        body = "\n        ".join(f"c = pl.write(c, [{i}], pl.cast({e}, pl.INT64))" for i, e in enumerate(EXPRS))
        return pypto.compile(pl.parse_program(KERNEL.replace("BODY", body), "bitwise_kernel.py"))
    body = "\n        ".join(f"c = self.put(pl.cast({e}, pl.INT64), {i}, c)" for i, e in enumerate(EXPRS))
    return pypto.compile(pl.parse_program(ORCH.replace("BODY", body), "bitwise_orch.py"))


@pytest.fixture(scope="module", params=["kernel", "orchestration"])
def program(request):
    return request.param, _program(request.param)


@pytest.mark.parametrize("a,u,n", [(5, 200, 3), (-7, 255, 0), (2147483647, 1, 31), (-2147483648, 128, 62),
                                   (-1, 0, 63), (12345, 77, 64), (-3, 9, 1000)])
def test_values_are_pythons_wrapped_to_the_dtype(program, a, u, n):
    _, prog = program
    c = np.zeros(N, np.int64)
    prog(a, u, n, c)
    want = _want(a, u, n)
    # `a << n` is computed in INT64 (n is INT64: the operands promote), `~u` and `u << 1` in UINT8
    want[7] = 0 if n >= 64 else _wrap(a << n, 64, True)
    want[11] = _wrap((0 if n >= 64 else _wrap(1 << n, 64, True)) | ((a & 7) ^ 2), 64, True)
    assert [int(x) for x in c] == want


def test_a_negative_shift_count_fails_the_run_at_its_line(program):
    side, prog = program
    with pytest.raises(RunError) as e:
        prog(5, 1, -1, np.zeros(N, np.int64))
    msg = str(e.value)
    assert "negative shift count at run time" in msg, msg
    assert (f"bitwise_{'kernel' if side == 'kernel' else 'orch'}.py:") in msg, msg


@pytest.mark.parametrize("expr,message,help", [
    ("pl.cast(a, pl.FP32) & 1", "operator '&' needs integer operands, got FP32", "pl.cast a float"),
    ("(a > 0) | (n > 0)", "operator '|' needs integer operands, got BOOL", "use and / or / not"),
    ("~(a > 0)", "operator '~' needs an integer operand", "use not"),
    ("a ** 2", "** is only computed between compile-time numbers", "multiply (x * x)"),
])
def test_non_integer_operands_are_refused_when_parsed(expr, message, help):
    with pytest.raises(PyptoError) as e:
        pl.parse_program(ORCH.replace("BODY", f"c = self.put(pl.cast({expr}, pl.INT64), 0, c)"), "bad.py")
    assert message in e.value.message and help in (e.value.help or ""), (e.value.message, e.value.help)
    assert e.value.line == 16


def test_literal_shifts_are_compile_time_constants():
    text = '''
import pypto.language as pl
K = 3


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[1 << 4, 8], pl.FP32], y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        y = pl.store(pl.load(x, [0, 0], [2 << K, 8 | 0]), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 8], pl.FP32], y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        w = pl.array.create(1 << K, pl.INT32)
        w[~-2] = 1
        y = self.k(x, y)
        return y
'''
    prog = pl.parse_program(text, "lits.py")
    from pypto import ir
    printed = ir.python_print(prog)
    assert "x: pl.Tensor[[16, 8], pl.FP32]" in printed and "pl.array.create(8, pl.INT32)" in printed, printed
    x = np.arange(128, dtype=np.float32).reshape(16, 8)
    y = np.zeros_like(x)
    pypto.compile(prog)(x, y)
    np.testing.assert_array_equal(y, x)
    with pytest.raises(PyptoError) as e:     # an offset of literal shifts is checked when parsed, as a literal is
        pl.parse_program(text.replace("pl.load(x, [0, 0],", "pl.load(x, [1 << 1, 0],"), "lits.py")
    assert "tile.load: block [2, 18) of dimension 0 is outside the tensor shape [16, 8]" in e.value.message
