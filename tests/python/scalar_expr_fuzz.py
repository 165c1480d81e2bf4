"""Differential fuzzing of integer scalar expressions: random expressions over two INT64
parameters (+ - * // % unary minus, & | ^ << >> ~, min, max, comparisons cast to INT64, true division (FP32)
cast back, casts through INT8 .. UINT32, BOOL and FP32 and back, literals at the 32/64-bit edges) are compiled into a kernel (each written to an INT64 tensor with pl.write) or into an
orchestration (each passed as a kernel's scalar argument), run on edge values, and compared with
Python's integers reduced to int64 after every operation (two's complement wrapping, as the
generated code is compiled with -fwrapv).

Expected failures are part of the reference: an integer // or % by zero, and a negative shift
count, fail the run in both (a located RunError); in an orchestration so does the smallest int64 // -1, whose quotient does
not fit (pto2_floordiv), where a kernel wraps it to itself (NumPy's bits). docs/running.md,
"What is checked when"; docs/kernels.md.

    findings = check(seed=3, side="kernel")      # [] when the generated code agrees

Used by tests/python/test_scalar_expr_fuzz.py (a seeded smoke) and scripts/fuzz_exprs.py --kind scalar
(`make fuzz`).
"""
import math
import operator
import random
import re

import numpy as np

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
EXPRS_PER_PROGRAM = 16
VALUES = [0, 1, -1, 2, -2, 3, 7, -7, 12345, -99999, (1 << 31) - 1, -(1 << 31), 1 << 32, 1 << 62, INT64_MAX, INT64_MIN]
LITERALS = [0, 1, -1, 2, 3, 7, -8, 1 << 31, (1 << 32) + 1, 1 << 62]


class ZeroDivisor(Exception):
    """The reference's verdict: this run must fail (a zero divisor, or MIN // -1 in an orchestration)."""


def wrap(x: int) -> int:
    return ((x - INT64_MIN) % (1 << 64)) + INT64_MIN


