"""Differential fuzzing of kernels: random chains of exactly rounded tile ops, where each
statement reads any earlier tile (so values are read again after later statements could have
reused their buffers: the kernel passes' in-place and shared-buffer decisions), compared with
NumPy on inputs holding edge values.

Seed k's dtype is DTYPES[k % 6] (FP32, FP16, INT32, INT8, UINT16, BF16):
- FP32, FP16 and BF16: the IEEE-exact ops (add sub mul div maximum minimum neg abs relu sqrt recip rsqrt,
  their scalar forms with ±0, ±inf, NaN, subnormal and largest scalars), on inputs with ±0, ±inf,
  NaN, subnormals and the largest finite values; FP16 rounds each op's float result to FP16, as
  NumPy's float16 arithmetic does, and BF16 to bfloat16 (round_bf16: to nearest even).
- INT32, INT8, UINT16: add sub mul (wrapping), div (toward zero; by 0 gives 0; MIN / -1 wraps), rem (floor
  modulo; by 0 and by -1 give 0), maximum minimum neg abs relu, and_ or_ xor, shl shr (a count of
  the width or more gives 0, or -1 for a negative value under shr; a negative count shifts by 0),
  and their scalar forms (the scalar first converted to INT32, wrapping), on inputs with 0, ±1,
  the extremes and shift counts (docs/kernels.md); casts through FP32 and the other two.
All: row_max / row_min / col_max / col_min, the binary ops broadcasting a column [R, 1] or a row
[1, C] against a tile, the three-operand addc / subc / addsc / subsc, part_add / part_mul /
part_max / part_min (fully valid tiles: the plain ops), expands, row_expand / col_expand and
their add, sub, mul, div, max and min forms, pl.sel of a pl.cmp or pl.cmps mask (every cmp_type;
NaN compares as in NumPy), lrelu / prelu on floats, and integer row / column sums and products
(wrapping; not_ on UINT16), shape moves giving an [R, C] tile back (a reshape to [C, R] then a
transpose; a column window of a concat, by extract and by slice), add / sub / mul / div of the tile and
another tile cast to a second dtype (computed in the promoted dtype, reference_ops.md §1.3, then
cast back); and cast round trips (a float through INT32 with each cast mode, saturating,
NaN giving 0, and through FP16; an INT32 through FP32, INT8 and UINT16). Then a pl.range loop of
0, 1, 2 or 5 trips re-assigns one to three of the tiles (loop-carried tiles, each statement
reading the carries' current values; odd seeds: a run-time trip count, one more on the second run), and an if / else on a scalar parameter (run once with each
outcome) re-assigns tiles in either branch, before the results are stored. The kernel must give NumPy's values exactly (a NaN matching a NaN, +0
matching -0). A handful of temporaries is stored, each into its own row block of the output.
docs/running.md, "Fuzzing".

    findings = check(seed=3)      # [] when the kernel agrees with NumPy

A third of the seeds write the chain on tensors instead (tensor_form, TENSOR_OPS): the same
values through the kernel's tensor-op lowering. Another third load the tiles with a run-time row
count (dynamic_rows: nr, passed as R), half of those a run-time column count too (dynamic_cols:
nc, passed as C): the same values through the dynamic-shape code.

Used by tests/python/test_tile_expr_fuzz.py (a seeded smoke) and scripts/fuzz_exprs.py.
"""
import random

import numpy as np

STATEMENTS = 14
STORED = 4
DTYPES = ["FP32", "FP16", "INT32", "INT8", "UINT16", "BF16"]
SHAPES = [(1, 1), (1, 7), (3, 16), (2, 33), (4, 8), (5, 3), (8, 64), (1, 100)]
FLOAT_EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3.4028235e38, -3.4028235e38, 1.0, -1.0, 0.5,
               6e-8, 65504.0, -65504.0]
FLOAT_SCALARS = [0.0, -0.0, 2.0, -3.5, 1e-45, 3.4028235e38, np.inf, -np.inf, np.nan, 65504.0, 6e-8]
INT_MIN, INT_MAX = -(1 << 31), (1 << 31) - 1
INT_EDGES = [0, 1, -1, 2, 31, 32, 33, 40, INT_MIN, INT_MAX, INT_MIN + 1, 7, -7]
INT_SCALARS = [0, 1, -1, 3, -8, 31, 32, 100, INT_MAX, INT_MIN, (1 << 32) + 5]
SHIFT_COUNTS = [0, 1, 3, 7, 8, 15, 16, 31, 32, 100]   # a negative constant count is a compile-time error

f32 = np.float32
# BF16 values are held as float32 arrays of bfloat16-representable values (rounded by _as after
# every op, as the kernels compute 16-bit floats in float and round back after each op).
_NP = {"FP32": np.float32, "FP16": np.float16, "INT32": np.int32, "INT8": np.int8, "UINT16": np.uint16,
       "BF16": np.float32}


def round_bf16(x):
    """float32 values rounded to bfloat16 (to nearest, ties to even; NaN stays NaN), as float32."""
    x = np.asarray(x, np.float32)
    bits = x.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16).astype(np.uint32)
    return np.where(np.isnan(x), np.float32(np.nan), rounded.view(np.float32)).astype(np.float32)


