"""Every tile op of the CPU kernel backend against NumPy, per dtype.

One program per (op family, dtype) computes every op of the family into its own output; each
op is then checked separately against a NumPy reference computed independently:
  FP32   in float32 (float64 for sums / matmul), rtol = atol = 1e-5 elementwise, 1e-4 matmul
  FP16   float16 inputs, computed in float32 and rounded to float16 per op (NumPy's float16
         arithmetic), rtol = atol = 1e-3
  BF16   uint16 bit patterns, computed in float32 and rounded to bfloat16, rtol = atol = 1e-2
  INT8 / INT32 / INT64  exact (wrap-around on overflow; division truncates toward zero)
"""
import numpy as np
import pytest

from e2e_util import TOL, as_float, bf16_as_bits, bf16_bits, from_float, kernel_program, round_to, run_kernel_program

S = [16, 32]
RNG = np.random.default_rng(1234)
FLOATS = ["FP32", "FP16", "BF16"]
INTS = ["INT8", "INT32", "INT64"]


def check_float(dtype, got, expect, tol=None):
    rtol, atol = tol or TOL[dtype]
    np.testing.assert_allclose(as_float(dtype, got), round_to(dtype, expect), rtol=rtol, atol=atol)


# ---- element-wise binary (tile-tile and tile-scalar) ------------------------------------------

BINARY = {
    "add": ("pl.add(ta, tb)", lambda a, b: a + b),
    "sub": ("pl.sub(ta, tb)", lambda a, b: a - b),
    "mul": ("pl.mul(ta, tb)", lambda a, b: a * b),
    "div": ("pl.div(ta, tb)", lambda a, b: a / b),
    "maximum": ("pl.maximum(ta, tb)", np.maximum),
    "minimum": ("pl.minimum(ta, tb)", np.minimum),
    "add_lit": ("pl.add(ta, 3)", lambda a, b: a + 3),
    "mul_param": ("pl.mul(ta, s)", lambda a, b: a * 2),
    "sub_expr": ("pl.sub(ta, s * 2 + 1)", lambda a, b: a - 5),
}


def binary_program(dtype):
    outs = [("o_" + name, S, dtype, expr) for name, (expr, _f) in BINARY.items()]
    sdt = "FP32" if dtype in FLOATS else "INT32"
    return kernel_program([("a", S, dtype), ("b", S, dtype)], outs, scalars=[("s", sdt)])


@pytest.fixture(scope="module", params=FLOATS + INTS)
def binary_results(request):
    dtype = request.param
    if dtype in FLOATS:
        a = RNG.uniform(-4, 4, S).astype(np.float32)
        b = RNG.uniform(0.5, 4, S).astype(np.float32) * RNG.choice([-1, 1], S)
        a, b = round_to(dtype, a), round_to(dtype, b)
        vals = {"a": from_float(dtype, a), "b": from_float(dtype, b)}
        scal = [2.0]
    else:
        info = np.iinfo(np.dtype(dtype.lower()))
        lo, hi = max(info.min, -100), min(info.max, 100)
        a = RNG.integers(lo, hi, S).astype(dtype.lower())
        b = RNG.integers(1, 12, S).astype(dtype.lower()) * RNG.choice([-1, 1], S).astype(dtype.lower())
        vals = {"a": a, "b": b}
        scal = [2]
    outs = run_kernel_program(binary_program(dtype), vals, scalars=scal)
    return dtype, a, b, outs


