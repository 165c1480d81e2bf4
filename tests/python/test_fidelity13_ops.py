"""Issue 13 "Done when" for the reference tile ops (spec/reference_ops.md), spelled `pl.tile.<name>`.

Other files check the `pl.<name>` spellings (test_e2e_ops.py, test_e2e_ops_reference.py). Here every op with a
CPU meaning is written the second way the reference allows, `pl.tile.<name>(...)`, and checked three ways:
  - golden: the kernel C++ of one kernel per dtype family equals tests/golden/fidelity13_ops/kernel_<family>.cpp
    and passes g++ -Wall -Wextra -Werror;
  - end to end: each output of that kernel against an independent NumPy reference (FP32 1e-5, reductions
    and products 1e-4; integers exact);
  - spelling: `pl.<name>(...)` and `pl.tile.<name>(...)` build the same IR (structural equality).

Regenerate the kernel goldens after an intended change, then review the diff:

    PYPTO_UPDATE_GOLDEN=1 python -m pytest -q tests/python/test_fidelity13_ops.py
"""
import os
import shutil
import subprocess

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import codegen, ir
from pypto._core import kernel_cpu
from pypto.runtime import include_dir, kernel_include_dir

from codegen_test_util import GOLDEN_DIR
from e2e_util import kernel_program_text, run_kernel_program

UPDATE = os.environ.get("PYPTO_UPDATE_GOLDEN") == "1"
KERNEL_GOLDEN = os.path.join(GOLDEN_DIR, "fidelity13_ops")
M, N, K = 8, 16, 8
S, ROW, COL = [M, N], [M, 1], [1, N]
MASK = [M, 32]          # packed predicate mask: ceil(16 / 8) = 2 bytes per row, padded to 32
RNG = np.random.default_rng(1313)


def floor_mod(a, b):
    return a - np.floor(a / b) * b


