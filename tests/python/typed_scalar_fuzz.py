"""Differential fuzzing of integer scalar expressions over every integer dtype: random expressions
whose operands are INT64 values, INDEX literals and casts of them to INT8..UINT64 and BOOL,
combined with the DSL's operators and abs / int / bool, compiled into a kernel and into an orchestration, and
compared with a reference that computes Python's integers promoted and wrapped as docs/dsl.md
says (operands meet at the promoted dtype, results wrap to it; comparisons compare in it).

scalar_expr_fuzz.py covers INT64 arithmetic; this one found that C++ computed narrow types in
int without wrapping (an INT8 100 * 5 compared 500 > 0), compared a UINT64 with an INT64 as
unsigned (and failed -Werror), and multiplied an INT32 by an INDEX literal in 32 bits.

    check(seed, "kernel")   # -> [] or the disagreements (strings)
"""
from __future__ import annotations

import random
import re

import scalar_expr_fuzz as sf
from scalar_expr_fuzz import INT64_MIN, ZeroDivisor

# dtype -> (bits, signed); BOOL holds 0 / 1
_INTS = {"INT8": (8, True), "INT16": (16, True), "INT32": (32, True), "INT64": (64, True), "INDEX": (64, True),
         "UINT8": (8, False), "UINT16": (16, False), "UINT32": (32, False), "UINT64": (64, False)}
CAST_TARGETS = sorted(_INTS) + ["BOOL"]


def promote(a: str, b: str) -> str:
    """The dtype two integer operands meet at (ir::PromoteScalarDTypes)."""
    if a == b:
        return "INDEX" if a == "BOOL" else a
    if a == "BOOL":
        return b
    if b == "BOOL":
        return a
    if "INDEX" in (a, b):
        return "INDEX"
    (wa, sa), (wb, _) = _INTS[a], _INTS[b]
    if wa != wb:
        return a if wa > wb else b
    return a if sa else b


def wrap(d: str, v: int) -> int:
    """`v` converted to dtype `d` (the value the dtype holds: unsigned ones are non-negative)."""
    if d == "BOOL":
        return int(v != 0)
    bits, signed = _INTS[d]
    v %= 1 << bits
    return v - (1 << bits) if signed and v >= 1 << (bits - 1) else v


