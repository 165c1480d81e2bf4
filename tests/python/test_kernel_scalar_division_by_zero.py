"""A kernel's integer scalar // and % (and integer /) with a zero divisor fail the run at the
expression's DSL line, as the orchestration's do and as Python raises ZeroDivisionError. They
gave 0 silently before (`pl.muls(t, N // 0)` stored zeros). Element-wise tile ops keep NumPy's 0
(reference_ops.md §3). Of compile-time integers (`N // 0`) it is a parse-time error. Non-zero
divisors keep Python's floor semantics; float scalars keep IEEE (x / 0.0 is inf)."""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto.errors import PyptoError
from pypto.runtime.loader import RunError

N = 16

PROGRAM = '''
import pypto.language as pl
N = 16

@pl.program
class ScalarDiv:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[N], pl.FP32], n: pl.Scalar[pl.INT64], d: pl.Scalar[pl.INT64],
          f: pl.Scalar[pl.FP32], c: pl.Out[pl.Tensor[[N], pl.FP32]]) -> pl.Tensor[[N], pl.FP32]:
        t = pl.load(a, [0], [N])
        t = pl.muls(t, EXPR)
        c = pl.store(t, [0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N], pl.FP32], n: pl.Scalar[pl.INT64], d: pl.Scalar[pl.INT64],
             f: pl.Scalar[pl.FP32], c: pl.Out[pl.Tensor[[N], pl.FP32]]) -> pl.Tensor[[N], pl.FP32]:
        c = self.k(a, n, d, f, c)
        return c
'''
EXPR_LINE = 11   # the line of `t = pl.muls(t, EXPR)` in PROGRAM

_programs = {}


def _run(expr, n, d, f=1.0):
    if expr not in _programs:
        _programs[expr] = pypto.compile(pl.parse_program(PROGRAM.replace("EXPR", expr), "scalar_div.py"))
    a = np.ones(N, np.float32)
    c = np.zeros(N, np.float32)
    _programs[expr](a, n, d, f, c)
    return c


@pytest.mark.parametrize("expr", ["n // d", "n % d", "(n + 1) % (d * 2)"])
def test_integer_division_by_zero_in_a_kernel_fails_at_its_line(expr):
    with pytest.raises(RunError, match=r"scalar_div\.py:%d: integer division or modulo by zero" % EXPR_LINE) as e:
        _run(expr, 7, 0)
    assert e.value.line == EXPR_LINE and e.value.file.endswith("scalar_div.py")


def test_integer_division_of_compile_time_values_by_zero_is_refused_when_parsed():
    # N // 0 of a module constant and a literal is a compile-time value, as Python computes it
    with pytest.raises(PyptoError, match=r"'N // 0' divides by zero") as e:
        pl.parse_program(PROGRAM.replace("EXPR", "N // 0"), "scalar_div.py")
    assert e.value.line == EXPR_LINE


@pytest.mark.parametrize("n, d", [(-100, 7), (100, -7), (-100, -7), (100, 7), (2 ** 62, 3)])
def test_non_zero_divisors_keep_python_floor_semantics(n, d):
    assert _run("n // d", n, d)[0] == np.float32(n // d)
    assert _run("n % d", n, d)[0] == np.float32(n % d)


def test_float_scalar_division_by_zero_stays_ieee():
    c = _run("f / (f - f)", 0, 0, 2.0)
    assert np.all(np.isinf(c)) and np.all(c > 0)
