"""The reference tile ops (spec/reference_ops.md) against NumPy, end to end.

Ops are batched into a few compiled programs (one per dtype family) to keep the suite fast;
each output is checked separately against an independent NumPy reference:
  FP32 element-wise rtol = atol = 1e-5 (sin / cos / expdif 1e-5 relative to libm), reductions
  and products 1e-4; FP16 rounded per op as NumPy's float16, 1e-3; integers exact.
"""
import numpy as np
import pytest

from e2e_util import as_float, from_float, kernel_program, round_to, run_kernel_program

M, N, K = 16, 32, 24
S, ROW, COL = [M, N], [M, 1], [1, N]
RNG = np.random.default_rng(4321)
MASK_COLS = ((N + 7) // 8 + 31) // 32 * 32


def floor_mod(a, b):
    return a - np.floor(a / b) * b


def pack_mask(pred):
    """The reference's packed predicate layout: row i, element j -> bit j % 8 of byte j / 8."""
    out = np.zeros((pred.shape[0], MASK_COLS), np.uint8)
    for j in range(pred.shape[1]):
        out[:, j // 8] |= (pred[:, j].astype(np.uint8) << (j % 8))
    return out


# ---- floats ---------------------------------------------------------------------------------

FLOAT_OPS = {
    # name: (DSL expr, out shape, reference(a, b, r, c, m, w, bias) -> float64)
    "rem": ("pl.rem(ta, tb)", S, lambda v: floor_mod(v["a"], v["b"])),
    "rem_tmp": ("pl.rem(ta, tb, tb)", S, lambda v: floor_mod(v["a"], v["b"])),
    "rems": ("pl.rems(ta, 1.5)", S, lambda v: floor_mod(v["a"], 1.5)),
    "add_bcast_row": ("pl.add(ta, tc)", S, lambda v: v["a"] + v["c"]),
    "mul_bcast_col": ("pl.mul(ta, tr)", S, lambda v: v["a"] * v["r"]),
    "sub_outer": ("pl.sub(tr, tc)", S, lambda v: v["r"] - v["c"]),
    "adds": ("pl.adds(ta, 2.5)", S, lambda v: v["a"] + 2.5),
    "subs": ("pl.subs(ta, s)", S, lambda v: v["a"] - 0.75),
    "muls": ("pl.muls(ta, 3)", S, lambda v: v["a"] * 3),
    "divs": ("pl.divs(ta, 4.0)", S, lambda v: v["a"] / 4),
    "maximums": ("pl.maximums(ta, 0.5)", S, lambda v: np.maximum(v["a"], 0.5)),
    "minimums": ("pl.minimums(ta, -0.5)", S, lambda v: np.minimum(v["a"], -0.5)),
    "lrelu": ("pl.lrelu(ta, 0.1)", S, lambda v: np.where(v["a"] > 0, v["a"], v["a"] * np.float32(0.1))),
    "prelu": ("pl.prelu(ta, tc)", S, lambda v: np.where(v["a"] > 0, v["a"], v["a"] * v["c"])),
    "addc": ("pl.addc(ta, tb, tc)", S, lambda v: v["a"] + v["b"] + v["c"]),
    "subc": ("pl.subc(ta, tb, tr)", S, lambda v: v["a"] - v["b"] - v["r"]),
    "addsc": ("pl.addsc(ta, 2.0, tb)", S, lambda v: v["a"] + 2 + v["b"]),
    "subsc": ("pl.subsc(ta, 2.0, tc)", S, lambda v: v["a"] - 2 - v["c"]),
    "part_add": ("pl.part_add(ta, tb)", S, lambda v: v["a"] + v["b"]),
    "part_mul": ("pl.part_mul(ta, tb)", S, lambda v: v["a"] * v["b"]),
    "part_max": ("pl.part_max(ta, tb)", S, lambda v: np.maximum(v["a"], v["b"])),
    "part_min": ("pl.part_min(ta, tb)", S, lambda v: np.minimum(v["a"], v["b"])),
    "expands": ("pl.expands(ta, s)", S, lambda v: np.full(S, 0.75)),
    "sin": ("pl.tile.sin(ta)", S, lambda v: np.sin(v["a"])),
    "cos": ("pl.tile.cos(ta)", S, lambda v: np.cos(v["a"])),
    "sels1": ("pl.sels(ta, tb, 1)", S, lambda v: v["a"]),
    "sels0": ("pl.sels(ta, tb, 0)", S, lambda v: v["b"]),
    "sel": ("pl.sel(pl.cmp(ta, tb, cmp_type=2), ta, tb)", S, lambda v: np.minimum(v["a"], v["b"])),
    "row_prod": ("pl.row_prod(tq)", ROW, lambda v: v["q"].prod(axis=1, keepdims=True)),
    "row_sum_tmp": ("pl.row_sum(ta, ta)", ROW, lambda v: v["a"].sum(axis=1, keepdims=True)),
    "col_sum": ("pl.col_sum(ta)", COL, lambda v: v["a"].sum(axis=0, keepdims=True)),
    "col_max": ("pl.col_max(ta)", COL, lambda v: v["a"].max(axis=0, keepdims=True)),
    "col_min": ("pl.col_min(ta)", COL, lambda v: v["a"].min(axis=0, keepdims=True)),
    "col_prod": ("pl.col_prod(tq)", COL, lambda v: v["q"].prod(axis=0, keepdims=True)),
    "sum_axis0": ("pl.sum(ta, axis=0, keepdim=True)", COL, lambda v: v["a"].sum(axis=0, keepdims=True)),
    "max_axis1": ("pl.max(ta, axis=1, keepdim=True)", ROW, lambda v: v["a"].max(axis=1, keepdims=True)),
    "min_axis_last": ("pl.min(ta, axis=-1, keepdim=True)", ROW, lambda v: v["a"].min(axis=1, keepdims=True)),
    "row_expand": ("pl.row_expand(ta, tr)", S, lambda v: np.broadcast_to(v["r"], S)),
    "row_expand_max": ("pl.row_expand_max(ta, tr)", S, lambda v: np.maximum(v["a"], v["r"])),
    "row_expand_min": ("pl.row_expand_min(ta, tr)", S, lambda v: np.minimum(v["a"], v["r"])),
    "row_expand_expdif": ("pl.row_expand_expdif(ta, tr)", S, lambda v: np.exp(v["a"] - v["r"])),
    "col_expand": ("pl.col_expand(ta, tc)", S, lambda v: np.broadcast_to(v["c"], S)),
    "col_expand_add": ("pl.col_expand_add(ta, tc)", S, lambda v: v["a"] + v["c"]),
    "col_expand_sub": ("pl.col_expand_sub(ta, tc)", S, lambda v: v["a"] - v["c"]),
    "col_expand_mul": ("pl.col_expand_mul(ta, tc)", S, lambda v: v["a"] * v["c"]),
    "col_expand_div": ("pl.col_expand_div(ta, tc)", S, lambda v: v["a"] / v["c"]),
    "col_expand_max": ("pl.col_expand_max(ta, tc)", S, lambda v: np.maximum(v["a"], v["c"])),
    "col_expand_min": ("pl.col_expand_min(ta, tc)", S, lambda v: np.minimum(v["a"], v["c"])),
    "col_expand_expdif": ("pl.col_expand_expdif(ta, tc)", S, lambda v: np.exp(v["a"] - v["c"])),
    "transpose": ("pl.tile.transpose(tw, 0, 1)", [N, K], lambda v: v["w"].T),
    "transpose_view": ("pl.tile.transpose_view(tw)", [N, K], lambda v: v["w"].T),
    "reshape": ("pl.tile.reshape(ta, [32, 16])", [N, M], lambda v: v["a"].reshape(N, M)),
    "concat": ("pl.concat(ta, tr)", [M, N + 1], lambda v: np.concatenate([v["a"], v["r"]], axis=1)),
    "extract": ("pl.tile.extract(ta, 4, 8, [8, 16])", [8, 16], lambda v: v["a"][4:12, 8:24]),
    "slice": ("pl.tile.slice(ta, [4, 8], [i, 2])", [4, 8], lambda v: v["a"][3:7, 2:10]),
    "assemble": ("pl.tile.assemble(ta, tr, [0, 5])", S,
                 lambda v: np.concatenate([v["a"][:, :5], v["r"], v["a"][:, 6:]], axis=1)),
    "fillpad": ("pl.fillpad(ta)", S, lambda v: v["a"]),
    # valid regions (reference_ops.md §1.5, §9; more in test_kernel_valid_ops.py)
    "set_validshape": ("pl.fillpad(pl.set_validshape(ta, 5, 7), 0)", S,
                       lambda v: np.pad(v["a"][:5, :7], ((0, S[0] - 5), (0, S[1] - 7)))),
    "fillpad_inplace": ("pl.tile.fillpad_inplace(pl.tile.slice(ta, [4, 8], [i, 2], [2, 3]), pl.PadValue.min)", [4, 8],
                        lambda v: np.pad(v["a"][3:5, 2:5], ((0, 2), (0, 5)), constant_values=-np.inf)),
    "create": ("pl.create_tile([16, 32], dtype=pl.FP32)", S, lambda v: np.zeros(S)),
    "matmul_bias": ("pl.matmul_bias(tm, tw, tbias)", [M, N], lambda v: v["m"] @ v["w"] + v["bias"]),
    "gemv_bias": ("pl.gemv_bias(tm, tw, tbias)", [M, N], lambda v: v["m"] @ v["w"] + v["bias"]),
    "gemv": ("pl.gemv(tm, tw)", [M, N], lambda v: v["m"] @ v["w"]),
    "gemv_acc": ("pl.gemv_acc(pl.gemv(tm, tw), tm, tw)", [M, N], lambda v: 2 * (v["m"] @ v["w"])),
}


def float_inputs():
    a = RNG.uniform(-3, 3, S).astype(np.float32)
    b = (RNG.uniform(0.5, 3, S) * RNG.choice([-1, 1], S)).astype(np.float32)
    return {"a": a, "b": b, "r": RNG.uniform(0.5, 2, ROW).astype(np.float32),
            "c": RNG.uniform(0.5, 2, COL).astype(np.float32), "q": RNG.uniform(0.8, 1.2, S).astype(np.float32),
            "m": RNG.uniform(-1, 1, [M, K]).astype(np.float32), "w": RNG.uniform(-1, 1, [K, N]).astype(np.float32),
            "bias": RNG.uniform(-1, 1, COL).astype(np.float32)}


@pytest.fixture(scope="module")
def float_results():
    vals = float_inputs()
    inputs = [(n, list(v.shape), "FP32") for n, v in vals.items()]
    outs = [("o_" + n, shape, "FP32", e) for n, (e, shape, _f) in FLOAT_OPS.items()]
    prog = kernel_program(inputs, outs, scalars=[("s", "FP32"), ("i", "INDEX")])
    return vals, run_kernel_program(prog, vals, scalars=[0.75, 3])


@pytest.mark.parametrize("op", list(FLOAT_OPS))
def test_float_reference_op(float_results, op):
    vals, outs = float_results
    v64 = {k: x.astype(np.float64) for k, x in vals.items()}
    expect = np.asarray(FLOAT_OPS[op][2](v64), np.float64)
    tol = 1e-4 if op.startswith(("row_", "col_", "sum", "matmul", "gemv")) else 1e-5
    np.testing.assert_allclose(outs["o_" + op], expect, rtol=tol, atol=tol)


def test_cmp_masks_have_the_reference_bit_layout():
    a = RNG.integers(-3, 3, S).astype(np.float32)
    b = RNG.integers(-3, 3, S).astype(np.float32)
    modes = {0: np.equal, 1: np.not_equal, 2: np.less, 3: np.less_equal, 4: np.greater, 5: np.greater_equal}
    outs = [("eq%d" % k, [M, MASK_COLS], "UINT8", "pl.cmp(ta, tb, cmp_type=%d)" % k) for k in modes]
    outs += [("cs%d" % k, [M, MASK_COLS], "UINT8", "pl.cmps(ta, 1.0, cmp_type=%d)" % k) for k in modes]
    outs += [("cd", [M, MASK_COLS], "UINT8", "pl.cmp(ta, 0.0)")]     # scalar rhs, default EQ
    res = run_kernel_program(kernel_program([("a", S, "FP32"), ("b", S, "FP32")], outs), {"a": a, "b": b})
    for k, f in modes.items():
        np.testing.assert_array_equal(res["eq%d" % k], pack_mask(f(a, b)), err_msg="cmp mode %d" % k)
        np.testing.assert_array_equal(res["cs%d" % k], pack_mask(f(a, 1.0)), err_msg="cmps mode %d" % k)
    np.testing.assert_array_equal(res["cd"], pack_mask(a == 0))


def test_fp16_ops_round_per_op():
    a = round_to("FP16", RNG.uniform(-3, 3, S).astype(np.float32))
    c = round_to("FP16", RNG.uniform(0.5, 2, COL).astype(np.float32))
    outs = run_kernel_program(kernel_program(
        [("a", S, "FP16"), ("c", COL, "FP16")],
        [("x", S, "FP16", "pl.col_expand_mul(ta, tc)"), ("y", COL, "FP16", "pl.col_max(ta)"),
         ("z", S, "FP16", "pl.lrelu(ta, 0.5)"), ("t", [N, M], "FP16", "pl.tile.transpose(ta, 1, 0)")]),
        {"a": from_float("FP16", a), "c": from_float("FP16", c)})
    np.testing.assert_allclose(as_float("FP16", outs["x"]), round_to("FP16", a * c), rtol=1e-3, atol=1e-3)
    np.testing.assert_array_equal(as_float("FP16", outs["y"]), a.max(axis=0, keepdims=True))
    np.testing.assert_allclose(as_float("FP16", outs["z"]), round_to("FP16", np.where(a > 0, a, a * 0.5)), rtol=1e-3)
    np.testing.assert_array_equal(as_float("FP16", outs["t"]), a.T)


# ---- integers -------------------------------------------------------------------------------

def int_shift(a, c, left):
    bits = a.dtype.itemsize * 8
    out = np.where(c < 0, a, 0).astype(a.dtype)
    ok = (c >= 0) & (c < bits)
    if left:
        shifted = (a.astype(np.int64) << np.clip(c, 0, bits - 1)).astype(a.dtype)
    else:
        shifted = (a >> np.clip(c, 0, bits - 1).astype(a.dtype)).astype(a.dtype)
    over = (c >= bits) & (a < 0) if not left else np.zeros_like(ok)
    out = np.where(ok, shifted, out)
    return np.where(over, -1, out).astype(a.dtype)


INT_OPS = {
    "rem": ("pl.rem(ta, tb)", S, lambda v: np.where(v["b"] == 0, 0, np.mod(v["a"], np.where(v["b"] == 0, 1, v["b"])))),
    "rems": ("pl.rems(ta, -7)", S, lambda v: np.mod(v["a"], -7)),
    "and": ("pl.and_(ta, tb)", S, lambda v: v["a"] & v["b"]),
    "or": ("pl.or_(ta, tb)", S, lambda v: v["a"] | v["b"]),
    "xor": ("pl.xor(ta, tb, tb)", S, lambda v: v["a"] ^ v["b"]),
    "ands": ("pl.ands(ta, 12)", S, lambda v: v["a"] & 12),
    "ors": ("pl.ors(ta, 5)", S, lambda v: v["a"] | 5),
    "xors": ("pl.xors(ta, 255)", S, lambda v: v["a"] ^ 255),
    "shl": ("pl.shl(ta, tk)", S, lambda v: int_shift(v["a"], v["k"], True)),
    "shr": ("pl.shr(ta, tk)", S, lambda v: int_shift(v["a"], v["k"], False)),
    "shls": ("pl.shls(ta, 3)", S, lambda v: (v["a"] << 3).astype(np.int32)),
    "shrs": ("pl.shrs(ta, 2)", S, lambda v: v["a"] >> 2),
    "adds": ("pl.adds(ta, 7)", S, lambda v: v["a"] + 7),
    "muls_frac": ("pl.muls(ta, 0.5)", S, lambda v: v["a"] * 0),          # scalar converted to INT32 first
    "maximums": ("pl.maximums(ta, 0)", S, lambda v: np.maximum(v["a"], 0)),
    "gather": ("pl.tile.gather(ta, tidx)", S, lambda v: v["a"].flat[v["idx"]]),
    "scatter": ("pl.tile.scatter(pl.tile.adds(ta, 0), tb, tidx)", S, None),
    "gather_mask1": ("pl.tile.gather_mask(ta, mask_pattern=1)", [M, N // 2], lambda v: v["a"][:, 0::2]),
    "gather_mask4": ("pl.tile.gather_mask(ta, mask_pattern=4)", [M, N // 4], lambda v: v["a"][:, 1::4]),
    "scatter_mask": ("pl.tile.scatter_mask(pl.tile.adds(ta, 0), pl.tile.gather_mask(tb, mask_pattern=2), mask_pattern=2)", S,
                     lambda v: np.where(np.arange(N) % 2 == 1, v["b"], v["a"])),
    "ci": ("pl.tile.ci(i, [1, 32], dtype=pl.INT32)", [1, N], lambda v: np.arange(3, 3 + N)[None, :]),
    "arange_desc": ("pl.tile.arange(i, [1, 32], dtype=pl.INT32, descending=True)", [1, N],
                    lambda v: (3 - np.arange(N))[None, :]),
    "row_prod": ("pl.row_prod(tk)", ROW, lambda v: v["k"].astype(np.int32).prod(axis=1, keepdims=True)),
    "col_sum": ("pl.col_sum(ta)", COL, lambda v: v["a"].sum(axis=0, keepdims=True)),
    "scatter_update": ("pl.tile.scatter_update(pl.tile.adds(ta, 0), tu, tsrc)", S, None),
    "batch_like": ("pl.gemv(tmi, twi)", [M, N], lambda v: v["mi"].astype(np.int64) @ v["wi"]),
}


@pytest.fixture(scope="module")
def int_results():
    a = RNG.integers(-1000, 1000, S).astype(np.int32)
    b = RNG.integers(-9, 9, S).astype(np.int32)
    k = RNG.integers(-2, 40, S).astype(np.int32)
    idx = RNG.integers(0, M * N, S).astype(np.int32)
    u = RNG.integers(0, M, [2, 4]).astype(np.int32)
    src = RNG.integers(-50, 50, [8, N]).astype(np.int32)
    mi = RNG.integers(-5, 5, [M, K]).astype(np.int32)
    wi = RNG.integers(-5, 5, [K, N]).astype(np.int32)
    vals = {"a": a, "b": b, "k": k, "idx": idx, "u": u, "src": src, "mi": mi, "wi": wi}
    inputs = [(n, list(v.shape), "INT32") for n, v in vals.items()]
    outs = [("o_" + n, shape, "INT32", e) for n, (e, shape, _f) in INT_OPS.items()]
    prog = kernel_program(inputs, outs, scalars=[("i", "INT32")])
    return vals, run_kernel_program(prog, vals, scalars=[3])


@pytest.mark.parametrize("op", list(INT_OPS))
def test_int_reference_op(int_results, op):
    vals, outs = int_results
    if op == "scatter":
        expect = vals["a"].copy().ravel()
        for k, i in enumerate(vals["idx"].ravel()):      # row-major order, last write wins
            expect[i] = vals["b"].ravel()[k]
        expect = expect.reshape(S)
    elif op == "scatter_update":
        expect = vals["a"].copy()
        for k, r in enumerate(vals["u"].ravel()):
            expect[r, :] = vals["src"][k, :]
    else:
        with np.errstate(all="ignore"):
            expect = INT_OPS[op][2](vals)
    np.testing.assert_array_equal(outs["o_" + op], np.asarray(expect).astype(np.int64).astype(np.int32))


def test_not_int16_and_batch_matmul():
    a = RNG.integers(-3000, 3000, S).astype(np.int16)
    x = RNG.uniform(-1, 1, [2, 4, 8]).astype(np.float32)
    y = RNG.uniform(-1, 1, [2, 8, 6]).astype(np.float32)
    y1 = RNG.uniform(-1, 1, [1, 8, 6]).astype(np.float32)
    # Kernel loads are 1-D / 2-D: batch tiles are reshaped from 2-D loads.
    body = ["bx = pl.tile.reshape(tx, [2, 4, 8])", "by = pl.tile.reshape(ty, [2, 8, 6])",
            "by1 = pl.tile.reshape(ty1, [1, 8, 6])"]
    outs = run_kernel_program(kernel_program(
        [("a", S, "INT16"), ("x", [8, 8], "FP32"), ("y", [16, 6], "FP32"), ("y1", [8, 6], "FP32")],
        [("n", S, "INT16", "pl.not_(ta)"), ("p", [2, 4, 6], "FP32", "pl.batch_matmul(bx, by)"),
         ("q", [2, 4, 6], "FP32", "pl.batch_matmul(bx, by1)"),
         ("r", [2, 4, 6], "FP32", "pl.tile.batch_matmul_acc(pl.batch_matmul(bx, by), bx, by)")], body=body),
        {"a": a, "x": x.reshape(8, 8), "y": y.reshape(16, 6), "y1": y1.reshape(8, 6)})
    np.testing.assert_array_equal(outs["n"], ~a)
    np.testing.assert_allclose(outs["p"], x @ y, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(outs["q"], x @ y1, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(outs["r"], 2 * (x @ y), rtol=1e-5, atol=1e-5)