def _floordiv(side):
    def f(x, y):   # MIN // -1 wraps to MIN on both sides (the orchestration used to refuse it)
        if y == 0:
            raise ZeroDivisor()
        return wrap(x // y)
    return f


def _mod(x, y):
    if y == 0:
        raise ZeroDivisor()
    return wrap(x % y)


_RUN_TIME = re.compile(r"\b(a|b|pl)\b")     # a parameter, or pl.cast: not a compile-time value
_EXACT = {"+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv, "%": operator.mod,
          "&": operator.and_, "|": operator.or_, "^": operator.xor, ">>": operator.rshift}


def refused_when_parsed(op: str, x: str, fx, y: str, fy) -> bool:
    """Whether the parser refuses `x op y` (docs/dsl.md): both compile-time integers (no parameter,
    no pl.cast) whose exact result is no int64, or a zero divisor, or a negative shift count. The
    generators do not draw those (the reference would wrap them or expect a run-time failure)."""
    if _RUN_TIME.search(x) or _RUN_TIME.search(y):
        return False
    u, v = fx(0, 0), fy(0, 0)
    if op in ("/", "//", "%") and v == 0 or op in ("<<", ">>") and v < 0:
        return True
    if op == "<<":
        return u != 0 and (v >= 64 or not INT64_MIN <= u << v <= INT64_MAX)
    return op in _EXACT and not INT64_MIN <= _EXACT[op](u, v) <= INT64_MAX


def _parameter_if_refused(op: str, x: str, fx, y: str, fy):
    """(y, fy), or the parameter b in place of y when the parser would refuse `x op y`."""
    return ("b", lambda a, b: b) if refused_when_parsed(op, x, fx, y, fy) else (y, fy)


def _shift(op):
    # Python's << and >> on int64 values, wrapped: a negative count fails the run (ValueError in
    # Python); a count of 64 or more shifts everything out (>> leaves -1 for a negative x)
    def f(x, n):
        if n < 0:
            raise ZeroDivisor()
        if op == "<<":
            return 0 if n >= 64 else wrap(x << n)
        return x >> min(n, 63)
    return f


_ARITH = {"+": lambda x, y: wrap(x + y), "-": lambda x, y: wrap(x - y), "*": lambda x, y: wrap(x * y), "%": _mod,
          "&": int.__and__, "|": int.__or__, "^": int.__xor__, "<<": _shift("<<"), ">>": _shift(">>")}


def _wrap_to(bits, signed):
    def f(x):
        x %= 1 << bits
        return x - (1 << bits) if signed and x >= 1 << (bits - 1) else x
    return f


def _fp32(x):
    """int64 -> FP32 as C++ converts it (once, to nearest even; np.float32(int) would round
    through float64 first)."""
    return np.array([x], np.int64).astype(np.float32)[0]


def _via_fp32(x):
    # int64 -> FP32 rounds to nearest even; FP32 -> int64 is toward zero, saturated (docs/dsl.md)
    v = int(_fp32(x))
    return max(INT64_MIN, min(INT64_MAX, v))


def _true_div(x, y):
    # int / int is FP32 division of the operands converted to FP32; a zero divisor is IEEE's
    # (±inf saturates, NaN gives 0)
    with np.errstate(all="ignore"):
        q = float(_fp32(x) / _fp32(y))
    if math.isnan(q):
        return 0
    if math.isinf(q):
        return INT64_MAX if q > 0 else INT64_MIN
    return max(INT64_MIN, min(INT64_MAX, int(q)))


_NARROW = {"INT8": _wrap_to(8, True), "INT16": _wrap_to(16, True), "INT32": _wrap_to(32, True),
           "UINT8": _wrap_to(8, False), "UINT16": _wrap_to(16, False), "UINT32": _wrap_to(32, False),
           "BOOL": lambda x: int(x != 0), "FP32": _via_fp32}
_COMPARE = {"<": int.__lt__, "<=": int.__le__, ">": int.__gt__, ">=": int.__ge__, "==": int.__eq__, "!=": int.__ne__}


def expression(rng: random.Random, side: str, depth: int):
    """(DSL text, reference function of (a, b)) of a random INT64-valued expression."""
    if depth == 0 or rng.random() < 0.3:
        r = rng.random()
        if r < 0.7:
            name = "a" if r < 0.35 else "b"
            return name, (lambda a, b: a) if name == "a" else (lambda a, b: b)
        k = rng.choice(LITERALS)
        return "(%d)" % k, (lambda a, b: k)
    kind = rng.random()
    x, fx = expression(rng, side, depth - 1)
    if kind < 0.05 and not refused_when_parsed("-", "0", lambda a, b: 0, x, fx):
        return "(-%s)" % x, (lambda a, b: wrap(-fx(a, b)))
    if kind < 0.1:
        return "(~%s)" % x, (lambda a, b: ~fx(a, b))
    y, fy = expression(rng, side, depth - 1)
    if kind < 0.2:
        fn = min if rng.random() < 0.5 else max
        return "%s(%s, %s)" % (fn.__name__, x, y), (lambda a, b: fn(fx(a, b), fy(a, b)))
    if kind < 0.28:   # a round trip through a narrower integer type, a bool or FP32 (x is reused)
        to = rng.choice(sorted(_NARROW))
        return "pl.cast(pl.cast(%s, pl.%s), pl.INT64)" % (x, to), (lambda a, b: _NARROW[to](fx(a, b)))
    if 0.3 <= kind < 0.36:   # true division: FP32, back toward zero (saturating)
        y, fy = _parameter_if_refused("/", x, fx, y, fy)
        return "pl.cast(%s / %s, pl.INT64)" % (x, y), (lambda a, b: _true_div(fx(a, b), fy(a, b)))
    if kind < 0.3:
        op = rng.choice(sorted(_COMPARE))
        cmp = _COMPARE[op]
        return "pl.cast(%s %s %s, pl.INT64)" % (x, op, y), (lambda a, b: int(cmp(fx(a, b), fy(a, b))))
    if kind < 0.42:   # a shift by a count in 0..63 (the raw count of the branch below is mostly out of range)
        op = rng.choice(["<<", ">>"])
        fn = _ARITH[op]
        if refused_when_parsed(op, x, fx, "(%s & 63)" % y, lambda a, b: fy(a, b) & 63):
            y, fy = "b", (lambda a, b: b)
        return "(%s %s (%s & 63))" % (x, op, y), (lambda a, b: fn(fx(a, b), fy(a, b) & 63))
    if kind < 0.43:   # a raw count: a negative one fails the whole run, so rarely
        op = rng.choice(["<<", ">>"])
        fn = _ARITH[op]
        y, fy = _parameter_if_refused(op, x, fx, y, fy)
        return "(%s %s %s)" % (x, op, y), (lambda a, b: fn(fx(a, b), fy(a, b)))
    if kind < 0.49:   # a conditional expression: only the chosen branch runs (the other may divide by zero)
        z, fz = expression(rng, side, depth - 1)
        if rng.random() < 0.5:
            return "(%s if %s else %s)" % (x, z, y), (lambda a, b: fx(a, b) if fz(a, b) else fy(a, b))
        v, fv = expression(rng, side, depth - 1)
        op = rng.choice(sorted(_COMPARE))
        cmp = _COMPARE[op]
        return "(%s if %s %s %s else %s)" % (x, z, op, v, y), \
            (lambda a, b: fx(a, b) if cmp(fz(a, b), fv(a, b)) else fy(a, b))
    op = rng.choice(["+", "-", "*", "//", "%", "&", "|", "^"])
    fn = _floordiv(side) if op == "//" else _ARITH[op]
    y, fy = _parameter_if_refused(op, x, fx, y, fy)
    return "(%s %s %s)" % (x, op, y), (lambda a, b: fn(fx(a, b), fy(a, b)))


_HEAD = '''
import pypto.language as pl

@pl.program
class ScalarExprs:
'''
_KERNEL = _HEAD + '''    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Scalar[pl.{dt}], b: pl.Scalar[pl.{dt}],
          c: pl.Out[pl.Tensor[[{n}], pl.{dt}]]) -> pl.Tensor[[{n}], pl.{dt}]:
{body}
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Scalar[pl.{dt}], b: pl.Scalar[pl.{dt}],
             c: pl.Out[pl.Tensor[[{n}], pl.{dt}]]) -> pl.Tensor[[{n}], pl.{dt}]:
        c = self.k(a, b, c)
        return c
'''
_ORCHESTRATION = _HEAD + '''    @pl.function(type=pl.FunctionType.InCore)
    def k(self, v: pl.Scalar[pl.{dt}], i: pl.Scalar[pl.INDEX],
          c: pl.InOut[pl.Tensor[[{n}], pl.{dt}]]) -> pl.Tensor[[{n}], pl.{dt}]:
        c = pl.write(c, [i], v)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Scalar[pl.{dt}], b: pl.Scalar[pl.{dt}],
             c: pl.InOut[pl.Tensor[[{n}], pl.{dt}]]) -> pl.Tensor[[{n}], pl.{dt}]:
{body}
        return c
'''


def program_text(texts, side: str, dtype: str = "INT64") -> str:
    """The DSL program computing `texts` (expression texts over scalars a and b of `dtype`, each
    cast to it) on `side`: a kernel writing each into c, or an orchestration passing each to one."""
    if side == "kernel":
        body = "\n".join("        c = pl.write(c, [%d], pl.cast(%s, pl.%s))" % (i, t, dtype) for i, t in enumerate(texts))
        return _KERNEL.format(n=len(texts), body=body, dt=dtype)
    body = "\n".join("        c = self.k(pl.cast(%s, pl.%s), %d, c)" % (t, dtype, i) for i, t in enumerate(texts))
    return _ORCHESTRATION.format(n=len(texts), body=body, dt=dtype)


def check(seed: int, side: str, pairs: int = 12, generate=None, name: str = "scalar_exprs"):
    """Compiles program `seed` for `side` ("kernel" or "orchestration"), runs it on `pairs`
    (a, b) edge pairs and returns the disagreements with the reference (strings; [] is a pass).
    `generate(rng, side, depth)` draws one expression: (DSL text, reference of (a, b) -> the
    int64 value of the text cast to INT64); `expression` by default."""
    generate = generate or expression
    import pypto
    import pypto.language as pl
    from pypto.runtime.loader import RunError
    rng = random.Random(seed * 7919 + (side == "kernel"))
    exprs = [generate(rng, side, rng.randint(1, 4)) for _ in range(EXPRS_PER_PROGRAM)]
    text = program_text([t for t, _ in exprs], side)
    prog = pypto.compile(pl.parse_program(text, "%s_%s_%d.py" % (name, side, seed)))
    findings = []
    for _ in range(pairs):
        a, b = rng.choice(VALUES), rng.choice(VALUES)
        try:
            want = [f(a, b) for _, f in exprs]
        except ZeroDivisor:
            want = None
        c = np.zeros(len(exprs), np.int64)
        where = "seed %d (%s), a = %d, b = %d" % (seed, side, a, b)
        try:
            prog(a, b, c)
        except RunError as e:
            if want is not None:
                findings.append("%s: the run failed: %s" % (where, str(e).splitlines()[0]))
            elif not any(m in str(e) for m in ("division or modulo by zero", "does not fit", "negative shift count")):
                findings.append("%s: failed for another reason: %s" % (where, str(e).splitlines()[0]))
            continue
        if want is None:
            findings.append("%s: a zero divisor (or MIN // -1, or a negative shift count) ran without an error" % where)
            continue
        for i, (t, _) in enumerate(exprs):
            if int(c[i]) != want[i]:
                findings.append("%s: %s gave %d, Python (int64) %d" % (where, t, int(c[i]), want[i]))
    return findings
