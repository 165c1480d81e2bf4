"""FP32 scalar `//` and `%` follow Python (and NumPy's float32 floor_divide / mod) in kernels and
orchestrations: `//` from fmod, not floor(a / b), whose rounded quotient can reach the next
integer (1.0 // 0.1 was 10 in a kernel), an infinite dividend gives NaN (it was ±inf in an
orchestration), and a zero remainder takes the divisor's sign (-0.0 % 1.0 was -0.0 in a kernel).
A zero divisor keeps IEEE's result (Python raises). An orchestration's float `%` (it was refused)
is the same helper as the kernel's (pto2_float_mod)."""
import math
import random

import numpy as np
import pytest

import pypto
import pypto.language as pl

PROGRAM = '''
import pypto.language as pl

@pl.program
class FloatDiv:
    @pl.function(type=pl.FunctionType.InCore)
    def w(self, v: pl.Scalar[pl.FP32], i: pl.Scalar[pl.INDEX],
          c: pl.InOut[pl.Tensor[[4], pl.FP32]]) -> pl.Tensor[[4], pl.FP32]:
        c = pl.write(c, [i], v)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Scalar[pl.FP32], b: pl.Scalar[pl.FP32],
          c: pl.InOut[pl.Tensor[[4], pl.FP32]]) -> pl.Tensor[[4], pl.FP32]:
        c = pl.write(c, [1], a // b)
        c = pl.write(c, [2], a % b)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Scalar[pl.FP32], b: pl.Scalar[pl.FP32],
             c: pl.InOut[pl.Tensor[[4], pl.FP32]]) -> pl.Tensor[[4], pl.FP32]:
        c = self.w(a // b, 0, c)
        c = self.w(a % b, 3, c)
        c = self.k(a, b, c)
        return c
'''
f32 = np.float32


@pytest.fixture(scope="module")
def prog():
    return pypto.compile(pl.parse_program(PROGRAM, "float_div.py"))


def _run(prog, a, b):
    c = np.zeros(4, f32)
    prog(float(a), float(b), c)
    return c   # orchestration //, kernel //, kernel %, orchestration %


def _same(got, want):
    return bool(np.isnan(got) and np.isnan(want)) or (got == want and np.signbit(got) == np.signbit(want))


@pytest.mark.parametrize("a, b, q, r", [(1.0, 0.1, 9.0, None), (-1.0, 0.1, -10.0, None), (math.inf, 3.0, math.nan, None),
                                        (-0.0, 1.0, -0.0, 0.0), (0.0, -0.1, -0.0, -0.0), (7.0, -2.0, -4.0, -1.0),
                                        (-1.0, math.inf, -1.0, math.inf)])
def test_edges_are_pythons(prog, a, b, q, r):
    c = _run(prog, f32(a), f32(b))
    assert _same(c[0], f32(q)) and _same(c[1], f32(q)), c
    if r is not None:
        assert _same(c[2], f32(r)) and _same(c[3], f32(r)), c


def test_random_pairs_agree_with_numpy(prog):
    rng = random.Random(11)
    edges = [1.0, 0.1, -0.1, 3.0, -7.5, 1e-30, 1e30, math.inf, -math.inf, 0.0, -0.0, 0.3]
    for _ in range(120):
        a = f32(rng.choice(edges + [rng.uniform(-100, 100)]))
        b = f32(rng.choice(edges[:9] + [rng.uniform(-10, 10)]))
        c = _run(prog, a, b)
        with np.errstate(all="ignore"):
            want = [np.floor_divide(a, b), np.floor_divide(a, b), np.mod(a, b), np.mod(a, b)]
        assert all(_same(g, w) for g, w in zip(c, want)), (a, b, c, want)


HOST_PROGRAM = '''
import pypto.language as pl

@pl.program
class HostFloatDiv:
    @pl.function(type=pl.FunctionType.InCore)
    def w(self, q: pl.Scalar[pl.FP32], r: pl.Scalar[pl.FP32],
          c: pl.InOut[pl.Tensor[[2], pl.FP32]]) -> pl.Tensor[[2], pl.FP32]:
        c = pl.write(c, [0], q)
        c = pl.write(c, [1], r)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, q: pl.Scalar[pl.FP32], r: pl.Scalar[pl.FP32],
             c: pl.InOut[pl.Tensor[[2], pl.FP32]]) -> pl.Tensor[[2], pl.FP32]:
        c = self.w(q, r, c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)
    def host_main(self, a: pl.Scalar[pl.FP32], b: pl.Scalar[pl.FP32],
                  c: pl.InOut[pl.Tensor[[2], pl.FP32]]) -> pl.Tensor[[2], pl.FP32]:
        c, _ = pl.submit(self.chip, a // b, a % b, c)
        return c
'''


def test_host_code_floor_division_and_modulo_are_pythons():
    from pypto import host
    prog = host.compile_host(pl.parse_program(HOST_PROGRAM, "host_float_div.py"), "host_main", chips=1)
    for a, b in [(-7.0, 2.0), (1.0, 0.1), (-0.0, 1.0), (5.5, -2.0), (-1.0, math.inf)]:
        c = np.zeros(2, f32)
        prog(a, b, c)
        with np.errstate(all="ignore"):
            want = [np.floor_divide(f32(a), f32(b)), np.mod(f32(a), f32(b))]
        assert all(_same(g, w) for g, w in zip(c, want)), (a, b, c, want)