@pytest.mark.parametrize("op", list(BINARY))
def test_binary_op(binary_results, op):
    dtype, a, b, outs = binary_results
    got = outs["o_" + op]
    if dtype in FLOATS:
        check_float(dtype, got, BINARY[op][1](a, b).astype(np.float32))
    elif op == "div":   # integer division truncates toward zero
        a64, b64 = a.astype(np.int64), b.astype(np.int64)
        np.testing.assert_array_equal(got, (np.abs(a64) // np.abs(b64) * np.sign(a64) * np.sign(b64)).astype(a.dtype))
    else:
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(got, BINARY[op][1](a, b).astype(a.dtype))


# ---- element-wise unary -----------------------------------------------------------------------

UNARY = {
    "exp": ("pl.exp(ta)", np.exp),
    "log": ("pl.log(tp)", None),
    "sqrt": ("pl.sqrt(tp)", None),
    "rsqrt": ("pl.rsqrt(tp)", None),
    "recip": ("pl.recip(tp)", None),
    "neg": ("pl.neg(ta)", np.negative),
    "abs": ("pl.abs(ta)", np.abs),
    "relu": ("pl.relu(ta)", lambda x: np.maximum(x, 0)),
}
POSITIVE = {"log": np.log, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x), "recip": lambda x: 1 / x}


@pytest.fixture(scope="module", params=FLOATS)
def unary_results(request):
    dtype = request.param
    a = round_to(dtype, RNG.uniform(-3, 3, S).astype(np.float32))
    p = round_to(dtype, RNG.uniform(0.25, 5, S).astype(np.float32))
    outs = run_kernel_program(
        kernel_program([("a", S, dtype), ("p", S, dtype)], [("o_" + n, S, dtype, e) for n, (e, _f) in UNARY.items()]),
        {"a": from_float(dtype, a), "p": from_float(dtype, p)})
    return dtype, a, p, outs


@pytest.mark.parametrize("op", list(UNARY))
def test_unary_op(unary_results, op):
    dtype, a, p, outs = unary_results
    ref = POSITIVE[op](p.astype(np.float64)) if op in POSITIVE else UNARY[op][1](a.astype(np.float64))
    check_float(dtype, outs["o_" + op], ref.astype(np.float32))


@pytest.mark.parametrize("dtype", ["INT8", "INT32"])
def test_integer_unary(dtype):
    a = RNG.integers(-100, 100, S).astype(dtype.lower())
    outs = run_kernel_program(kernel_program([("a", S, dtype)], [("n", S, dtype, "pl.neg(ta)"),
                                                                  ("b", S, dtype, "pl.abs(ta)"),
                                                                  ("r", S, dtype, "pl.relu(ta)")]), {"a": a})
    np.testing.assert_array_equal(outs["n"], -a)
    np.testing.assert_array_equal(outs["b"], np.abs(a))
    np.testing.assert_array_equal(outs["r"], np.maximum(a, 0))


# ---- row reductions and row broadcasts ----------------------------------------------------------

ROW = [S[0], 1]


@pytest.mark.parametrize("dtype", ["FP32", "FP16", "BF16"])
def test_row_reductions_and_expands(dtype):
    a = round_to(dtype, RNG.uniform(-2, 2, S).astype(np.float32))
    r = round_to(dtype, RNG.uniform(0.5, 2, ROW).astype(np.float32))
    outs = run_kernel_program(kernel_program(
        [("a", S, dtype), ("r", ROW, dtype)],
        [("mx", ROW, dtype, "pl.row_max(ta)"), ("sm", ROW, dtype, "pl.row_sum(ta)"),
         ("mn", ROW, dtype, "pl.row_min(ta)"),
         ("ea", S, dtype, "pl.row_expand_add(ta, tr)"), ("es", S, dtype, "pl.row_expand_sub(ta, tr)"),
         ("em", S, dtype, "pl.row_expand_mul(ta, tr)"), ("ed", S, dtype, "pl.row_expand_div(ta, tr)")]),
        {"a": from_float(dtype, a), "r": from_float(dtype, r)})
    a64, r64 = a.astype(np.float64), r.astype(np.float64)
    tol = TOL[dtype] if dtype != "FP32" else (1e-5, 1e-4)   # a sum of 32 terms
    check_float(dtype, outs["mx"], a64.max(axis=1, keepdims=True), tol)
    check_float(dtype, outs["sm"], a64.sum(axis=1, keepdims=True), tol)
    check_float(dtype, outs["mn"], a64.min(axis=1, keepdims=True), tol)
    check_float(dtype, outs["ea"], a64 + r64, tol)
    check_float(dtype, outs["es"], a64 - r64, tol)
    check_float(dtype, outs["em"], a64 * r64, tol)
    check_float(dtype, outs["ed"], a64 / r64, tol)


# ---- matmul -----------------------------------------------------------------------------------

MK, KN, MN = [24, 40], [40, 20], [24, 20]


@pytest.mark.parametrize("dtype", ["FP32", "FP16", "BF16", "INT8"])
def test_matmul(dtype):
    if dtype == "INT8":
        a = RNG.integers(-8, 8, MK).astype(np.int8)
        b = RNG.integers(-8, 8, KN).astype(np.int8)
        va, vb, fa, fb = a, b, a.astype(np.float64), b.astype(np.float64)
    else:
        fa = round_to(dtype, RNG.standard_normal(MK).astype(np.float32)).astype(np.float64)
        fb = round_to(dtype, RNG.standard_normal(KN).astype(np.float32)).astype(np.float64)
        va, vb = from_float(dtype, fa), from_float(dtype, fb)
    # The product's dtype (reference_ops.md §2): INT32 for integer operands, FP32 for float ones.
    out = "INT32" if dtype == "INT8" else "FP32"
    acc = (RNG.integers(-1000, 1000, MN).astype(np.int32) if dtype == "INT8"
           else RNG.standard_normal(MN).astype(np.float32))
    outs = run_kernel_program(kernel_program(
        [("a", MK, dtype), ("b", KN, dtype), ("c", MN, out)],
        [("mm", MN, out, "pl.matmul(ta, tb)"),
         ("mma", MN, out, "pl.matmul_acc(tc, ta, tb)"),
         ("mv", MN, out, "pl.matmul(pl.move(ta, target_memory=pl.MemorySpace.Left), "
                         "pl.move(tb, target_memory=pl.MemorySpace.Right))")]),
        {"a": va, "b": vb, "c": acc})
    ref = fa @ fb   # FP32 accumulation of exactly representable products: tight tolerance
    np.testing.assert_allclose(outs["mm"], ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(outs["mma"], ref + acc, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(outs["mv"], ref, rtol=1e-4, atol=1e-4)


def test_matmul_large_blocked():
    # Larger than the prelude's K / N blocks (128 / 512): exercises the blocking edges.
    M, K, N = 37, 300, 530
    a = RNG.standard_normal((M, K)).astype(np.float32)
    b = RNG.standard_normal((K, N)).astype(np.float32)
    outs = run_kernel_program(kernel_program([("a", [M, K], "FP32"), ("b", [K, N], "FP32")],
                                             [("c", [M, N], "FP32", "pl.matmul(ta, tb)")]), {"a": a, "b": b})
    np.testing.assert_allclose(outs["c"], a.astype(np.float64) @ b.astype(np.float64), rtol=1e-4, atol=1e-3)


# ---- cast, full, move -------------------------------------------------------------------------

def test_casts():
    f = RNG.uniform(-100, 100, S).astype(np.float32)
    i = RNG.integers(-1000, 1000, S).astype(np.int32)
    i8 = RNG.integers(-128, 127, S).astype(np.int8)
    h = RNG.uniform(-10, 10, S).astype(np.float16)
    outs = run_kernel_program(kernel_program(
        [("f", S, "FP32"), ("i", S, "INT32"), ("e", S, "INT8"), ("h", S, "FP16")],
        [("f2h", S, "FP16", "pl.cast(tf, pl.FP16)"), ("f2b", S, "BF16", "pl.cast(tf, pl.BF16)"),
         ("f2i", S, "INT32", 'pl.cast(tf, pl.INT32, mode="trunc")'), ("i2f", S, "FP32", "pl.cast(ti, pl.FP32)"),
         ("e2i", S, "INT32", "pl.cast(te, pl.INT32)"), ("h2f", S, "FP32", "pl.cast(th, pl.FP32)"),
         ("i2l", S, "INT64", "pl.cast(ti, pl.INT64)"), ("mv", S, "FP32", "pl.move(tf, target_memory=pl.MemorySpace.Vec)")]),
        {"f": f, "i": i, "e": i8, "h": h})
    np.testing.assert_array_equal(outs["f2h"], f.astype(np.float16))
    np.testing.assert_array_equal(bf16_as_bits(outs["f2b"]), bf16_bits(f))
    np.testing.assert_array_equal(outs["f2i"], f.astype(np.int32))          # truncation toward zero
    np.testing.assert_array_equal(outs["i2f"], i.astype(np.float32))
    np.testing.assert_array_equal(outs["e2i"], i8.astype(np.int32))
    np.testing.assert_array_equal(outs["h2f"], h.astype(np.float32))
    np.testing.assert_array_equal(outs["i2l"], i.astype(np.int64))
    np.testing.assert_array_equal(outs["mv"], f)


def test_full():
    outs = run_kernel_program(kernel_program(
        [], [("a", S, "FP32", "pl.tile.full([16, 32], pl.FP32, 1.5)"), ("b", S, "INT32", "pl.tile.full([16, 32], pl.INT32, -7)"),
             ("c", S, "FP16", "pl.tile.full([16, 32], pl.FP16, 0.1)"), ("d", S, "INT64", "pl.tile.full([16, 32], pl.INT64, s)")],
        scalars=[("s", "INT64")]), {}, scalars=[1 << 40])
    np.testing.assert_array_equal(outs["a"], np.full(S, 1.5, np.float32))
    np.testing.assert_array_equal(outs["b"], np.full(S, -7, np.int32))
    np.testing.assert_array_equal(outs["c"], np.full(S, 0.1, np.float16))
    np.testing.assert_array_equal(outs["d"], np.full(S, 1 << 40, np.int64))


# ---- control flow and scalar arithmetic inside a kernel -----------------------------------------

def test_kernel_loop_with_branch_and_dynamic_offsets():
    # Row by row: even rows doubled, odd rows negated, accumulated into a running tile.
    body = [
        "acc = pl.tile.full([1, 32], pl.FP32, 0.0)",
        "for i in pl.range(16):",
        "    row = pl.load(a, [i, 0], [1, 32])",
        "    if i % 2 == 0:",
        "        v = pl.mul(row, 2.0)",
        "    else:",
        "        v = pl.neg(row)",
        "    o = pl.store(v, [15 - i, 0], o)",
        "    acc = pl.add(acc, v)",
    ]
    a = RNG.standard_normal(S).astype(np.float32)
    outs = run_kernel_program(kernel_program([("a", S, "FP32")], [("o", S, "FP32", "pl.load(o, [0, 0], [16, 32])"),
                                                                   ("s", [1, 32], "FP32", "acc")], body=body),
                              {"a": a})
    v = np.where((np.arange(16) % 2 == 0)[:, None], a * 2, -a)
    np.testing.assert_allclose(outs["o"], v[::-1], rtol=1e-6)
    np.testing.assert_allclose(outs["s"], v.sum(axis=0, keepdims=True), rtol=1e-5, atol=1e-5)


def test_scalar_arithmetic_python_semantics():
    # floor division and modulo of negative numbers follow Python, as in the DSL.
    body = ["q = (s - 7) // 4", "r = (s - 7) % 4"]
    outs = run_kernel_program(kernel_program([], [("o", [2], "INT64", "pl.tile.full([2], pl.INT64, q)"),
                                                  ("p", [2], "INT64", "pl.tile.full([2], pl.INT64, r)")],
                                             scalars=[("s", "INT64")], body=body), {}, scalars=[2])
    assert list(outs["o"]) == [(2 - 7) // 4] * 2 and list(outs["p"]) == [(2 - 7) % 4] * 2


def test_loop_carries_updated_in_place_keep_their_semantics():
    # Carries written in place by the generated code must still behave as values: a rebinding of
    # the carry read after the update (prev), swapped carries, and an accumulation.
    body = [
        "acc = pl.tile.full([4, 8], pl.FP32, 0.0)",
        "x = ta",
        "y = tb",
        "d = pl.tile.full([4, 8], pl.FP32, 0.0)",
        "for i in pl.range(3):",
        "    prev = acc",
        "    mv = pl.move(acc, target_memory=pl.MemorySpace.Left)",
        "    acc = pl.add(acc, ta)",
        "    d = pl.add(d, pl.add(pl.sub(acc, prev), pl.sub(acc, mv)))",
        "    t = x",
        "    x = y",
        "    y = t",
        "    acc = pl.mul(acc, 2.0)",
    ]
    a = RNG.standard_normal([4, 8]).astype(np.float32)
    b = RNG.standard_normal([4, 8]).astype(np.float32)
    outs = run_kernel_program(kernel_program(
        [("a", [4, 8], "FP32"), ("b", [4, 8], "FP32")],
        [("o_acc", [4, 8], "FP32", "acc"), ("o_d", [4, 8], "FP32", "d"), ("o_x", [4, 8], "FP32", "x")], body=body),
        {"a": a, "b": b})
    acc, d, x, y = np.zeros_like(a), np.zeros_like(a), a, b
    for _ in range(3):
        prev = acc
        acc = acc + a
        d = d + 2 * (acc - prev)
        x, y = y, x
        acc = acc * 2
    np.testing.assert_allclose(outs["o_acc"], acc, rtol=1e-6)
    np.testing.assert_allclose(outs["o_d"], d, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(outs["o_x"], x, rtol=0)
