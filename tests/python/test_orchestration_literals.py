"""Constants that have no plain C++ literal, used by orchestration and HOST code end to end.

INT64_MIN (``-9223372036854775808`` would negate an out-of-range literal), integers beyond
int32, ``-(-7)`` (not the decrement ``--7``), NaN and infinities (``nanf`` / ``inff`` are not
C++), float constants that overflow or underflow FP32, and negative zero: passed as kernel
scalars, compared, and used as loop bounds. The generated C++ must compile with
``g++ -Wall -Werror`` and the kernels must see exactly the FP32 / INT64 values the constants
denote (NumPy's float32 rounding, Python's integers).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import codegen, host

from codegen_test_util import compile_cpp

INT64_MIN = -9223372036854775808
NAN = math.nan
INF = math.inf
MINUS_SEVEN = -7


@pl.program
class Literals:
    @pl.function(type=pl.FunctionType.InCore)
    def fill_i(self, n: pl.Scalar[pl.INT64], o: pl.Out[pl.Tensor[[4], pl.INT64]]) -> pl.Tensor[[4], pl.INT64]:
        o = pl.store(pl.tile.full([4], pl.INT64, n), [0], o)
        return o

    @pl.function(type=pl.FunctionType.InCore)
    def fill_f(self, s: pl.Scalar[pl.FP32], o: pl.Out[pl.Tensor[[4], pl.FP32]]) -> pl.Tensor[[4], pl.FP32]:
        o = pl.store(pl.tile.full([4], pl.FP32, s), [0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, n: pl.Scalar[pl.INT64],
             i0: pl.Out[pl.Tensor[[4], pl.INT64]], i1: pl.Out[pl.Tensor[[4], pl.INT64]],
             i2: pl.Out[pl.Tensor[[4], pl.INT64]], i3: pl.Out[pl.Tensor[[4], pl.INT64]],
             i4: pl.Out[pl.Tensor[[4], pl.INT64]], i5: pl.Out[pl.Tensor[[4], pl.INT64]],
             i6: pl.Out[pl.Tensor[[4], pl.INT64]],
             f0: pl.Out[pl.Tensor[[4], pl.FP32]], f1: pl.Out[pl.Tensor[[4], pl.FP32]],
             f2: pl.Out[pl.Tensor[[4], pl.FP32]], f3: pl.Out[pl.Tensor[[4], pl.FP32]],
             f4: pl.Out[pl.Tensor[[4], pl.FP32]], f5: pl.Out[pl.Tensor[[4], pl.FP32]],
             f6: pl.Out[pl.Tensor[[4], pl.FP32]]) -> pl.Tensor[[4], pl.FP32]:
        i0 = self.fill_i(-9223372036854775808, i0)       # INT64_MIN as written
        i1 = self.fill_i(5000000000, i1)                 # beyond int32
        i2 = self.fill_i(-MINUS_SEVEN, i2)               # Neg of a negative literal
        i3 = self.fill_i(INT64_MIN + n, i3)              # INT64_MIN in arithmetic
        if n < 5000000000:                               # compares
            k = 1
        elif n > INT64_MIN:
            k = 2
        else:
            k = 3
        i4 = self.fill_i(k, i4)
        total = INT64_MIN
        for j in pl.range(5000000000, 5000000003):       # loop bounds beyond int32
            total = total + 1
        i5 = self.fill_i(total, i5)
        i6 = self.fill_i(-5000000000 - n, i6)
        f0 = self.fill_f(NAN, f0)
        f1 = self.fill_f(-INF, f1)
        f2 = self.fill_f(1e39, f2)                        # rounds to +inf as an FP32
        f3 = self.fill_f(-0.0, f3)
        f4 = self.fill_f(1e-50, f4)                       # underflows to 0 as an FP32
        f5 = self.fill_f(0.1, f5)
        f6 = self.fill_f(INF, f6)
        return f6


def _expected(n):
    ints = [INT64_MIN, 5000000000, 7, INT64_MIN + n, 1 if n < 5000000000 else 2, INT64_MIN + 3, -5000000000 - n]
    with np.errstate(over="ignore"):   # NumPy's FP32 rounding of the constants is the reference
        floats = [np.nan, -np.inf, np.float32(1e39), -0.0, np.float32(1e-50), np.float32(0.1), np.inf]
    return ints, floats


def test_orchestration_code_spells_the_constants_in_valid_cpp():
    code = codegen.generate_orchestration(Literals, "main").code
    for want in ("INT64_MIN", "INT64_C(5000000000)", "(-(-7))", "std::numeric_limits<float>::quiet_NaN()",
                 "(-std::numeric_limits<float>::infinity())", "-0.0f", "#include <limits>"):
        assert want in code, want
    for bad in ("nanf", "inff", "9223372036854775808", "(--"):
        assert bad not in code, bad
    ok, out = compile_cpp(code, "literals")
    assert ok, out + "\n" + code


@pytest.mark.parametrize("n", [0, 7, 1 << 40])
def test_kernels_receive_the_exact_values(n):
    prog = pypto.compile(Literals)
    ints = [np.zeros(4, np.int64) for _ in range(7)]
    floats = [np.zeros(4, np.float32) for _ in range(7)]
    prog(n, *ints, *floats)
    want_i, want_f = _expected(n)
    for got, want in zip(ints, want_i):
        np.testing.assert_array_equal(got, np.full(4, want, np.int64))
    for got, want in zip(floats, want_f):
        np.testing.assert_array_equal(got, np.full(4, want, np.float32))   # NaN == NaN here
    assert np.all(np.signbit(floats[3])), "-0.0 must stay negative zero"
    assert not np.any(np.signbit(floats[4]))


# -- the same constants in a HOST orchestration (pypto.host), passed to a chip-level target ------

@pl.program
class HostLiterals:
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, s: pl.Scalar[pl.FP32], n: pl.Scalar[pl.INT64], o: pl.Out[pl.Tensor[[4], pl.FP32]],
             p: pl.Out[pl.Tensor[[4], pl.INT64]]) -> tuple[pl.Tensor[[4], pl.FP32], pl.Tensor[[4], pl.INT64]]:
        o = pl.store(pl.tile.full([4], pl.FP32, s), [0], o)
        p = pl.store(pl.tile.full([4], pl.INT64, n), [0], p)
        return o, p

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_fill(self, s: pl.Scalar[pl.FP32], n: pl.Scalar[pl.INT64], o: pl.Out[pl.Tensor[[4], pl.FP32]],
                  p: pl.Out[pl.Tensor[[4], pl.INT64]]) -> tuple[pl.Tensor[[4], pl.FP32], pl.Tensor[[4], pl.INT64]]:
        o, p = self.fill(s, n, o, p)
        return o, p

    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)
    def host_main(self, o1: pl.Out[pl.Tensor[[4], pl.FP32]], p1: pl.Out[pl.Tensor[[4], pl.INT64]], o2: pl.Out[pl.Tensor[[4], pl.FP32]], p2: pl.Out[pl.Tensor[[4], pl.INT64]]) -> pl.Tensor[[4], pl.FP32]:
        o1, p1, t = pl.submit(self.chip_fill, NAN, -9223372036854775808, o1, p1)
        o2, p2, t2 = pl.submit(self.chip_fill, -INF, -MINUS_SEVEN * 5000000000, o2, p2, deps=[t])
        return o2


def test_host_code_spells_the_constants_in_valid_cpp():
    code = host.generate_host_orchestration(HostLiterals, "host_main").code
    for want in ("INT64_MIN", "std::numeric_limits<float>::quiet_NaN()", "(-std::numeric_limits<float>::infinity())",
                 "#include <limits>"):
        assert want in code, want
    ok, out = compile_cpp(code, "host_literals")
    assert ok, out + "\n" + code


def test_host_program_passes_the_exact_values():
    prog = host.compile_host(HostLiterals, chips=2)
    o1, o2 = np.zeros(4, np.float32), np.zeros(4, np.float32)
    p1, p2 = np.zeros(4, np.int64), np.zeros(4, np.int64)
    stats = prog(o1, p1, o2, p2)
    assert stats["tasks_executed"] == 2
    assert np.all(np.isnan(o1))
    np.testing.assert_array_equal(p1, np.full(4, INT64_MIN, np.int64))
    np.testing.assert_array_equal(o2, np.full(4, -np.inf, np.float32))
    np.testing.assert_array_equal(p2, np.full(4, 35000000000, np.int64))