def pack_mask(pred):
    """Row i, element j -> bit j % 8 of byte j / 8 (reference_ops.md §8)."""
    out = np.zeros(MASK, np.uint8)
    for j in range(pred.shape[1]):
        out[:, j // 8] |= (pred[:, j].astype(np.uint8) << (j % 8))
    return out


# ---- FP32 family: name -> (DSL expr, out shape, out dtype, NumPy reference over float64 inputs) -------------

FLOAT = {
    "add": ("pl.tile.add(ta, tb)", S, "FP32", lambda v: v["a"] + v["b"]),
    "sub": ("pl.tile.sub(ta, tc)", S, "FP32", lambda v: v["a"] - v["c"]),
    "mul": ("pl.tile.mul(ta, tr)", S, "FP32", lambda v: v["a"] * v["r"]),
    "div": ("pl.tile.div(ta, tb)", S, "FP32", lambda v: v["a"] / v["b"]),
    "adds": ("pl.tile.adds(ta, 2.5)", S, "FP32", lambda v: v["a"] + 2.5),
    "subs": ("pl.tile.subs(ta, s)", S, "FP32", lambda v: v["a"] - 0.75),
    "muls": ("pl.tile.muls(ta, 3.0)", S, "FP32", lambda v: v["a"] * 3),
    "divs": ("pl.tile.divs(ta, 4.0)", S, "FP32", lambda v: v["a"] / 4),
    "maximum": ("pl.tile.maximum(ta, tb)", S, "FP32", lambda v: np.maximum(v["a"], v["b"])),
    "minimum": ("pl.tile.minimum(ta, tb)", S, "FP32", lambda v: np.minimum(v["a"], v["b"])),
    "maximums": ("pl.tile.maximums(ta, 0.5)", S, "FP32", lambda v: np.maximum(v["a"], 0.5)),
    "minimums": ("pl.tile.minimums(ta, -0.5)", S, "FP32", lambda v: np.minimum(v["a"], -0.5)),
    "rem": ("pl.tile.rem(ta, tb, tb)", S, "FP32", lambda v: floor_mod(v["a"], v["b"])),
    "rems": ("pl.tile.rems(ta, 1.5)", S, "FP32", lambda v: floor_mod(v["a"], 1.5)),
    "exp": ("pl.tile.exp(ta)", S, "FP32", lambda v: np.exp(v["a"])),
    "log": ("pl.tile.log(tq)", S, "FP32", lambda v: np.log(v["q"])),
    "sqrt": ("pl.tile.sqrt(tq)", S, "FP32", lambda v: np.sqrt(v["q"])),
    "rsqrt": ("pl.tile.rsqrt(tq)", S, "FP32", lambda v: 1 / np.sqrt(v["q"])),
    "recip": ("pl.tile.recip(tb)", S, "FP32", lambda v: 1 / v["b"]),
    "neg": ("pl.tile.neg(ta)", S, "FP32", lambda v: -v["a"]),
    "abs": ("pl.tile.abs(ta)", S, "FP32", lambda v: np.abs(v["a"])),
    "relu": ("pl.tile.relu(ta)", S, "FP32", lambda v: np.maximum(v["a"], 0)),
    "lrelu": ("pl.tile.lrelu(ta, 0.1)", S, "FP32", lambda v: np.where(v["a"] > 0, v["a"], v["a"] * np.float32(0.1))),
    "lrelu_steep": ("pl.tile.lrelu(ta, 2.0)", S, "FP32", lambda v: np.where(v["a"] > 0, v["a"], 2 * v["a"])),  # not max(x, 2x)
    "prelu": ("pl.tile.prelu(ta, tc)", S, "FP32", lambda v: np.where(v["a"] > 0, v["a"], v["a"] * v["c"])),
    "addc": ("pl.tile.addc(ta, tb, tc)", S, "FP32", lambda v: v["a"] + v["b"] + v["c"]),
    "subc": ("pl.tile.subc(ta, tb, tr)", S, "FP32", lambda v: v["a"] - v["b"] - v["r"]),
    "addsc": ("pl.tile.addsc(ta, 2.0, tb)", S, "FP32", lambda v: v["a"] + 2 + v["b"]),
    "subsc": ("pl.tile.subsc(ta, 2.0, tc)", S, "FP32", lambda v: v["a"] - 2 - v["c"]),
    "part_add": ("pl.tile.part_add(ta, tb)", S, "FP32", lambda v: v["a"] + v["b"]),
    "part_mul": ("pl.tile.part_mul(ta, tb)", S, "FP32", lambda v: v["a"] * v["b"]),
    "part_max": ("pl.tile.part_max(ta, tb)", S, "FP32", lambda v: np.maximum(v["a"], v["b"])),
    "part_min": ("pl.tile.part_min(ta, tb)", S, "FP32", lambda v: np.minimum(v["a"], v["b"])),
    "expands": ("pl.tile.expands(ta, s)", S, "FP32", lambda v: np.full(S, 0.75)),
    "sin": ("pl.tile.sin(ta)", S, "FP32", lambda v: np.sin(v["a"])),
    "cos": ("pl.tile.cos(ta)", S, "FP32", lambda v: np.cos(v["a"])),
    "cmp": ("pl.tile.cmp(ta, tb, cmp_type=4)", MASK, "UINT8", lambda v: pack_mask(v["a"] > v["b"])),
    "cmps": ("pl.tile.cmps(ta, 0.0, cmp_type=2)", MASK, "UINT8", lambda v: pack_mask(v["a"] < 0)),
    "sel": ("pl.tile.sel(pl.tile.cmp(ta, tb, cmp_type=4), ta, tb)", S, "FP32", lambda v: np.maximum(v["a"], v["b"])),
    "sels": ("pl.tile.sels(ta, tb, 0)", S, "FP32", lambda v: v["b"]),
    "row_max": ("pl.tile.row_max(ta)", ROW, "FP32", lambda v: v["a"].max(axis=1, keepdims=True)),
    "row_min": ("pl.tile.row_min(ta, ta)", ROW, "FP32", lambda v: v["a"].min(axis=1, keepdims=True)),
    "row_sum": ("pl.tile.row_sum(ta)", ROW, "FP32", lambda v: v["a"].sum(axis=1, keepdims=True)),
    "row_prod": ("pl.tile.row_prod(tq)", ROW, "FP32", lambda v: v["q"].prod(axis=1, keepdims=True)),
    "col_sum": ("pl.tile.col_sum(ta)", COL, "FP32", lambda v: v["a"].sum(axis=0, keepdims=True)),
    "col_max": ("pl.tile.col_max(ta)", COL, "FP32", lambda v: v["a"].max(axis=0, keepdims=True)),
    "col_min": ("pl.tile.col_min(ta)", COL, "FP32", lambda v: v["a"].min(axis=0, keepdims=True)),
    "col_prod": ("pl.tile.col_prod(tq)", COL, "FP32", lambda v: v["q"].prod(axis=0, keepdims=True)),
    "sum": ("pl.tile.sum(ta, axis=1, keepdim=True)", ROW, "FP32", lambda v: v["a"].sum(axis=1, keepdims=True)),
    "sum_drop": ("pl.tile.sum(ta, axis=1)", [M], "FP32", lambda v: v["a"].sum(axis=1)),    # keepdim=False drops the axis
    "max": ("pl.tile.max(ta, axis=0, keepdim=True)", COL, "FP32", lambda v: v["a"].max(axis=0, keepdims=True)),
    "min": ("pl.tile.min(ta, axis=-1, keepdim=True)", ROW, "FP32", lambda v: v["a"].min(axis=1, keepdims=True)),
    "row_expand": ("pl.tile.row_expand(ta, tr)", S, "FP32", lambda v: np.broadcast_to(v["r"], S)),
    "row_expand_add": ("pl.tile.row_expand_add(ta, tr)", S, "FP32", lambda v: v["a"] + v["r"]),
    "row_expand_sub": ("pl.tile.row_expand_sub(ta, tr)", S, "FP32", lambda v: v["a"] - v["r"]),
    "row_expand_mul": ("pl.tile.row_expand_mul(ta, tr)", S, "FP32", lambda v: v["a"] * v["r"]),
    "row_expand_div": ("pl.tile.row_expand_div(ta, tr)", S, "FP32", lambda v: v["a"] / v["r"]),
    "row_expand_max": ("pl.tile.row_expand_max(ta, tr)", S, "FP32", lambda v: np.maximum(v["a"], v["r"])),
    "row_expand_min": ("pl.tile.row_expand_min(ta, tr)", S, "FP32", lambda v: np.minimum(v["a"], v["r"])),
    "row_expand_expdif": ("pl.tile.row_expand_expdif(ta, tr)", S, "FP32", lambda v: np.exp(v["a"] - v["r"])),
    "col_expand": ("pl.tile.col_expand(ta, tc)", S, "FP32", lambda v: np.broadcast_to(v["c"], S)),
    "col_expand_add": ("pl.tile.col_expand_add(ta, tc)", S, "FP32", lambda v: v["a"] + v["c"]),
    "col_expand_sub": ("pl.tile.col_expand_sub(ta, tc)", S, "FP32", lambda v: v["a"] - v["c"]),
    "col_expand_mul": ("pl.tile.col_expand_mul(ta, tc)", S, "FP32", lambda v: v["a"] * v["c"]),
    "col_expand_div": ("pl.tile.col_expand_div(ta, tc)", S, "FP32", lambda v: v["a"] / v["c"]),
    "col_expand_max": ("pl.tile.col_expand_max(ta, tc)", S, "FP32", lambda v: np.maximum(v["a"], v["c"])),
    "col_expand_min": ("pl.tile.col_expand_min(ta, tc)", S, "FP32", lambda v: np.minimum(v["a"], v["c"])),
    "col_expand_expdif": ("pl.tile.col_expand_expdif(ta, tc)", S, "FP32", lambda v: np.exp(v["a"] - v["c"])),
    "transpose": ("pl.tile.transpose(tw, 0, 1)", [N, K], "FP32", lambda v: v["w"].T),
    "transpose_view": ("pl.tile.transpose_view(tw)", [N, K], "FP32", lambda v: v["w"].T),
    "reshape": ("pl.tile.reshape(ta, [16, 8])", [N, M], "FP32", lambda v: v["a"].reshape(N, M)),
    "concat": ("pl.tile.concat(ta, tr)", [M, N + 1], "FP32", lambda v: np.concatenate([v["a"], v["r"]], axis=1)),
    "extract": ("pl.tile.extract(ta, 2, 4, [4, 8])", [4, 8], "FP32", lambda v: v["a"][2:6, 4:12]),
    "slice": ("pl.tile.slice(ta, [4, 8], [i, 2])", [4, 8], "FP32", lambda v: v["a"][3:7, 2:10]),
    "assemble": ("pl.tile.assemble(ta, tr, [0, 5])", S, "FP32",
                 lambda v: np.concatenate([v["a"][:, :5], v["r"], v["a"][:, 6:]], axis=1)),
    "set_validshape": ("pl.tile.fillpad(pl.tile.set_validshape(ta, 5, 7))", S, "FP32",
                       lambda v: np.pad(v["a"][:5, :7], ((0, M - 5), (0, N - 7)))),
    "fillpad": ("pl.tile.fillpad(pl.tile.slice(ta, [4, 8], [0, 0], [3, 2]), pl.PadValue.max)", [4, 8], "FP32",
                lambda v: np.pad(v["a"][:3, :2], ((0, 1), (0, 6)), constant_values=np.inf)),
    # (of a copy of ta: on the accelerator it pads inside ta's own buffer, which later ops read)
    "fillpad_inplace": ("pl.tile.fillpad_inplace(pl.tile.slice(pl.tile.muls(ta, 1.0), [4, 8], [i, 2], [2, 3]), "
                        "pl.PadValue.min)",
                        [4, 8], "FP32", lambda v: np.pad(v["a"][3:5, 2:5], ((0, 2), (0, 5)), constant_values=-np.inf)),
    "create": ("pl.tile.create([8, 16], dtype=pl.FP32)", S, "FP32", lambda v: np.zeros(S)),
    "full": ("pl.tile.full([8, 16], dtype=pl.FP32, value=2.5)", S, "FP32", lambda v: np.full(S, 2.5)),
    "cast": ('pl.tile.cast(ta, pl.INT32, mode="floor")', S, "INT32", lambda v: np.floor(v["a"])),
    "move": ("pl.tile.move(ta, target_memory=pl.MemorySpace.Vec)", S, "FP32", lambda v: v["a"]),
    "read": ("pl.tile.expands(ta, pl.tile.read(ta, [1, 2]))", S, "FP32", lambda v: np.full(S, v["a"][1, 2])),
    "write": ("tz", S, "FP32", lambda v: np.where((np.arange(M)[:, None] == 1) & (np.arange(N) == 2), 0.75, 0.0)),
    "get_block_idx": ("pl.tile.expands(ta, pl.cast(pl.tile.get_block_idx(), pl.FP32))", S, "FP32",
                      lambda v: np.zeros(S)),
    "get_block_num": ("pl.tile.expands(ta, pl.cast(pl.tile.get_block_num(), pl.FP32))", S, "FP32",
                      lambda v: np.ones(S)),
    "get_subblock_idx": ("pl.tile.expands(ta, pl.cast(pl.tile.get_subblock_idx(), pl.FP32))", S, "FP32",
                         lambda v: np.zeros(S)),
    "matmul": ("pl.tile.matmul(tm, tw)", S, "FP32", lambda v: v["m"] @ v["w"]),
    "matmul_acc": ("pl.tile.matmul_acc(pl.tile.matmul(tm, tw), tm, tw)", S, "FP32", lambda v: 2 * (v["m"] @ v["w"])),
    "matmul_bias": ("pl.tile.matmul_bias(tm, tw, tbias)", S, "FP32", lambda v: v["m"] @ v["w"] + v["bias"]),
    "gemv": ("pl.tile.gemv(tm, tw)", S, "FP32", lambda v: v["m"] @ v["w"]),
    "gemv_acc": ("pl.tile.gemv_acc(pl.tile.gemv(tm, tw), tm, tw)", S, "FP32", lambda v: 2 * (v["m"] @ v["w"])),
    "gemv_bias": ("pl.tile.gemv_bias(tm, tw, tbias)", S, "FP32", lambda v: v["m"] @ v["w"] + v["bias"]),
    "batch_matmul": ("pl.tile.batch_matmul(bm, bw)", [2, 4, N], "FP32",
                     lambda v: v["m"].reshape(2, 4, K) @ v["w"].reshape(1, K, N)),
    "batch_matmul_acc": ("pl.tile.batch_matmul_acc(pl.tile.batch_matmul(bm, bw), bm, bw)", [2, 4, N], "FP32",
                         lambda v: 2 * (v["m"].reshape(2, 4, K) @ v["w"].reshape(1, K, N))),
}
FLOAT_BODY = ["bm = pl.tile.reshape(tm, [2, 4, 8])", "bw = pl.tile.reshape(tw, [1, 8, 16])",
              "tz = pl.tile.create([8, 16], dtype=pl.FP32)", "pl.tile.write(tz, [1, 2], s)"]
LOOSE = ("row_", "col_", "sum", "matmul", "gemv", "batch_", "max", "min")


def float_values():
    return {"a": RNG.uniform(-3, 3, S).astype(np.float32),
            "b": (RNG.uniform(0.5, 3, S) * RNG.choice([-1, 1], S)).astype(np.float32),
            "r": RNG.uniform(0.5, 2, ROW).astype(np.float32), "c": RNG.uniform(0.5, 2, COL).astype(np.float32),
            "q": RNG.uniform(0.8, 1.2, S).astype(np.float32), "m": RNG.uniform(-1, 1, [M, K]).astype(np.float32),
            "w": RNG.uniform(-1, 1, [K, N]).astype(np.float32), "bias": RNG.uniform(-1, 1, COL).astype(np.float32)}


# ---- integer family (INT32, and INT16 for not_) -------------------------------------------------------------

def int_shift(a, c, left):
    """Shift with the reference's CPU rules: count >= width gives 0 (-1 for a negative value shifted right)."""
    bits = a.dtype.itemsize * 8
    ok = (c >= 0) & (c < bits)
    cc = np.clip(c, 0, bits - 1)
    shifted = (a.astype(np.int64) << cc).astype(a.dtype) if left else (a >> cc.astype(a.dtype)).astype(a.dtype)
    out = np.where(ok, shifted, np.where(c < 0, a, 0))
    if not left:
        out = np.where((c >= bits) & (a < 0), -1, out)
    return out.astype(a.dtype)


INT = {
    "add": ("pl.tile.add(ta, tb)", S, "INT32", lambda v: v["a"] + v["b"]),
    "div": ("pl.tile.div(ta, tb)", S, "INT32",
            lambda v: np.where(v["b"] == 0, 0, np.trunc(v["a"] / np.where(v["b"] == 0, 1, v["b"])))),
    "rem": ("pl.tile.rem(ta, tb)", S, "INT32",
            lambda v: np.where(v["b"] == 0, 0, np.mod(v["a"], np.where(v["b"] == 0, 1, v["b"])))),
    "rems": ("pl.tile.rems(ta, -7)", S, "INT32", lambda v: np.mod(v["a"], -7)),
    "and_": ("pl.tile.and_(ta, tb)", S, "INT32", lambda v: v["a"] & v["b"]),
    "or_": ("pl.tile.or_(ta, tb)", S, "INT32", lambda v: v["a"] | v["b"]),
    "xor": ("pl.tile.xor(ta, tb, tb)", S, "INT32", lambda v: v["a"] ^ v["b"]),
    "ands": ("pl.tile.ands(ta, 12)", S, "INT32", lambda v: v["a"] & 12),
    "ors": ("pl.tile.ors(ta, 5)", S, "INT32", lambda v: v["a"] | 5),
    "xors": ("pl.tile.xors(ta, 255)", S, "INT32", lambda v: v["a"] ^ 255),
    "shl": ("pl.tile.shl(ta, tk)", S, "INT32", lambda v: int_shift(v["a"], v["k"], True)),
    "shr": ("pl.tile.shr(ta, tk)", S, "INT32", lambda v: int_shift(v["a"], v["k"], False)),
    "shls": ("pl.tile.shls(ta, 3)", S, "INT32", lambda v: (v["a"] << 3).astype(np.int32)),
    "shrs": ("pl.tile.shrs(ta, 2)", S, "INT32", lambda v: v["a"] >> 2),
    "not_": ("pl.tile.not_(th)", S, "INT16", lambda v: ~v["h"]),
    "muls": ("pl.tile.muls(ta, 0.5)", S, "INT32", lambda v: v["a"] * 0),     # the scalar becomes INT32 0 first
    "cmp": ("pl.tile.cmp(ta, tb, cmp_type=1)", MASK, "UINT8", lambda v: pack_mask(v["a"] != v["b"])),
    "gather": ("pl.tile.gather(ta, tidx)", S, "INT32", lambda v: v["a"].flat[v["idx"]]),
    "scatter": ("pl.tile.scatter(pl.tile.adds(ta, 0), tb, tidx)", S, "INT32", None),
    "gather_mask": ("pl.tile.gather_mask(ta, mask_pattern=3)", [M, N // 4], "INT32", lambda v: v["a"][:, 0::4]),
    "scatter_mask": ("pl.tile.scatter_mask(pl.tile.adds(ta, 0), pl.tile.gather_mask(tb, mask_pattern=2), mask_pattern=2)", S, "INT32",
                     lambda v: np.where(np.arange(N) % 2 == 1, v["b"], v["a"])),
    "scatter_update": ("pl.tile.scatter_update(pl.tile.adds(ta, 0), tu, tsrc)", S, "INT32", None),
    "ci": ("pl.tile.ci(i, [1, 16], dtype=pl.INT32)", COL, "INT32", lambda v: np.arange(3, 3 + N)[None, :]),
    "arange": ("pl.tile.arange(i, [1, 16], dtype=pl.INT32, descending=True)", COL, "INT32",
               lambda v: (3 - np.arange(N))[None, :]),
}


def int_values():
    return {"a": RNG.integers(-1000, 1000, S).astype(np.int32), "b": RNG.integers(-9, 9, S).astype(np.int32),
            "k": RNG.integers(-2, 40, S).astype(np.int32), "idx": RNG.integers(0, M * N, S).astype(np.int32),
            "u": RNG.integers(0, M, [1, 4]).astype(np.int32), "src": RNG.integers(-50, 50, [4, N]).astype(np.int32),
            "h": RNG.integers(-3000, 3000, S).astype(np.int16)}


FAMILIES = {
    "float": (FLOAT, float_values, [("s", "FP32"), ("i", "INDEX")], [0.75, 3], FLOAT_BODY),
    "int": (INT, int_values, [("i", "INT32")], [3], []),
}


def _text(family):
    table, values, scalars, _sv, body = FAMILIES[family]
    inputs = [(n, list(x.shape), {np.float32: "FP32", np.int32: "INT32", np.int16: "INT16"}[x.dtype.type])
              for n, x in values().items()]
    return kernel_program_text(inputs, [("o_" + n, sh, dt, e) for n, (e, sh, dt, _f) in table.items()], scalars, body)


def _run(family):
    _table, values, _s, scalar_values, _b = FAMILIES[family]
    prog = pl.parse_program(_text(family))
    vals = values()
    return prog, vals, run_kernel_program(pypto.compile(prog), vals, scalars=scalar_values)


@pytest.fixture(scope="module")
def float_run():
    return _run("float")


@pytest.fixture(scope="module")
def int_run():
    return _run("int")


@pytest.mark.parametrize("family", list(FAMILIES))
def test_kernel_cpp_golden_and_warning_free(family, request, tmp_path):
    prog = request.getfixturevalue(family + "_run")[0]
    src = kernel_cpu.generate(codegen.run_pipeline(prog), "k")
    path = os.path.join(KERNEL_GOLDEN, "kernel_%s.cpp" % family)
    if UPDATE:
        os.makedirs(KERNEL_GOLDEN, exist_ok=True)
        with open(path, "w") as f:
            f.write(src)
    with open(path) as f:
        assert src == f.read(), "kernel C++ of the %s family differs from %s" % (family, path)
    assert shutil.which("g++"), "g++ is required"
    cpp = tmp_path / ("%s.cpp" % family)
    cpp.write_text(src)
    r = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-I" + include_dir(),
                        "-I" + kernel_include_dir(), str(cpp)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[:4000]


def _check(family, op, run):
    _p, vals, outs = run
    table = FAMILIES[family][0]
    if op == "scatter":                            # row-major order, last write wins
        want = vals["a"].copy().ravel()
        for k, i in enumerate(vals["idx"].ravel()):
            want[i] = vals["b"].ravel()[k]
        want = want.reshape(S)
    elif op == "scatter_update":
        want = vals["a"].copy()
        for k, r in enumerate(vals["u"].ravel()):
            want[r, :] = vals["src"][k, :]
    else:
        v = {k: x.astype(np.float64) if family == "float" else x for k, x in vals.items()}
        with np.errstate(all="ignore"):
            want = np.asarray(table[op][3](v))
    got = outs["o_" + op]
    if table[op][2] == "FP32":
        tol = 1e-4 if op.startswith(LOOSE) else 1e-5
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(got, want.astype(got.dtype))


@pytest.mark.parametrize("op", list(FLOAT))
def test_float_op_against_numpy(op, float_run):
    _check("float", op, float_run)


@pytest.mark.parametrize("op", list(INT))
def test_int_op_against_numpy(op, int_run):
    _check("int", op, int_run)


# ---- the two spellings build the same IR --------------------------------------------------------------------

SPELLINGS = ["add(ta, tb)", "sub(ta, tb)", "mul(ta, tb)", "div(ta, tb)", "adds(ta, 1.0)", "subs(ta, 1.0)",
             "muls(ta, 2.0)", "divs(ta, 2.0)", "maximum(ta, tb)", "minimum(ta, tb)", "maximums(ta, 0.5)",
             "minimums(ta, 0.5)", "rem(ta, tb)", "rems(ta, 1.5)", "exp(ta)", "log(ta)", "sqrt(ta)", "rsqrt(ta)",
             "recip(ta)", "neg(ta)", "abs(ta)", "relu(ta)", "lrelu(ta, 0.1)", "prelu(ta, tc)", "addc(ta, tb, tb)",
             "subc(ta, tb, tb)", "addsc(ta, 1.0, tb)", "subsc(ta, 1.0, tb)", "part_add(ta, tb)",
             "part_mul(ta, tb)", "part_max(ta, tb)", "part_min(ta, tb)", "expands(ta, 1.0)", "cmp(ta, tb, cmp_type=2)",
             "cmps(ta, 1.0, cmp_type=3)", "sel(pl.cmp(ta, tb), ta, tb)", "sels(ta, tb, 1)", "row_max(ta)",
             "row_min(ta)", "row_sum(ta)", "row_prod(ta)", "col_sum(ta)", "col_max(ta)", "col_min(ta)",
             "col_prod(ta)", "sum(ta, axis=1)", "max(ta, axis=1)", "min(ta, axis=0)", "row_expand(ta, tr)",
             "row_expand_add(ta, tr)", "row_expand_sub(ta, tr)", "row_expand_mul(ta, tr)", "row_expand_div(ta, tr)",
             "row_expand_max(ta, tr)", "row_expand_min(ta, tr)", "row_expand_expdif(ta, tr)", "col_expand(ta, tc)",
             "col_expand_add(ta, tc)", "col_expand_sub(ta, tc)", "col_expand_mul(ta, tc)", "col_expand_div(ta, tc)",
             "col_expand_max(ta, tc)", "col_expand_min(ta, tc)", "col_expand_expdif(ta, tc)",
             "reshape(ta, [32, 8])", "transpose(ta, 0, 1)", "slice(ta, [4, 8], [0, 0])", "concat(ta, tr)",
             "fillpad(ta)", "set_validshape(ta, 4, 4)", "read(ta, [0, 1])", "cast(ta, pl.FP16)",
             "move(ta, target_memory=pl.MemorySpace.Vec)", "matmul(tm, tw)", "matmul_acc(pl.matmul(tm, tw), tm, tw)",
             "matmul_bias(tm, tw, tc)", "gemv(tm, tw)", "gemv_acc(pl.gemv(tm, tw), tm, tw)", "gemv_bias(tm, tw, tc)",
             "get_block_idx()", "get_block_num()", "and_(ti, ti)", "or_(ti, ti)", "xor(ti, ti)", "ands(ti, 3)",
             "ors(ti, 3)", "xors(ti, 3)", "shl(ti, ti)", "shr(ti, ti)", "shls(ti, 3)", "shrs(ti, 3)", "not_(th)",
             "mscatter(ta, ti, o)", "create_tile([16, 16], dtype=pl.FP32)", "load(a, [0, 0], [8, 8])",
             "store(ta, [0, 0], o)"]

SPELLING_HEAD = """import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], i: pl.Tensor[[16, 16], pl.INT32], h: pl.Tensor[[16, 16], pl.INT16],
          o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        ta = pl.load(a, [0, 0], [16, 16])
        tb = pl.load(a, [0, 0], [16, 16])
        tr = pl.load(a, [0, 0], [16, 1])
        tc = pl.load(a, [0, 0], [1, 16])
        tm = pl.load(a, [0, 0], [16, 16], target_memory=pl.MemorySpace.Left)
        tw = pl.load(a, [0, 0], [16, 16], target_memory=pl.MemorySpace.Right)
        ti = pl.load(i, [0, 0], [16, 16])
        th = pl.load(h, [0, 0], [16, 16])
        x = {expr}
        o = pl.store(ta, [0, 0], o)
        return o
"""


@pytest.mark.parametrize("call", SPELLINGS)
def test_pl_and_pl_tile_spellings_build_the_same_ir(call):
    name = call.split("(")[0]
    unified = pl.parse_program(SPELLING_HEAD.format(expr="pl." + call))
    tile_call = "pl.tile.create" + call[len("create_tile"):] if name == "create_tile" else "pl.tile." + call
    explicit = pl.parse_program(SPELLING_HEAD.format(expr=tile_call))
    same, why = ir.structural_equal_explain(unified, explicit)
    assert same, "%s vs %s: %s" % ("pl." + call, tile_call, why)
    # and the op really is the tile op of that name (not, e.g., an element-wise op for a reduction)
    op = {"and_": "and", "or_": "or", "not_": "not", "create_tile": "create"}.get(name, name)
    assert "tile.%s" % op in ir.python_print(unified).replace("pl.tile.", "tile.").replace("pl.", "tile.")


# ---- NaN operands (reference_ops.md §3 [choice]: propagate NaN like torch.maximum; §4: relu keeps NaN) --------

NAN_OPS = {
    "maximum": ("pl.maximum(ta, tb)", lambda a, b: np.maximum(a, b)),
    "minimum": ("pl.tile.minimum(ta, tb)", lambda a, b: np.minimum(a, b)),
    "maximums": ("pl.maximums(ta, 0.0)", lambda a, b: np.maximum(a, 0.0)),
    "minimums": ("pl.tile.minimums(ta, 0.0)", lambda a, b: np.minimum(a, 0.0)),
    "part_max": ("pl.part_max(ta, tb)", lambda a, b: np.maximum(a, b)),
    "part_min": ("pl.tile.part_min(ta, tb)", lambda a, b: np.minimum(a, b)),
    "relu": ("pl.relu(ta)", lambda a, b: np.where(np.isnan(a), np.nan, np.maximum(a, 0.0))),
    "row_expand_max": ("pl.row_expand_max(ta, tr)", lambda a, b: np.maximum(a, b[:, :1])),
    "col_expand_min": ("pl.col_expand_min(ta, tc)", lambda a, b: np.minimum(a, b[:1, :])),
}


def test_nan_operands_give_nan_in_max_min_and_relu():
    a = RNG.uniform(-2, 2, S).astype(np.float32)
    b = RNG.uniform(-2, 2, S).astype(np.float32)
    a[0, :4] = np.nan                     # NaN on the left, on the right, on both, and against +-inf
    b[1, :4] = np.nan
    a[2, 0], b[2, 0] = np.nan, np.nan
    a[3, 0], b[3, 0] = np.inf, np.nan
    a[3, 1], b[3, 1] = np.nan, -np.inf
    text = kernel_program_text([("a", S, "FP32"), ("b", S, "FP32")],
                               [("o_" + n, S, "FP32", e) for n, (e, _f) in NAN_OPS.items()],
                               body=["tr = pl.load(b, [0, 0], [8, 1])", "tc = pl.load(b, [0, 0], [1, 16])"])
    outs = run_kernel_program(pypto.compile(pl.parse_program(text)), {"a": a, "b": b})
    for name, (_e, ref) in NAN_OPS.items():
        np.testing.assert_array_equal(outs["o_" + name], ref(a, b).astype(np.float32), err_msg=name)


# ---- tensor-level mirrors (anchor_features §9): pl.<name>(tensors) is pl.tensor.<name>(tensors) -------------

TENSOR_SPELLINGS = ["add(a, b)", "sub(a, b)", "mul(a, b)", "div(a, b)", "maximum(a, b)", "minimum(a, b)",
                    "exp(a)", "log(a)", "sqrt(a)", "rsqrt(a)", "recip(a)", "neg(a)", "abs(a)", "relu(a)",
                    "row_max(a)", "row_sum(a)", "row_min(a)", "row_prod(a)", "col_sum(a)", "col_max(a)", "col_min(a)",
                    "col_prod(a)", "row_expand(a, r)", "row_expand_add(a, r)", "row_expand_sub(a, r)",
                    "row_expand_mul(a, r)", "row_expand_div(a, r)", "row_expand_max(a, r)", "row_expand_min(a, r)",
                    "row_expand_expdif(a, r)", "col_expand(a, c)", "col_expand_add(a, c)", "col_expand_sub(a, c)",
                    "col_expand_mul(a, c)", "col_expand_div(a, c)", "col_expand_max(a, c)", "col_expand_min(a, c)",
                    "col_expand_expdif(a, c)", "part_add(a, b)", "part_mul(a, b)", "part_max(a, b)", "part_min(a, b)",
                    "cmp(a, b, cmp_type=3)", "concat(a, r)", "fillpad(a)", "expands(a, 1.5)", "matmul(a, b)",
                    "matmul_acc(pl.matmul(a, b), a, b)", "cast(a, pl.FP16)", "sin(a)", "cos(a)", "gather(a, i)",
                    "scatter(a, b, i)", "arange(0, [1, 16])", "set_validshape(a, 4, 4)", "reshape(a, [8, 32])",
                    "transpose(a, 0, 1)"]
# a scalar right operand picks the scalar mirror
TENSOR_SCALAR_FORMS = {"add(a, 1.5)": "adds", "sub(a, 1.5)": "subs", "mul(a, 1.5)": "muls", "div(a, 1.5)": "divs",
                       "maximum(a, 1.5)": "maximums", "minimum(a, 1.5)": "minimums"}

TENSOR_HEAD = """import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32], r: pl.Tensor[[16, 1], pl.FP32],
          c: pl.Tensor[[1, 16], pl.FP32], i: pl.Tensor[[16, 16], pl.INT32],
          o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        x = {expr}
        o = pl.assemble(o, a, [0, 0])
        return o
"""


def _bound_op(prog):
    line = next(ln.strip() for ln in ir.python_print(prog).splitlines() if ln.strip().startswith("x"))
    return line.split("= ", 1)[1].split("(")[0]


@pytest.mark.parametrize("call", TENSOR_SPELLINGS + list(TENSOR_SCALAR_FORMS))
def test_pl_and_pl_tensor_spellings_build_the_same_tensor_op(call):
    name = call.split("(")[0]
    unified = pl.parse_program(TENSOR_HEAD.format(expr="pl." + call))
    explicit_name = TENSOR_SCALAR_FORMS.get(call, name)
    explicit = pl.parse_program(TENSOR_HEAD.format(expr="pl.tensor." + explicit_name + call[len(name):]))
    same, why = ir.structural_equal_explain(unified, explicit)
    assert same, "pl.%s vs pl.tensor.%s: %s" % (call, explicit_name, why)
    assert _bound_op(unified) == "pl.tensor." + explicit_name
