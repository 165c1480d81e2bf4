"""Differential fuzzing of FP32 scalar expressions: random expressions over two FP32 scalars
(`+ - * / // %`, unary minus, abs, min, max, comparisons, conditional expressions, round trips
through INT32 and INT64), compiled into a kernel and into an orchestration, run on edge values
(±0, ±inf, NaN, subnormals, the largest float, integers beyond 2^24) and compared bit for bit
(any NaN matches any NaN) with a reference of NumPy float32 operations and Python's own float
`//`, `%`, min and max on the FP32 values, rounded to FP32 (docs/dsl.md).

    check(seed, "kernel")   # -> [] or the disagreements (strings)
"""
from __future__ import annotations

import math
import random

import numpy as np

import scalar_expr_fuzz as sf

EXPRS_PER_PROGRAM = 12
F32 = np.float32
VALUES = [0.0, -0.0, 1.0, -1.0, 0.5, 3.0, -7.25, 1e30, -1e30, 1e-40, -3e-39, math.inf, -math.inf, math.nan,
          16777217.0, 3.4e38, 2.5, -2.5]
LITERALS = [0.0, -0.0, 1.0, 2.0, 0.5, -3.5, 1e20, 1e-30, 7.0]


class RunMustFail(Exception):
    """The reference's verdict: the run must fail (a float // or % by zero, as Python raises)."""


def f32(x) -> float:
    with np.errstate(all="ignore"):
        return float(F32(x))


def _binary_np(op):
    def f(x, y):
        with np.errstate(all="ignore"):
            a, b = F32(x), F32(y)
            return float({"+": a + b, "-": a - b, "*": a * b, "/": a / b}[op])
    return f


def _py_floor(op):
    """Python's float // and % on the FP32 values (in double), rounded to FP32; where Python
    raises, a zero divisor keeps IEEE's floor(x / 0) for // and gives NaN for % (docs/dsl.md)."""
    def f(x, y):
        if y == 0:
            with np.errstate(all="ignore"):
                return float(np.floor(F32(x) / F32(y))) if op == "//" else math.nan
        if math.isnan(x) or math.isnan(y):
            return math.nan
        try:
            return f32(x // y if op == "//" else x % y)
        except (OverflowError, ValueError):
            return math.nan
    return f


def _to_int(bits):
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1

    def f(x):     # toward zero, saturating, NaN -> 0 (pl.cast's rule), back to FP32
        if math.isnan(x):
            return 0.0
        if math.isinf(x):
            return f32(hi if x > 0 else lo)
        return f32(max(lo, min(hi, math.trunc(x))))
    return f


_COMPARE = {"<": float.__lt__, "<=": float.__le__, ">": float.__gt__, ">=": float.__ge__, "==": float.__eq__,
            "!=": float.__ne__}


def expression(rng: random.Random, depth: int):
    """(DSL text, reference of (a, b) -> the FP32 value as a Python float) of a random expression."""
    if depth == 0 or rng.random() < 0.3:
        r = rng.random()
        if r < 0.7:
            name = "a" if r < 0.35 else "b"
            return name, (lambda a, b: a) if name == "a" else (lambda a, b: b)
        k = rng.choice(LITERALS)
        return "(%r)" % k, (lambda a, b: f32(k))
    kind = rng.random()
    x, fx = expression(rng, depth - 1)
    if kind < 0.06:
        return "(-%s)" % x, (lambda a, b: -fx(a, b))
    if kind < 0.12:
        return "abs(%s)" % x, (lambda a, b: abs(fx(a, b)))
    if kind < 0.18:
        bits = rng.choice([32, 64])
        conv = _to_int(bits)
        return "pl.cast(pl.cast(%s, pl.INT%d), pl.FP32)" % (x, bits), (lambda a, b: conv(fx(a, b)))
    y, fy = expression(rng, depth - 1)
    if kind < 0.3:
        fn = min if rng.random() < 0.5 else max
        return "%s(%s, %s)" % (fn.__name__, x, y), (lambda a, b: fn(fx(a, b), fy(a, b)))
    if kind < 0.38:
        op = rng.choice(sorted(_COMPARE))
        cmp = _COMPARE[op]
        return "pl.cast(%s %s %s, pl.FP32)" % (x, op, y), (lambda a, b: float(cmp(fx(a, b), fy(a, b))))
    if kind < 0.45:
        z, fz = expression(rng, depth - 1)
        if "a" not in z and "b" not in z and rng.random() < 0.5:      # mostly run-time conditions
            z, fz = "(%s + a * 0.0)" % z, _plus_a_times_zero(fz)
        return "(%s if %s else %s)" % (x, z, y), (lambda a, b: fx(a, b) if fz(a, b) != 0 else fy(a, b))
    if kind < 0.55:
        op = rng.choice(["//", "%"])
        fn = _py_floor(op)
        return "(%s %s %s)" % (x, op, y), (lambda a, b: fn(fx(a, b), fy(a, b)))
    op = rng.choice(["+", "-", "*", "/"])
    fn = _binary_np(op)
    return "(%s %s %s)" % (x, op, y), (lambda a, b: fn(fx(a, b), fy(a, b)))


def _plus_a_times_zero(fz):
    """The reference of `(z + a * 0.0)`: z, or NaN for an infinite or NaN a (whose truth is True)."""
    def f(a, b):
        with np.errstate(all="ignore"):
            return float(F32(fz(a, b)) + F32(a) * F32(0.0))
    return f


def program_text(texts, side: str) -> str:
    return sf.program_text(texts, side, "FP32")


def _same(got: float, want: float) -> bool:
    if math.isnan(want):
        return math.isnan(got)
    return got == want and math.copysign(1.0, got) == math.copysign(1.0, want)


def check(seed: int, side: str, pairs: int = 10):
    """Compiles program `seed` for `side`, runs it on `pairs` edge pairs; [] or the disagreements."""
    import pypto
    import pypto.language as pl
    from pypto.runtime.loader import RunError
    rng = random.Random(seed * 7907 + (side == "kernel"))
    exprs = [expression(rng, rng.randint(1, 4)) for _ in range(EXPRS_PER_PROGRAM)]
    prog = pypto.compile(pl.parse_program(program_text([t for t, _ in exprs], side), "float_exprs_%s_%d.py" % (side, seed)))
    findings = []
    for _ in range(pairs):
        a, b = f32(rng.choice(VALUES)), f32(rng.choice(VALUES))
        try:
            want = [f32(f(a, b)) for _, f in exprs]
        except RunMustFail:
            want = None
        c = np.zeros(len(exprs), np.float32)
        where = "seed %d (%s), a = %r, b = %r" % (seed, side, a, b)
        try:
            prog(a, b, c)
        except RunError as e:
            if want is not None:
                findings.append("%s: the run failed: %s" % (where, str(e).splitlines()[0]))
            elif "by zero" not in str(e):
                findings.append("%s: failed for another reason: %s" % (where, str(e).splitlines()[0]))
            continue
        if want is None:
            findings.append("%s: a float // or %% by zero ran without an error" % where)
            continue
        for i, (t, _) in enumerate(exprs):
            if not _same(float(c[i]), want[i]):
                findings.append("%s: %s gave %r, the reference %r" % (where, t, float(c[i]), want[i]))
    return findings