def _floordiv_mod(op: str, d: str, side: str):
    def f(x, y):
        if y == 0:
            raise ZeroDivisor()
        return wrap(d, x // y if op == "//" else x % y)
    return f


def _shift(op: str, d: str):
    bits = _INTS[d][0]

    def f(x, n):
        if n < 0:
            raise ZeroDivisor()       # a negative count fails the run
        if op == "<<":
            return 0 if n >= bits else wrap(d, x << n)
        return x >> min(n, bits - 1) if x < 0 else (0 if n >= bits else x >> n)
    return f


_BINARY = {"+": lambda d: lambda x, y: wrap(d, x + y), "-": lambda d: lambda x, y: wrap(d, x - y),
           "*": lambda d: lambda x, y: wrap(d, x * y), "&": lambda d: lambda x, y: wrap(d, x & y),
           "|": lambda d: lambda x, y: wrap(d, x | y), "^": lambda d: lambda x, y: wrap(d, x ^ y)}
_COMPARE = sf._COMPARE


def _leaf(rng):
    r = rng.random()
    if r < 0.6:
        name = "a" if r < 0.3 else "b"
        return name, (lambda a, b: a) if name == "a" else (lambda a, b: b), "INT64"
    k = rng.choice(sf.LITERALS + [100, 200, 250, -128, 255, 65535, 40000])
    return "(%d)" % k, (lambda a, b: k), "INDEX"


def typed(rng: random.Random, side: str, depth: int):
    """(DSL text, reference of (a, b) -> the value in its dtype, dtype) of a random expression."""
    if depth == 0 or rng.random() < 0.25:
        t, f, d = _leaf(rng)
        if rng.random() < 0.6:                        # most leaves are narrowed
            to = rng.choice(CAST_TARGETS)
            return "pl.cast(%s, pl.%s)" % (t, to), (lambda a, b: wrap(to, f(a, b))), to
        return t, f, d
    kind = rng.random()
    x, fx, dx = typed(rng, side, depth - 1)
    if kind < 0.08:
        to = rng.choice(CAST_TARGETS)
        return "pl.cast(%s, pl.%s)" % (x, to), (lambda a, b: wrap(to, fx(a, b))), to
    if kind < 0.11:      # Python's builtins: abs keeps the dtype (a BOOL's is its int), int() is INDEX
        r = rng.random()
        if r < 0.5:
            d = "INDEX" if dx == "BOOL" else dx
            return "abs(%s)" % x, (lambda a, b: wrap(d, abs(fx(a, b)))), d
        if r < 0.75:
            return "int(%s)" % x, (lambda a, b: wrap("INDEX", fx(a, b))), "INDEX"
        return "bool(%s)" % x, (lambda a, b: int(fx(a, b) != 0)), "BOOL"
    if kind < 0.16 and dx != "BOOL":
        if rng.random() < 0.5 and not sf.refused_when_parsed("-", "0", lambda a, b: 0, x, fx):
            return "(-%s)" % x, (lambda a, b: wrap(dx, -fx(a, b))), dx
        return "(~%s)" % x, (lambda a, b: wrap(dx, ~fx(a, b))), dx
    y, fy, dy = typed(rng, side, depth - 1)
    if kind < 0.3:
        op = rng.choice(sorted(_COMPARE))
        cmp, pt = _COMPARE[op], promote(dx, dy)
        return "(%s %s %s)" % (x, op, y), (lambda a, b: int(cmp(wrap(pt, fx(a, b)), wrap(pt, fy(a, b))))), "BOOL"
    if kind < 0.4:
        fn, d = (min if rng.random() < 0.5 else max), promote(dx, dy)
        return "%s(%s, %s)" % (fn.__name__, x, y), (lambda a, b: fn(wrap(d, fx(a, b)), wrap(d, fy(a, b)))), d
    if kind < 0.47:
        z, fz, dz = typed(rng, side, depth - 1)
        if not re.search(r"\b[ab]\b", z) and "pl.cast" not in z:
            # a compile-time condition picks its branch when parsed, with that branch's dtype
            # (docs/dsl.md); pl.cast makes it a run-time one, whose result has the promoted dtype
            z = "pl.cast(%s, pl.%s)" % (z, dz)
        d = dx if dx == dy else promote(dx, dy)
        return "(%s if %s else %s)" % (x, z, y), (lambda a, b: wrap(d, fx(a, b) if fz(a, b) else fy(a, b))), d
    if sf.refused_when_parsed("//", x, fx, y, fy) or sf.refused_when_parsed("*", x, fx, y, fy) or \
            sf.refused_when_parsed("-", x, fx, y, fy) or sf.refused_when_parsed("+", x, fx, y, fy):
        y, fy, dy = "b", (lambda a, b: b), "INT64"    # an operation the parser would refuse (docs/dsl.md)
    d = promote(dx, dy)
    if kind < 0.55 and d != "BOOL":
        op = rng.choice(["//", "%"])
        fn = _floordiv_mod(op, d, side)
        return "(%s %s %s)" % (x, op, y), (lambda a, b: fn(wrap(d, fx(a, b)), wrap(d, fy(a, b)))), d
    if kind < 0.62 and "BOOL" not in (dx, dy):
        # a count below x's width, cast to x's dtype so that the shift computes in it
        op = rng.choice(["<<", ">>"])
        fn, mask = _shift(op, dx), _INTS[dx][0] - 1
        text = "(%s %s pl.cast(%s & %d, pl.%s))" % (x, op, y, mask, dx)
        return text, (lambda a, b: fn(fx(a, b), wrap(promote(dy, "INDEX"), fy(a, b)) & mask)), dx
    op = rng.choice(sorted(_BINARY)) if "BOOL" not in (dx, dy) else rng.choice(["+", "-", "*"])
    fn = _BINARY[op](d)
    return "(%s %s %s)" % (x, op, y), (lambda a, b: fn(wrap(d, fx(a, b)), wrap(d, fy(a, b)))), d


def expression(rng: random.Random, side: str, depth: int):
    """(DSL text, reference of (a, b) -> the int64 value of the text cast to INT64)."""
    t, f, d = typed(rng, side, depth)
    return t, (lambda a, b: wrap("INT64", f(a, b)))


def check(seed: int, side: str, pairs: int = 12):
    """scalar_expr_fuzz.check with typed expressions: [] or the disagreements."""
    return sf.check(seed, side, pairs, generate=expression, name="typed_exprs")