def _as(dtype, x):
    """An op's result as the tile dtype holds it."""
    x = np.asarray(x)
    if dtype == "BF16":
        with np.errstate(all="ignore"):
            return round_bf16(x.astype(np.float32))
    with np.errstate(over="ignore", invalid="ignore"):
        return x.astype(_NP[dtype])


def _relu(x):
    return np.where(np.isnan(x) | (x > 0), x, x.dtype.type(0))


def _maximum(a, b):   # NaN from either operand; of two equal values (+0 and -0) the second, as np.maximum (docs/kernels.md)
    return np.where(np.isnan(a) | (a > b), a, b)


def _minimum(a, b):
    return np.where(np.isnan(a) | (a < b), a, b)


def _extreme(x, axis, is_max):
    """np.max / np.min along `axis`, with a zero result signed as the kernels sign it: of equal
    zeros max gives +0 if any is +0 and min -0 if any is -0 (NumPy's sign depends on its order)."""
    r = (np.max if is_max else np.min)(x, axis=axis, keepdims=True)
    if x.dtype.kind != "f":
        return r
    preferred = (x == 0) & (np.signbit(x) != is_max)   # a +0 for max, a -0 for min
    signed = np.where(preferred.any(axis=axis, keepdims=True), x.dtype.type(0.0 if is_max else -0.0), r)
    return np.where(r == 0, signed, r)


def _reductions(ops):
    ops.update({"row_max": ("r", lambda x: _extreme(x, 1, True)),
                "row_min": ("r", lambda x: _extreme(x, 1, False)),
                "col_max": ("c", lambda x: _extreme(x, 0, True)),
                "col_min": ("c", lambda x: _extreme(x, 0, False))})
    return ops


# name -> (arity: 1 unary, 2 binary, "s" tile x scalar, "r" / "c" row / column reduction; NumPy
# reference on arrays of the tile's dtype)
FLOAT_OPS = _reductions({
    "add": (2, np.add), "sub": (2, np.subtract), "mul": (2, np.multiply), "div": (2, np.divide),
    "maximum": (2, _maximum), "minimum": (2, _minimum),
    "neg": (1, np.negative), "abs": (1, np.abs), "relu": (1, _relu), "sqrt": (1, np.sqrt),
    "recip": (1, lambda x: x.dtype.type(1) / x), "rsqrt": (1, lambda x: (f32(1) / np.sqrt(x.astype(f32))).astype(x.dtype)),   # in float, rounded once
    "adds": ("s", np.add), "subs": ("s", np.subtract), "muls": ("s", np.multiply), "divs": ("s", np.divide),
    "maximums": ("s", _maximum), "minimums": ("s", _minimum),
})


def _wrapping(dt, f):
    """An integer op computed on int64 and wrapped to the tile dtype `dt` (two's complement)."""
    info = np.iinfo(dt)
    def g(a, b=None):
        a64 = np.asarray(a, np.int64)
        r = f(a64) if b is None else f(a64, np.asarray(b, np.int64))
        return ((r - int(info.min)) % (1 << info.bits) + int(info.min)).astype(dt)
    return g


