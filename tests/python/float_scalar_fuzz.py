"""Differential fuzzing of float scalar expressions: random expressions over two scalars of one
float dtype (FP32, FP16 or BF16: `+ - * / // %`, unary minus, abs, min, max, comparisons,
conditional expressions, round trips through INT32 and INT64), compiled into a kernel and into an
orchestration, run on edge values (±0, ±inf, NaN, subnormals, the largest float, integers beyond
the significand) and compared bit for bit (any NaN matches any NaN) with a reference of NumPy
float32 operations and Python's own float `//`, `%`, min and max on the values, each result
rounded to the dtype (docs/dsl.md): an FP16 / BF16 scalar is rounded after every op, as NumPy's
float16 computes (a float32 result rounded again is the correctly rounded one: float32 has more
than twice their significand bits).

    check(seed, "kernel")                # -> [] or the disagreements (strings)
    check(seed, "kernel", dtype="FP16")
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


def f16(x) -> float:
    """`x` rounded to FP32, then to FP16 (generated code rounds a float result)."""
    with np.errstate(all="ignore"):
        return float(np.float16(F32(x)))


def bf16(x) -> float:
    """`x` rounded to FP32, then to BF16 (round to nearest even; a NaN stays a NaN)."""
    v = f32(x)
    if math.isnan(v):
        return v
    bits = int(np.array([v], F32).view(np.uint32)[0])
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return float(np.array([bits & 0xFFFFFFFF], np.uint32).view(F32)[0])


ROUND = {"FP32": f32, "FP16": f16, "BF16": bf16}
# Edge values of the 16-bit dtypes besides VALUES: the largest FP16 and the first value that
# rounds to inf, a subnormal and an integer just past each significand.
VALUES_16 = [65504.0, 65520.0, -65519.0, 6e-08, 2049.0, 257.0, 0.1, 1 / 3, -2.0 / 7, 3e38]


def _binary_np(op, rnd=f32):
    def f(x, y):
        with np.errstate(all="ignore"):
            a, b = F32(x), F32(y)
            return rnd(float({"+": a + b, "-": a - b, "*": a * b, "/": a / b}[op]))
    return f


def _py_floor(op, rnd=f32):
    """Python's float // and % on the FP32 values (in double), rounded to FP32; where Python
    raises, a zero divisor keeps IEEE's floor(x / 0) for // and gives NaN for % (docs/dsl.md)."""
    def f(x, y):
        if y == 0:
            with np.errstate(all="ignore"):
                return float(np.floor(F32(x) / F32(y))) if op == "//" else math.nan
        if math.isnan(x) or math.isnan(y):
            return math.nan
        try:
            return rnd(x // y if op == "//" else x % y)
        except (OverflowError, ValueError):
            return math.nan
    return f


def _to_int(bits, rnd=f32):
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1

    def f(x):     # toward zero, saturating, NaN -> 0 (pl.cast's rule), back to the float dtype
        if math.isnan(x):
            return 0.0
        if math.isinf(x):
            return rnd(hi if x > 0 else lo)
        return rnd(max(lo, min(hi, math.trunc(x))))
    return f


_COMPARE = {"<": float.__lt__, "<=": float.__le__, ">": float.__gt__, ">=": float.__ge__, "==": float.__eq__,
            "!=": float.__ne__}


def _promote(x: str, y: str) -> str:
    """The dtype two float operands meet at (ir::PromoteScalarDTypes): the wider; FP16 with FP16."""
    return x if x == y else "FP32"


def expression(rng: random.Random, depth: int, dtype: str = "FP32"):
    """(DSL text, reference of (a, b) -> its value as a Python float, its dtype) of a random
    expression over `a` and `b` of `dtype`. A float literal is FP32 (docs/dsl.md), so an FP16
    operand meets it at FP32; each op's result is rounded to its own dtype."""
    if depth == 0 or rng.random() < 0.3:
        r = rng.random()
        if r < 0.7:
            name = "a" if r < 0.35 else "b"
            return name, ((lambda a, b: a) if name == "a" else (lambda a, b: b)), dtype
        k = rng.choice(LITERALS)
        return "(%r)" % k, (lambda a, b: f32(k)), "FP32"
    kind = rng.random()
    x, fx, dx = expression(rng, depth - 1, dtype)
    if kind < 0.06:
        return "(-%s)" % x, (lambda a, b: -fx(a, b)), dx
    if kind < 0.12:
        return "abs(%s)" % x, (lambda a, b: abs(fx(a, b))), dx
    if kind < 0.18:
        bits = rng.choice([32, 64])
        conv = _to_int(bits, ROUND[dtype])
        return "pl.cast(pl.cast(%s, pl.INT%d), pl.%s)" % (x, bits, dtype), (lambda a, b: conv(fx(a, b))), dtype
    y, fy, dy = expression(rng, depth - 1, dtype)
    dt = _promote(dx, dy)
    if kind < 0.3:
        fn = min if rng.random() < 0.5 else max
        return "%s(%s, %s)" % (fn.__name__, x, y), (lambda a, b: fn(fx(a, b), fy(a, b))), dt
    if kind < 0.38:
        op = rng.choice(sorted(_COMPARE))
        cmp = _COMPARE[op]
        return ("pl.cast(%s %s %s, pl.%s)" % (x, op, y, dtype), (lambda a, b: float(cmp(fx(a, b), fy(a, b)))),
                dtype)
    if kind < 0.45:
        z, fz, _ = expression(rng, depth - 1, dtype)
        if "a" not in z and "b" not in z and rng.random() < 0.5:      # mostly run-time conditions
            z, fz = "(%s + a * 0.0)" % z, _plus_a_times_zero(fz)
        if dx != dy:   # the branches of a conditional expression have one dtype (exact: FP16 in FP32)
            x, y = "pl.cast(%s, pl.FP32)" % x, "pl.cast(%s, pl.FP32)" % y
        return "(%s if %s else %s)" % (x, z, y), (lambda a, b: fx(a, b) if fz(a, b) != 0 else fy(a, b)), dt
    rnd = ROUND[dt]
    if kind < 0.55:
        op = rng.choice(["//", "%"])
        fn = _py_floor(op, rnd)
        return "(%s %s %s)" % (x, op, y), (lambda a, b: fn(fx(a, b), fy(a, b))), dt
    op = rng.choice(["+", "-", "*", "/"])
    fn = _binary_np(op, rnd)
    return "(%s %s %s)" % (x, op, y), (lambda a, b: fn(fx(a, b), fy(a, b))), dt


def _plus_a_times_zero(fz):
    """The reference of `(z + a * 0.0)`: z, or NaN for an infinite or NaN a (whose truth is True)."""
    def f(a, b):
        with np.errstate(all="ignore"):
            return float(F32(fz(a, b)) + F32(a) * F32(0.0))
    return f


def program_text(texts, side: str, dtype: str = "FP32") -> str:
    return sf.program_text(texts, side, dtype)


def _same(got: float, want: float) -> bool:
    if math.isnan(want):
        return math.isnan(got)
    return got == want and math.copysign(1.0, got) == math.copysign(1.0, want)


def _output(n: int, dtype: str):
    """The output array of a program of dtype `dtype`, and its reader (-> Python floats): BF16 as
    its uint16 bits (ml_dtypes is optional)."""
    if dtype == "BF16":
        c = np.zeros(n, np.uint16)
        return c, lambda: [float(v) for v in (c.astype(np.uint32) << 16).view(F32)]
    c = np.zeros(n, {"FP32": F32, "FP16": np.float16}[dtype])
    return c, lambda: [float(v) for v in c]


def check(seed: int, side: str, pairs: int = 10, dtype: str = "FP32"):
    """Compiles program `seed` for `side` over scalars of `dtype`, runs it on `pairs` edge pairs;
    [] or the disagreements."""
    import pypto
    import pypto.language as pl
    from pypto.runtime.loader import RunError
    rnd = ROUND[dtype]
    rng = random.Random(seed * 7907 + (side == "kernel") + (0 if dtype == "FP32" else 31 * len(dtype) + ord(dtype[0])))
    exprs = [expression(rng, rng.randint(1, 4), dtype)[:2] for _ in range(EXPRS_PER_PROGRAM)]
    text = program_text([t for t, _ in exprs], side, dtype)
    prog = pypto.compile(pl.parse_program(text, "float_exprs_%s_%s_%d.py" % (dtype.lower(), side, seed)))
    values = VALUES + (VALUES_16 if dtype != "FP32" else [])
    findings = []
    for _ in range(pairs):
        a, b = rnd(rng.choice(values)), rnd(rng.choice(values))
        try:
            want = [rnd(f(a, b)) for _, f in exprs]
        except RunMustFail:
            want = None
        c, got = _output(len(exprs), dtype)
        where = "seed %d (%s, %s), a = %r, b = %r" % (seed, side, dtype, a, b)
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
        for i, ((t, _), value) in enumerate(zip(exprs, got())):
            if not _same(value, want[i]):
                findings.append("%s: %s gave %r, the reference %r" % (where, t, value, want[i]))
    return findings