def _div(a, b):   # toward zero; by 0 gives 0 (MIN / -1 wraps in _wrapping)
    q = np.where(b == 0, 0, np.abs(a) // np.where(b == 0, 1, np.abs(b)))
    return np.where((a < 0) != (b < 0), -q, q)


def _rem(a, b):   # floor modulo; by 0 and by -1 give 0
    return np.where((b == 0) | (b == -1), 0, np.mod(a, np.where(b == 0, 1, b)))


def _shifts(bits):
    def shl(a, n):
        return np.where(n >= bits, 0, np.where(n < 0, a, a << np.clip(n, 0, bits - 1)))

    def shr(a, n):   # arithmetic for signed dtypes (a holds the signed value), so logical for unsigned
        return np.where(n >= bits, np.where(a < 0, -1, 0), np.where(n < 0, a, a >> np.clip(n, 0, bits - 1)))
    return shl, shr


def _int_ops(dt):
    w = lambda f: _wrapping(dt, f)   # noqa: E731
    shl, shr = _shifts(np.iinfo(dt).bits)
    return _reductions({
        "add": (2, w(np.add)), "sub": (2, w(np.subtract)), "mul": (2, w(np.multiply)), "div": (2, w(_div)),
        "rem": (2, w(_rem)), "maximum": (2, np.maximum), "minimum": (2, np.minimum),
        "and_": (2, np.bitwise_and), "or_": (2, np.bitwise_or), "xor": (2, np.bitwise_xor),
        "shl": (2, w(shl)), "shr": (2, w(shr)),
        "neg": (1, w(np.negative)), "abs": (1, w(np.abs)), "relu": (1, lambda x: np.maximum(x, dt(0))),
        "adds": ("s", w(np.add)), "subs": ("s", w(np.subtract)), "muls": ("s", w(np.multiply)),
        "divs": ("s", w(_div)), "rems": ("s", w(_rem)), "maximums": ("s", np.maximum),
        "minimums": ("s", np.minimum), "ands": ("s", np.bitwise_and), "ors": ("s", np.bitwise_or),
        "xors": ("s", np.bitwise_xor), "shls": ("s", w(shl)), "shrs": ("s", w(shr)),
    })


INT_OPS = {"INT32": _int_ops(np.int32), "INT8": _int_ops(np.int8), "UINT16": _int_ops(np.uint16)}

CMP_FNS = [np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal]   # cmp_type 0..5


def _composite_ops(ops):
    """The three-operand, broadcast, fill and select ops, over `ops`' own add, sub, mul, div,
    maximum and minimum (wrapped for integers): arity 3 (a, b, c broadcastable), "s3"
    (a, scalar, c), "re" / "ce" (a tile and a column [R, 1] / row [1, C] broadcast over it),
    "cmp_sel" / "cmps_sel" (pl.sel of a pl.cmp / pl.cmps mask of two tiles / a tile and a
    scalar, each cmp_type; the reference is CMP_FNS' NumPy comparison and np.where)."""
    add, sub = ops["add"][1], ops["sub"][1]
    ops.update({
        "addc": (3, lambda a, b, c: add(add(a, b), c)), "subc": (3, lambda a, b, c: sub(sub(a, b), c)),
        "addsc": ("s3", lambda a, s, c: add(add(a, s), c)), "subsc": ("s3", lambda a, s, c: sub(sub(a, s), c)),
        "part_add": (2, add), "part_mul": (2, ops["mul"][1]), "part_max": (2, ops["maximum"][1]),
        "part_min": (2, ops["minimum"][1]),
        "expands": ("s", lambda a, s: np.full(a.shape, s, a.dtype)),
        "row_expand": ("re", lambda a, v: np.broadcast_to(v, a.shape)),
        "col_expand": ("ce", lambda a, v: np.broadcast_to(v, a.shape)),
        "cmp_sel": ("cmp_sel", None), "cmps_sel": ("cmps_sel", None),
    })
    for op in ("add", "sub", "mul", "div", "max", "min"):
        fn = ops["maximum" if op == "max" else "minimum" if op == "min" else op][1]
        ops["row_expand_" + op] = ("re", fn)
        ops["col_expand_" + op] = ("ce", fn)
    return ops


def _int_reductions(ops, dt):
    """Integer row / column sums and products, wrapped (exact in any order)."""
    w = lambda f: _wrapping(dt, f)   # noqa: E731
    ops.update({"row_sum": ("r", w(lambda x: np.sum(x, axis=1, keepdims=True))),
                "col_sum": ("c", w(lambda x: np.sum(x, axis=0, keepdims=True))),
                "row_prod": ("r", w(lambda x: np.prod(x, axis=1, keepdims=True))),
                "col_prod": ("c", w(lambda x: np.prod(x, axis=0, keepdims=True)))})
    if dt == np.uint16:
        ops["not_"] = (1, np.invert)   # not_ needs INT16 / UINT16
    return ops


# Shape moves on full [R, C] tiles, each giving an [R, C] tile again: name -> (arity "f1" / "f2",
# DSL text with {a} {b} {r} {c} {k}, NumPy reference of (a, b, r, c, k)). k is a column in [0, C].
SHAPE_MOVES = {
    "reshape_transpose": ("f1", "pl.tile.transpose(pl.tile.reshape({a}, [{c}, {r}]), 0, 1)",
                          lambda a, b, r, c, k: a.reshape(c, r).T),
    "concat_extract": ("f2", "pl.tile.extract(pl.concat({a}, {b}), 0, {k}, [{r}, {c}])",
                       lambda a, b, r, c, k: np.concatenate([a, b], axis=1)[:, k:k + c]),
    "concat_slice": ("f2", "pl.tile.slice(pl.concat({a}, {b}), [{r}, {c}], [0, {k}])",
                     lambda a, b, r, c, k: np.concatenate([a, b], axis=1)[:, k:k + c]),
}


# Mixed dtypes (reference_ops.md §1.3): pl.add / sub / mul / div of the tile and another tile cast
# to a second dtype compute in the promoted dtype; the result is cast back to the tile's dtype.
_WIDTH = {"FP32": 32, "FP16": 16, "INT32": 32, "INT8": 8, "UINT16": 16, "BF16": 16}
MIXED_OPS = ("add", "sub", "mul", "div")


def _is_float(dtype: str) -> bool:
    return dtype in ("FP32", "FP16", "BF16")


def promote(a: str, b: str) -> str:
    """The promoted dtype of a tile op with operands of dtypes a and b (§1.3)."""
    fa, fb = _is_float(a), _is_float(b)
    if a == b:
        return a
    if fa != fb:
        return a if fa else b
    if _WIDTH[a] != _WIDTH[b]:
        return a if _WIDTH[a] > _WIDTH[b] else b
    if not fa and a.startswith("U") != b.startswith("U"):
        return b if a.startswith("U") else a
    return a


def convert(x, src: str, dst: str):
    """pl.cast of a tile from dtype src to dst (mode="trunc" when float to integer: toward zero,
    saturating, NaN gives 0; integers wrap; to a narrower float to nearest even)."""
    if src == dst:
        return x
    if dst == "BF16":   # from a float or an integer: through float32, then rounded
        return _as("BF16", x.astype(np.float32))
    out = _NP[dst]
    if _is_float(src) and not _is_float(dst):
        info = np.iinfo(out)
        with np.errstate(invalid="ignore"):
            v = np.clip(np.nan_to_num(np.trunc(x.astype(np.float64)), nan=0.0), info.min, info.max)
        return v.astype(np.int64).astype(out)
    if not _is_float(src) and not _is_float(dst):
        info = np.iinfo(out)
        return ((x.astype(np.int64) - int(info.min)) % (1 << info.bits) + int(info.min)).astype(out)
    with np.errstate(over="ignore"):
        return x.astype(out)


def cast_text(t: str, src: str, dst: str) -> str:
    mode = ', mode="trunc"' if _is_float(src) and not _is_float(dst) else ""
    return "pl.cast(%s, pl.%s%s)" % (t, dst, mode)


def mixed_text(dtype, op, a, b, other):
    p = promote(dtype, other)
    inner = "pl.%s(t%d, %s)" % (op, a, cast_text("t%d" % b, dtype, other))
    return inner if p == dtype else cast_text(inner, p, dtype)


def mixed_value(dtype, op, x, y, other):
    p = promote(dtype, other)
    xp, yp = convert(x, dtype, p), convert(convert(y, dtype, other), other, p)
    fn = _ops(p)[op][1]
    return convert(_as(p, fn(xp, yp)), p, dtype)


def _mixed(ops):
    ops["mixed"] = ("mx", None)
    return ops


def _shape_moves(ops):
    ops.update({name: (arity, None) for name, (arity, _, _) in SHAPE_MOVES.items()})
    return ops


def _rounded(ops, rnd):
    """`ops` with every result passed through rnd (BF16: NumPy has no bfloat16 arithmetic)."""
    return {n: (ar, fn if fn is None else (lambda f: lambda *a: rnd(f(*a)))(fn)) for n, (ar, fn) in ops.items()}


def _float_extras(ops):
    _composite_ops(ops)
    _shape_moves(ops)
    _mixed(ops)
    ops["lrelu"] = ("s", lambda x, s: np.where(x > 0, x, x * s))
    ops["prelu"] = (2, lambda x, s: np.where(x > 0, x, x * s))
    return ops


# BF16 rounds after every op, the three-operand ops' intermediate too, as the kernels do.
BF16_OPS = _float_extras(_rounded(FLOAT_OPS, round_bf16))
_float_extras(FLOAT_OPS)
for _d, _dt in (("INT32", np.int32), ("INT8", np.int8), ("UINT16", np.uint16)):
    _composite_ops(INT_OPS[_d])
    _shape_moves(INT_OPS[_d])
    _mixed(INT_OPS[_d])
    _int_reductions(INT_OPS[_d], _dt)


def _round_mode(mode):
    """Float -> INT32 with a tile cast mode (docs/dsl.md "Cast modes"): saturating, NaN gives 0."""
    def f(x):
        v = np.asarray(x, np.float64)
        with np.errstate(invalid="ignore"):
            if mode == "trunc":
                r = np.trunc(v)
            elif mode == "rint":
                r = np.rint(v)
            elif mode == "round":   # ties away from zero
                r = np.sign(v) * np.floor(np.abs(v) + 0.5)
            elif mode == "floor":
                r = np.floor(v)
            elif mode == "ceil":
                r = np.ceil(v)
            else:   # "odd": to nearest, ties to the odd neighbour
                fl = np.floor(v)
                tie = (v - fl) == 0.5
                r = np.where(tie, np.where(np.mod(fl, 2) == 0, fl + 1, fl), np.rint(v))
            r = np.clip(np.nan_to_num(r, nan=0.0), INT_MIN, INT_MAX)
        return r.astype(np.int64).astype(np.int32)
    return f


CAST_MODES = ["trunc", "rint", "round", "floor", "ceil", "odd"]
# cast round trips: name -> (DSL text with {t} and {dt}, reference on arrays of the tile's dtype)
FLOAT_CASTS = {"cast_i32_" + m: ('pl.cast(pl.cast({t}, pl.INT32, mode="%s"), pl.{dt})' % m,
                                 lambda x, m=m: _round_mode(m)(x).astype(x.dtype)) for m in CAST_MODES}
FLOAT_CASTS["cast_f16"] = ("pl.cast(pl.cast({t}, pl.FP16), pl.{dt})", lambda x: x.astype(np.float16).astype(x.dtype))
def _int_casts(dtype):
    """Cast round trips of an integer tile: through FP32 (back toward zero, saturating) and
    through another integer dtype (wrapping)."""
    dt = _NP[dtype]
    casts = {"cast_f32_trunc": ('pl.cast(pl.cast({t}, pl.FP32), pl.{dt}, mode="trunc")',
                                lambda x: np.clip(np.trunc(x.astype(f32).astype(np.float64)), np.iinfo(dt).min,
                                                  np.iinfo(dt).max).astype(dt))}
    for other in ("INT8", "UINT16", "INT32"):
        if other != dtype:
            casts["cast_" + other.lower()] = ("pl.cast(pl.cast({t}, pl.%s), pl.{dt})" % other,
                                              lambda x, o=_NP[other]: x.astype(o).astype(dt))
    return casts


INT_CASTS = {d: _int_casts(d) for d in ("INT32", "INT8", "UINT16")}
for _name, (_text, _fn) in FLOAT_CASTS.items():
    FLOAT_OPS[_name] = BF16_OPS[_name] = ("x", _fn)
for _d, _casts in INT_CASTS.items():
    for _name, (_text, _fn) in _casts.items():
        INT_OPS[_d][_name] = ("x", _fn)


def _ops(dtype):
    return INT_OPS[dtype] if dtype in INT_OPS else BF16_OPS if dtype == "BF16" else FLOAT_OPS


def _casts(dtype):
    return INT_CASTS[dtype] if dtype in INT_CASTS else FLOAT_CASTS


def _is_int(dtype):
    return dtype in INT_OPS


def _scalar_value(dtype, v):
    """The scalar as the op applies it: converted to the tile's dtype first (wrapping for ints)."""
    if _is_int(dtype):
        info = np.iinfo(_NP[dtype])
        return _NP[dtype](((v - int(info.min)) % (1 << info.bits)) + int(info.min))
    if dtype == "BF16":
        return np.float32(round_bf16(np.float32(v)))
    with np.errstate(over="ignore"):
        return _NP[dtype](v)


def _scalar_text(v):
    if isinstance(v, int):
        return repr(v)
    if np.isnan(v):
        return "math.nan"
    if np.isinf(v):
        return "math.inf" if v > 0 else "-math.inf"
    return repr(float(v))


# Tensor form (a third of the seeds, tensor_form): the same chains written on tensors inside the
# kernel (anchor_features.md §9: ConvertTensorToTileOps lowers them): the ops with a tensor
# spelling, a scalar operand through the plain name (pl.add(t, 2.0)), binary ops on equal shapes or
# a full tensor with a column ([R, N] with [R, 1]: row_expand_*), pl.assemble for the stores.
TENSOR_OPS = {"add", "sub", "mul", "div", "maximum", "minimum", "neg", "abs", "sqrt", "recip", "rsqrt",
              "row_max", "row_min", "adds", "subs", "muls", "divs", "maximums", "minimums",
              # the reference's dispatching names (reference_ops.md §1.1), mirrored on tensors
              "expands", "row_sum", "col_sum", "row_prod", "col_prod", "col_max", "col_min", "part_add", "part_mul",
              "part_max", "part_min", "row_expand", "col_expand"} | {
                  "%s_expand_%s" % (d, op) for d in ("row", "col") for op in ("add", "sub", "mul", "div", "max", "min")}
_TENSOR_SCALAR_NAMES = {"adds": "add", "subs": "sub", "muls": "mul", "divs": "div", "maximums": "maximum",
                        "minimums": "minimum"}


def tensor_form(seed: int) -> bool:
    return (seed // len(DTYPES)) % 3 == 2


def dynamic_rows(seed: int) -> bool:
    """Half of the other seeds load their tiles with a run-time row count (nr, passed as R): the
    same values through the kernels' dynamic-shape code (heap tiles, run-time loop bounds); the
    shape moves (which need constant shapes) are left out, and so are shapes of one row (a full
    tile would also be a row vector)."""
    return not tensor_form(seed) and (seed // len(DTYPES)) % 3 == 1


def dynamic_cols(seed: int) -> bool:
    """Half of the run-time-row seeds have a run-time column count too (nc, passed as C), without the
    ops whose result width must be a constant (pl.cmp / pl.cmps masks)."""
    return dynamic_rows(seed) and (seed // (3 * len(DTYPES))) % 2 == 1


def _as_tensor_code(line: str) -> str:
    """A tile-form statement of make_case written on tensors."""
    for tile_name, name in _TENSOR_SCALAR_NAMES.items():
        line = line.replace("pl.%s(" % tile_name, "pl.%s(" % name)
    if line.startswith("out = pl.store("):   # out = pl.store(tK, [o, 0], out)
        args = line[len("out = pl.store("):-len(", out)")]
        return "out = pl.assemble(out, %s)" % args
    return line


def make_case(seed: int):
    """(DSL program text, shape, dtype, reference function of (x, y) -> the output)."""
    rng = random.Random(seed)
    dtype = DTYPES[seed % len(DTYPES)]
    tensors = tensor_form(seed)
    ops = _ops(dtype)
    if tensors:
        ops = {n: v for n, v in ops.items() if n in TENSOR_OPS or (v[0] == "x" and n != "cast_f16")}
    dynamic = dynamic_rows(seed)
    if dynamic:
        ops = {n: v for n, v in ops.items() if v[0] not in ("f1", "f2")}
    if dynamic_cols(seed):
        ops = {n: v for n, v in ops.items() if v[0] not in ("cmp_sel", "cmps_sel")}
    r, c = rng.choice([sh for sh in SHAPES if sh[0] > 1 and (sh[1] > 1 or not dynamic_cols(seed))] if dynamic
                      else SHAPES)
    lines, steps = [], []
    shapes = [(r, c), (r, c)]   # of t0, t1, ...: full tiles, columns [r, 1] and rows [1, c]

    def broadcastable(i, j):
        return all(a == b or a == 1 or b == 1 for a, b in zip(shapes[i], shapes[j]))
    def scalar(name):
        return rng.choice(SHIFT_COUNTS if name in ("shls", "shrs") else INT_SCALARS if _is_int(dtype) else FLOAT_SCALARS)

    def feasible(name, t):   # a broadcast op needs a column / row tile of the full tile's height / width
        arity = ops[name][0]
        if arity in ("re", "ce"):
            return any(shapes[i] == ((r, 1) if arity == "re" else (1, c)) for i in range(t))
        if arity in ("f1", "f2"):
            return True   # t0 and t1 are full
        return not (dtype == "FP16" and name == "cast_f16")   # FP16 to FP16: an error
    for k in range(STATEMENTS):
        t = k + 2
        name = rng.choice([n for n in sorted(ops) if feasible(n, t)])
        arity, _ = ops[name]
        full = [i for i in range(t) if shapes[i] == (r, c)]
        a = rng.randrange(t)   # t0 = load(x), t1 = load(y), then t2 .. : any earlier tile
        like_a = [j for j in range(t) if shapes[j] == shapes[a]]
        if arity == 3:
            b = rng.choice([j for j in range(t) if broadcastable(a, j)])
            ab = tuple(max(x, y) for x, y in zip(shapes[a], shapes[b]))
            cc = rng.choice([j for j in range(t) if all(p == q or p == 1 or q == 1 for p, q in zip(ab, shapes[j]))])
            lines.append("t%d = pl.%s(t%d, t%d, t%d)" % (t, name, a, b, cc))
            shapes.append(tuple(max(x, y) for x, y in zip(ab, shapes[cc])))
            steps.append((name, a, (b, cc)))
        elif arity == "s3":
            v, cc = scalar(name), rng.choice(like_a)
            lines.append("t%d = pl.%s(t%d, %s, t%d)" % (t, name, a, _scalar_text(v), cc))
            shapes.append(shapes[a])
            steps.append((name, a, (v, cc)))
        elif arity in ("re", "ce"):
            a = rng.choice(full)
            v = rng.choice([i for i in range(t) if shapes[i] == ((r, 1) if arity == "re" else (1, c))])
            lines.append("t%d = pl.%s(t%d, t%d)" % (t, name, a, v))
            shapes.append((r, c))
            steps.append((name, a, v))
        elif arity in ("cmp_sel", "cmps_sel"):
            kind, x, y = rng.randrange(len(CMP_FNS)), rng.choice(like_a), rng.choice(like_a)
            o = rng.choice(like_a) if arity == "cmp_sel" else scalar(name)
            mask = ("pl.cmp(t%d, t%d, cmp_type=%d)" % (a, o, kind) if arity == "cmp_sel"
                    else "pl.cmps(t%d, %s, cmp_type=%d)" % (a, _scalar_text(o), kind))
            lines.append("t%d = pl.sel(%s, t%d, t%d)" % (t, mask, x, y))
            shapes.append(shapes[a])
            steps.append((name, a, (kind, o, x, y)))
        elif arity == "mx":
            b = rng.choice([j for j in range(t) if broadcastable(a, j)])
            op, other = rng.choice(MIXED_OPS), rng.choice([d for d in DTYPES if d != dtype])
            lines.append("t%d = %s" % (t, mixed_text(dtype, op, a, b, other)))
            shapes.append(tuple(max(x, y) for x, y in zip(shapes[a], shapes[b])))
            steps.append((name, a, (b, op, other)))
        elif arity in ("f1", "f2"):
            a, b, kk = rng.choice(full), rng.choice(full), rng.randint(0, c)
            lines.append("t%d = %s" % (t, SHAPE_MOVES[name][1].format(a="t%d" % a, b="t%d" % b, r=r, c=c, k=kk)))
            shapes.append((r, c))
            steps.append((name, a, (b, kk)))
        elif arity in ("r", "c"):
            a = rng.choice(full)
            lines.append("t%d = pl.%s(t%d)" % (t, name, a))
            shapes.append((r, 1) if arity == "r" else (1, c))
            steps.append((name, a, None))
        elif arity == 2:
            b = rng.choice([j for j in range(t) if (shapes[j] == shapes[a] or (shapes[a] == (r, c) and shapes[j] == (r, 1))
                                                    if tensors else broadcastable(a, j))])
            lines.append("t%d = pl.%s(t%d, t%d)" % (t, name, a, b))
            shapes.append(tuple(max(x, y) for x, y in zip(shapes[a], shapes[b])))
            steps.append((name, a, b))
        elif arity == "x":   # a cast round trip
            cast = _casts(dtype)[name][0]
            lines.append("t%d = %s" % (t, cast.format(t="t%d" % a, dt=dtype)))
            shapes.append(shapes[a])
            steps.append((name, a, None))
        elif arity == 1:
            lines.append("t%d = pl.%s(t%d)" % (t, name, a))
            shapes.append(shapes[a])
            steps.append((name, a, None))
        else:
            v = scalar(name)
            lines.append("t%d = pl.%s(t%d, %s)" % (t, name, a, _scalar_text(v)))
            shapes.append(shapes[a])
            steps.append((name, a, v))
    # (all statements reductions or their broadcasts of another shape: the loaded tiles are stored)
    full = [i for i in range(2, STATEMENTS + 2) if shapes[i] == (r, c)] or [0, 1]
    # A loop re-assigning full tiles (loop-carried tiles: the kernel passes' carry buffers),
    # each statement reading the carries' current values; then an if / else on the scalar s
    # re-assigning tiles in either branch (a tile assigned in one branch only keeps its value).
    same_shape = [n for n in sorted(ops) if ops[n][0] in (1, 2, 3, "s", "s3", "x", "cmp_sel", "cmps_sel", "f1", "f2", "mx")
                  and not (dtype == "FP16" and n == "cast_f16")]

    def reassign(indent):
        name = rng.choice(same_shape)
        arity = ops[name][0]
        target, a, b = rng.choice(full), rng.choice(full), rng.choice(full)
        if arity == 2:
            text_ = "pl.%s(t%d, t%d)" % (name, a, b)
        elif arity == 3:
            b = (b, rng.choice(full))
            text_ = "pl.%s(t%d, t%d, t%d)" % (name, a, b[0], b[1])
        elif arity == "s3":
            b = (scalar(name), b)
            text_ = "pl.%s(t%d, %s, t%d)" % (name, a, _scalar_text(b[0]), b[1])
        elif arity in ("cmp_sel", "cmps_sel"):
            kind = rng.randrange(len(CMP_FNS))
            o = b if arity == "cmp_sel" else scalar(name)
            b = (kind, o, rng.choice(full), rng.choice(full))
            mask = ("pl.cmp(t%d, t%d, cmp_type=%d)" % (a, o, kind) if arity == "cmp_sel"
                    else "pl.cmps(t%d, %s, cmp_type=%d)" % (a, _scalar_text(o), kind))
            text_ = "pl.sel(%s, t%d, t%d)" % (mask, b[2], b[3])
        elif arity == "mx":
            b = (b, rng.choice(MIXED_OPS), rng.choice([d for d in DTYPES if d != dtype]))
            text_ = mixed_text(dtype, b[1], a, b[0], b[2])
        elif arity in ("f1", "f2"):
            b = (b, rng.randint(0, c))
            text_ = SHAPE_MOVES[name][1].format(a="t%d" % a, b="t%d" % b[0], r=r, c=c, k=b[1])
        elif arity == "s":
            b = scalar(name)
            text_ = "pl.%s(t%d, %s)" % (name, a, _scalar_text(b))
        elif arity == "x":
            text_ = _casts(dtype)[name][0].format(t="t%d" % a, dt=dtype)
        else:
            text_ = "pl.%s(t%d)" % (name, a)
        lines.append(indent + "t%d = %s" % (target, text_))
        return (target, name, a, b)
    trips = rng.choice([0, 1, 2, 5])
    loop, then, orelse = [], [], []
    if full:
        # odd seeds: a run-time trip count (s is the draw, 0 or 1: one more trip on the second)
        lines.append(("for i in pl.range(%d + s):" if seed % 2 else "for i in pl.range(%d):") % trips)
        loop = [reassign("    ") for _ in range(rng.randint(1, 3))]
        lines.append("if s > 0:")
        then = [reassign("    ") for _ in range(rng.randint(1, 2))]
        if rng.random() < 0.7:
            lines.append("else:")
            orelse = [reassign("    ") for _ in range(rng.randint(1, 2))]
    stored = sorted(rng.sample(full, min(STORED, len(full))))
    for i, t in enumerate(stored):
        lines.append("out = pl.store(t%d, [%d, 0], out)" % (t, i * r))
    if tensors:
        lines = [ln[:len(ln) - len(ln.lstrip())] + _as_tensor_code(ln.lstrip()) for ln in lines]
    body = "\n".join("        " + ln for ln in lines)
    text = _PROGRAM.format(r=r, c=c, rows=STORED * r, body=body, dtype=dtype)
    if tensors:
        text = text.replace("t0 = pl.load(x, [0, 0], [%d, %d])" % (r, c), "t0 = x").replace(
            "t1 = pl.load(y, [0, 0], [%d, %d])" % (r, c), "t1 = y")
    if dynamic:
        cols = "nc" if dynamic_cols(seed) else str(c)
        for t in ("x", "y"):
            text = text.replace("pl.load(%s, [0, 0], [%d, %d])" % (t, r, c), "pl.load(%s, [0, 0], [nr, %s])" % (t, cols))

    def apply(vals, name, a, b):
        arity, fn = ops[name]
        sv = lambda v: _scalar_value(dtype, v)   # noqa: E731
        if arity in (2, "re", "ce"):
            return _as(dtype, fn(vals[a], vals[b]))
        if arity == 3:
            return _as(dtype, fn(vals[a], vals[b[0]], vals[b[1]]))
        if arity == "s3":
            return _as(dtype, fn(vals[a], sv(b[0]), vals[b[1]]))
        if arity == "mx":
            return mixed_value(dtype, b[1], vals[a], vals[b[0]], b[2])
        if arity in ("f1", "f2"):
            return _as(dtype, np.ascontiguousarray(SHAPE_MOVES[name][2](vals[a], vals[b[0]], r, c, b[1])))
        if arity in ("cmp_sel", "cmps_sel"):
            kind, o, x, y = b
            mask = CMP_FNS[kind](vals[a], vals[o] if arity == "cmp_sel" else sv(o))
            return _as(dtype, np.where(mask, vals[x], vals[y]))
        if arity == "s":
            return _as(dtype, fn(vals[a], _scalar_value(dtype, b)))
        return _as(dtype, fn(vals[a]))

    def reference(x, y, s):
        vals = [x, y]
        with np.errstate(all="ignore"):
            for name, a, b in steps:
                vals.append(apply(vals, name, a, b))
            for _ in range(trips + (s if seed % 2 else 0)):
                for target, name, a, b in loop:
                    vals[target] = apply(vals, name, a, b)
            for target, name, a, b in (then if s > 0 else orelse):
                vals[target] = apply(vals, name, a, b)
        out = np.zeros((STORED * r, c), _NP[dtype])   # rows of no stored tile stay 0
        for i, t in enumerate(stored):
            out[i * r:(i + 1) * r] = vals[t]
        return out
    return text, (r, c), dtype, reference


_PROGRAM = '''
import math
import pypto.language as pl

@pl.program
class TileExprs:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[{r}, {c}], pl.{dtype}], y: pl.Tensor[[{r}, {c}], pl.{dtype}], s: pl.Scalar[pl.INT64],
          nr: pl.Scalar[pl.INDEX], nc: pl.Scalar[pl.INDEX],
          out: pl.Out[pl.Tensor[[{rows}, {c}], pl.{dtype}]]) -> pl.Tensor[[{rows}, {c}], pl.{dtype}]:
        t0 = pl.load(x, [0, 0], [{r}, {c}])
        t1 = pl.load(y, [0, 0], [{r}, {c}])
{body}
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[{r}, {c}], pl.{dtype}], y: pl.Tensor[[{r}, {c}], pl.{dtype}], s: pl.Scalar[pl.INT64],
             nr: pl.Scalar[pl.INDEX], nc: pl.Scalar[pl.INDEX],
             out: pl.Out[pl.Tensor[[{rows}, {c}], pl.{dtype}]]) -> pl.Tensor[[{rows}, {c}], pl.{dtype}]:
        out = self.k(x, y, s, nr, nc, out)
        return out
'''


def inputs(seed: int, shape, dtype):
    rng = np.random.default_rng(seed)
    if _is_int(dtype):
        info = np.iinfo(_NP[dtype])
        arrs = [rng.integers(max(-50, info.min), 50, shape).astype(_NP[dtype]) for _ in range(2)]
        edges = np.array([v for v in INT_EDGES + [int(info.min), int(info.max)] if info.min <= v <= info.max],
                         np.int64).astype(_NP[dtype])
    else:
        scale = {"FP32": [1.0, 1e-38, 1e30], "FP16": [1.0, 1e-5, 1e4], "BF16": [1.0, 1e-38, 1e30]}[dtype]
        arrs = [_as(dtype, rng.standard_normal(shape) * rng.choice(scale)) for _ in range(2)]
        edges = _as(dtype, np.array(FLOAT_EDGES, np.float64))
    for arr in arrs:
        mask = rng.random(shape) < 0.3
        arr[mask] = rng.choice(edges, size=int(mask.sum()))
    return arrs


def same_values(got, want):
    """Element-wise: equal (+0 == -0) or both NaN."""
    if got.dtype.kind != "f":
        return got == want
    return (got == want) | (np.isnan(got) & np.isnan(want))


def to_bf16_array(x):
    """float32 values (bfloat16-representable) as pypto takes a pl.BF16 array."""
    try:
        import ml_dtypes
        return np.asarray(x, np.float32).astype(ml_dtypes.bfloat16)
    except ImportError:
        return (np.asarray(x, np.float32).view(np.uint32) >> 16).astype(np.uint16)


def from_bf16_array(a):
    if a.dtype == np.uint16:
        return (a.astype(np.uint32) << 16).view(np.float32)
    return a.astype(np.float32)


def check(seed: int):
    """Builds case `seed`, runs it on two input draws and returns the disagreements with NumPy."""
    import pypto
    import pypto.language as pl
    text, shape, dtype, reference = make_case(seed)
    prog = pypto.compile(pl.parse_program(text, "tile_exprs_%d.py" % seed))
    findings = []
    for draw in range(2):
        x, y = inputs(seed * 2 + draw, shape, dtype)
        out = np.zeros((STORED * shape[0], shape[1]), _NP[dtype])
        if dtype == "BF16":   # pypto's BF16 arrays: ml_dtypes.bfloat16 when installed, else the uint16 bits
            passed = [to_bf16_array(v) for v in (x, y, out)]
            prog(passed[0], passed[1], draw, shape[0], shape[1], passed[2])
            out = from_bf16_array(passed[2])
        else:
            prog(x, y, draw, shape[0], shape[1], out)   # s = draw: the else / if branch; nr, nc = R, C
        want = reference(x, y, draw)
        ok = same_values(out, want)
        if not ok.all():
            i = tuple(int(v) for v in np.argwhere(~ok)[0])
            findings.append("seed %d (%s) draw %d: %d element(s) differ, first at %s: got %r, NumPy %r"
                            % (seed, dtype, draw, int((~ok).sum()), i, out[i], want[i]))
    return findings
