"""Valid regions in the reference tile ops (spec reference_ops.md §1.5, §3, §6, §7, §9, §12):
pl.set_validshape, pl.tile.fillpad_inplace, the pl.fillpad shorthands, part_* over valid regions,
column / axis reductions and row / column broadcasts over the valid box, gather and scatter over
the valid box; each checked against NumPy (race-checked), plus the type rules and located misuse
errors.
"""
import math

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import codegen, ir
from pypto.errors import PyptoError


def _src(body: str, out_expr, out_shape=(16, 16), x_shape=(16, 16), y="", scalars="", out_dtype="pl.FP32"):
    """A kernel k(x[, y], out[, scalars]) storing `out_expr` at [0, 0], called once by main."""
    xs, os_ = ", ".join(map(str, x_shape)), ", ".join(map(str, out_shape))
    zeros = ", ".join("0" for _ in out_shape)
    store = f"out = pl.store({out_expr}, [{zeros}], out)" if out_expr else ""
    y_param = f", y: pl.Tensor[{y}]" if y else ""
    y_arg = ", y" if y else ""
    extra = "".join(", %s: pl.Scalar[pl.INDEX]" % n for n in scalars.split())
    call_extra = "".join(", " + n for n in scalars.split())
    out_t = f"pl.Tensor[[{os_}], {out_dtype}]"
    return f'''
import math
import pypto.language as pl


@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[{xs}], pl.FP32]{y_param}, out: pl.Out[{out_t}]{extra}) -> {out_t}:
        {body}
        {store}
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[{xs}], pl.FP32]{y_param}, out: pl.Out[{out_t}]{extra}) -> {out_t}:
        out = self.k(x{y_arg}, out{call_extra})
        return out
'''


def _run(src, inputs, out_shape, scalars=(), out_dtype=np.float32):
    p = pypto.compile(pl.parse_program(src, "k.py"))
    try:
        out = np.full(out_shape, -7, out_dtype)
        p(*inputs, out, *scalars, race_check=True)
        return out
    finally:
        p.close()


def _x(seed=0, shape=(16, 16)):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _located(src, body_line, message):
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(src, "k.py")
    e = ei.value
    assert message in e.message, e.message
    line = next(n for n, t in enumerate(src.splitlines(), 1) if t.strip() == body_line.strip())
    assert (e.file, e.line) == ("k.py", line), str(e)
    return e


# ---- pl.set_validshape -----------------------------------------------------------------------------

def test_set_validshape_limits_the_store_and_the_reduction():
    x = _x(1)
    src = _src("t = pl.set_validshape(pl.load(x, [0, 0], [16, 16]), n, 5)", "t", scalars="n")
    out = _run(src, [x], (16, 16), (3,))
    want = np.full((16, 16), -7.0, np.float32)
    want[:3, :5] = x[:3, :5]
    np.testing.assert_array_equal(out, want)
    src = _src("t = pl.tile.set_validshape(pl.load(x, [0, 0], [16, 16]), 4, m)", "pl.row_sum(t)", out_shape=(16, 1),
               scalars="m")
    out = _run(src, [x], (16, 1), (6,))
    want = np.full((16, 1), -7.0, np.float32)
    want[:4, 0] = x[:4, :6].sum(axis=1)
    np.testing.assert_allclose(out, want, rtol=1e-5)


def test_set_validshape_type_prints_and_round_trips():
    src = _src("t = pl.set_validshape(pl.load(x, [0, 0], [16, 16]), n, 5)", "t", scalars="n")
    prog = pl.parse_program(src, "k.py")
    text = ir.python_print(prog)
    assert "pl.set_validshape(" in text and "pl.TileView(valid_shape=[n, 5])" in text, text
    assert ir.structural_equal_explain(pl.parse_program(text), prog)[0]


def test_set_validshape_run_time_extent_outside_the_tile_fails_the_run():
    src = _src("t = pl.set_validshape(pl.load(x, [0, 0], [16, 16]), n, 5)", "t", scalars="n")
    p = pypto.compile(pl.parse_program(src, "k.py"))
    try:
        with pytest.raises(Exception, match=r"valid extent 17 of axis 0 is outside \[0, 16\]"):
            p(_x(), np.zeros((16, 16), np.float32), 17, race_check=True)
    finally:
        p.close()


@pytest.mark.parametrize("body,message", [
    ("t = pl.set_validshape(pl.load(x, [0, 0], [16, 16]), 17, 5)", "tile.set_validshape: valid_rows 17 is outside [0, 16]"),
    ("t = pl.set_validshape(pl.load(x, [0, 0], [16, 16]), 2, -1)", "tile.set_validshape: valid_cols -1 is outside [0, 16]"),
    ("t = pl.set_validshape(pl.load(x, [0, 0], [16, 16]), 2.0, 3)",
     "tile.set_validshape: argument 'valid_rows' must be an integer scalar"),
    ("t = pl.set_validshape(pl.load(x, [0, 0], [16, 16]), 2)", "set_validshape"),
])
def test_set_validshape_misuse_is_located(body, message):
    _located(_src(body, "t"), body, message)


# ---- fillpad: shorthands and fillpad_inplace ------------------------------------------------------

@pytest.mark.parametrize("pad,fill", [("0", 0.0), ("0.0", 0.0), ("math.inf", np.inf), ("-math.inf", -np.inf),
                                      ("pl.PadValue.max", np.inf), ("pad_value=-math.inf", -np.inf)])
def test_fillpad_shorthands(pad, fill):
    x = _x(2)
    src = _src(f"u = pl.fillpad(pl.load(x, [0, 0], [16, 16], [n, 5]), {pad})", "u", scalars="n")
    out = _run(src, [x], (16, 16), (3,))
    want = np.full((16, 16), fill, np.float32)
    want[:3, :5] = x[:3, :5]
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("pad,message", [
    ("pl.PadValue.null", "pl.fillpad: pad_value PadValue.null (no pad value) is not a fill value"),
    ("1.5", "pl.fillpad: pad_value 1.5 is not a fill value"),
    ("math.nan", "pl.fillpad: pad_value math.nan is not a fill value"),
    ("True", "pl.fillpad: pad_value True is not a fill value"),
    ('"edge"', "pl.fillpad: pad_value 'edge' is not a fill value"),
])
def test_bad_fillpad_values_are_located(pad, message):
    body = f"u = pl.fillpad(pl.load(x, [0, 0], [16, 16], [3, 5]), {pad})"
    e = _located(_src(body, "u"), body, message)
    assert "math.inf" in e.help


def test_fillpad_inplace_pads_its_operand():
    x = _x(3)
    body = ("t = pl.load(x, [0, 0], [16, 16], [n, 5])\n"
            "        u = pl.tile.fillpad_inplace(t, -math.inf)\n"
            "        w = pl.set_validshape(t, 16, 16)")     # t's own buffer, now seen whole
    src = _src(body, "w", scalars="n")
    out = _run(src, [x], (16, 16), (4,))
    want = np.full((16, 16), -np.inf, np.float32)
    want[:4, :5] = x[:4, :5]
    np.testing.assert_array_equal(out, want)
    src = _src(body, "u", scalars="n")
    np.testing.assert_array_equal(_run(src, [x], (16, 16), (4,)), want)   # the result is fully valid
    text = ir.python_print(pl.parse_program(src, "k.py"))
    assert 'pl.tile.fillpad_inplace(t, pad_value="min")' in text, text


# ---- part_* ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("op,fn", [("part_add", np.add), ("part_mul", np.multiply), ("part_max", np.maximum),
                                   ("part_min", np.minimum)])
def test_part_ops_combine_valid_regions(op, fn):
    x, y = _x(4), _x(5)
    body = (f"a = pl.load(x, [0, 0], [16, 16], [6, n])\n"
            f"        b = pl.load(y, [0, 0], [16, 16], [9, 4])\n"
            f"        r = pl.{op}(a, b)\n"
            f"        w = pl.set_validshape(r, 16, 16)")
    src = _src(body, "w", y="[16, 16], pl.FP32", scalars="n")
    out = _run(src, [x, y], (16, 16), (10,))
    want = np.zeros((16, 16), np.float32)
    want[:9, :4] = y[:9, :4]                      # only b valid
    want[:6, :10] = x[:6, :10]                    # only a valid
    want[:6, :4] = fn(x[:6, :4], y[:6, :4])       # both valid
    np.testing.assert_allclose(out, want, rtol=1e-6)
    assert "pl.TileView(valid_shape=[6, n])" in ir.python_print(pl.parse_program(src, "k.py"))   # src0's region


def test_part_op_with_a_broadcast_operand():
    x, y = _x(19), _x(20)
    body = ("a = pl.load(x, [0, 0], [16, 16], [6, n])\n"
            "        b = pl.load(y, [0, 0], [1, 16], [1, 4])\n"
            "        w = pl.set_validshape(pl.part_add(a, b), 16, 16)")
    out = _run(_src(body, "w", y="[16, 16], pl.FP32", scalars="n"), [x, y], (16, 16), (10,))
    want = np.zeros((16, 16), np.float32)
    want[:, :4] = y[0, :4]                        # b (one row, broadcast) is valid in columns < 4
    want[:6, :10] = x[:6, :10]
    want[:6, :4] = x[:6, :4] + y[0, :4]
    np.testing.assert_allclose(out, want, rtol=1e-6)


PART_RUN_TIME_ROWS = '''import pypto.language as pl


@pl.program
class R:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[18, 7], pl.FP16], y: pl.Tensor[[18, 7], pl.FP16], n0: pl.Scalar[pl.INDEX],
          nr: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[16, 5], pl.FP16]]) -> pl.Tensor[[16, 5], pl.FP16]:
        t0 = pl.load(y, [2, 2], [nr, 5], [7, 5])
        t1 = pl.load(x, [1, 1], [nr, 5], [n0, 5])
        t2 = pl.neg(t1)
        t3 = pl.part_add(t2, t0)
        out = pl.store(t3, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[18, 7], pl.FP16], y: pl.Tensor[[18, 7], pl.FP16], n0: pl.Scalar[pl.INDEX],
             nr: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[16, 5], pl.FP16]]) -> pl.Tensor[[16, 5], pl.FP16]:
        out = self.k(x, y, n0, nr, out)
        return out
'''


def test_part_op_on_run_time_rows_builds_warning_free_and_combines_the_rows():
    """Valid-region fuzz seed 251, reduced: with a run-time row count, GCC 12 -O3 refused the build
    of part_binary's per-row copy loop ('iteration 4611686018427387903 invokes undefined behavior',
    -Werror=aggressive-loop-optimizations); the copy and the fill are calls now."""
    prog = pypto.compile(pl.parse_program(PART_RUN_TIME_ROWS, "r.py"))
    rng = np.random.default_rng(251)
    x, y = (rng.integers(-8, 8, (18, 7)).astype(np.float16) for _ in range(2))
    out = np.full((16, 5), 7.0, np.float16)
    prog(x, y, 10, 16, out)   # t2 valid on rows 0..9, t0 on rows 0..6; the store writes t2's 10 rows
    prog.close()
    want = np.full((16, 5), 7.0, np.float16)
    want[:7] = -x[1:8, 1:6] + y[2:9, 2:7]
    want[7:10] = -x[8:11, 1:6]
    np.testing.assert_array_equal(out, want)


def test_part_ops_on_full_tiles_are_the_plain_ops():
    x, y = _x(6), _x(7)
    src = _src("r = pl.part_max(pl.load(x, [0, 0], [16, 16]), pl.load(y, [0, 0], [16, 16]))", "r",
               y="[16, 16], pl.FP32")
    np.testing.assert_array_equal(_run(src, [x, y], (16, 16)), np.maximum(x, y))


# ---- reductions over the valid box ---------------------------------------------------------------

@pytest.mark.parametrize("op,fn", [("col_sum", np.sum), ("col_max", np.max), ("col_min", np.min),
                                   ("col_prod", np.prod)])
def test_column_reductions_read_only_the_valid_rows(op, fn):
    x = -(np.abs(_x(8)) + 0.5)                    # < 0 everywhere: a read of the zero padding shows
    src = _src(f"c = pl.{op}(pl.load(x, [0, 0], [16, 16], [n, 5]))", "c", out_shape=(1, 16), scalars="n")
    out = _run(src, [x], (1, 16), (3,))
    want = np.full((1, 16), -7.0, np.float32)
    want[0, :5] = fn(x[:3, :5], axis=0)
    np.testing.assert_allclose(out, want, rtol=1e-5)
    text = ir.python_print(pl.parse_program(src, "k.py"))
    assert "pl.Tile[[1, 16], pl.FP32, pl.TileView(valid_shape=[1, 5])]" in text, text


@pytest.mark.parametrize("call,shape,want_fn", [
    ("pl.tile.sum(t, axis=0, keepdim=True)", (1, 16), lambda v: v.sum(axis=0, keepdims=True)),
    ("pl.tile.max(t, axis=1, keepdim=True)", (16, 1), lambda v: v.max(axis=1, keepdims=True)),
    ("pl.tile.sum(t, axis=1, keepdim=True)", (16, 1), lambda v: v.sum(axis=1, keepdims=True)),
    ("pl.row_prod(t)", (16, 1), lambda v: v.prod(axis=1, keepdims=True)),
])
def test_axis_reductions_read_only_the_valid_box(call, shape, want_fn):
    x = -(np.abs(_x(9)) + 0.5)
    src = _src(f"t = pl.load(x, [0, 0], [16, 16], [n, 5])\n        c = {call}", "c", out_shape=shape, scalars="n")
    out = _run(src, [x], shape, (3,))
    want = np.full(shape, -7.0, np.float32)
    got = want_fn(x[:3, :5])
    want[:got.shape[0], :got.shape[1]] = got
    np.testing.assert_allclose(out, want, rtol=1e-5)


# ---- row / column broadcasts --------------------------------------------------------------------

@pytest.mark.parametrize("op,fn", [("col_expand_add", np.add), ("col_expand_mul", np.multiply),
                                   ("col_expand", lambda a, c: np.broadcast_to(c, a.shape))])
def test_column_broadcasts_keep_the_valid_region(op, fn):
    x = _x(10)
    body = "t = pl.load(x, [0, 0], [16, 16], [n, 16])\n        c = pl.load(x, [15, 0], [1, 16])"
    src = _src(body + f"\n        r = pl.{op}(t, c)", "r", scalars="n")
    out = _run(src, [x], (16, 16), (5,))
    want = np.full((16, 16), -7.0, np.float32)
    want[:5] = fn(x[:5], x[15:16])
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_row_broadcast_keeps_the_valid_region():
    x = _x(11)
    body = "t = pl.load(x, [0, 0], [16, 16], [n, 7])\n        m = pl.row_max(t)\n        r = pl.row_expand_max(t, m)"
    src = _src(body, "r", scalars="n")
    out = _run(src, [x], (16, 16), (5,))
    want = np.full((16, 16), -7.0, np.float32)
    want[:5, :7] = x[:5, :7].max(axis=1, keepdims=True)
    np.testing.assert_array_equal(out, want)


# ---- gather / scatter ------------------------------------------------------------------------------

def test_gather_reads_only_the_valid_indices():
    x = _x(12, (4, 8))
    idx = np.full((4, 8), 999, np.int32)          # out of range outside the valid box
    idx[:2, :3] = [[0, 31, 5], [7, 7, 16]]
    body = "i = pl.load(y, [0, 0], [4, 8], [2, 3])\n        s = pl.load(x, [0, 0], [4, 8])\n        g = pl.tile.gather(s, i)"
    src = _src(body, "g", out_shape=(4, 8), x_shape=(4, 8), y="[4, 8], pl.INT32")
    out = _run(src, [x, idx], (4, 8))
    want = np.full((4, 8), -7.0, np.float32)
    want[:2, :3] = x.reshape(-1)[idx[:2, :3]]
    np.testing.assert_array_equal(out, want)


def test_gather_index_inside_the_box_is_still_checked():
    idx = np.zeros((4, 8), np.int32)
    idx[1, 1] = 32
    body = "i = pl.load(y, [0, 0], [4, 8], [2, 3])\n        g = pl.tile.gather(pl.load(x, [0, 0], [4, 8]), i)"
    p = pypto.compile(pl.parse_program(_src(body, "g", out_shape=(4, 8), x_shape=(4, 8), y="[4, 8], pl.INT32"), "k.py"))
    try:
        with pytest.raises(Exception, match=r"k.py:\d+: gather from tensor 'x' with indices from tile 'i': flat index 32 is "
                                                 r"outside \[0, 32\)"):
            p(_x(0, (4, 8)), idx, np.zeros((4, 8), np.float32), race_check=True)
    finally:
        p.close()


def test_scatter_writes_only_the_valid_box_of_src():
    x = _x(13, (4, 8))
    idx = np.full((4, 8), 999, np.int32)
    idx[:2, :3] = [[3, 9, 3], [20, 0, 31]]       # 3 twice: the last write wins
    body = ("d = pl.load(x, [0, 0], [4, 8])\n"
            "        s = pl.mul(pl.load(x, [0, 0], [4, 8], [2, 3]), 10.0)\n"
            "        i = pl.load(y, [0, 0], [4, 8], [2, 3])\n"
            "        r = pl.tile.scatter(d, s, i)")
    src = _src(body, "r", out_shape=(4, 8), x_shape=(4, 8), y="[4, 8], pl.INT32")
    out = _run(src, [x, idx], (4, 8))
    want = x.copy().reshape(-1)
    for i in range(2):
        for j in range(3):
            want[idx[i, j]] = x[i, j] * 10.0
    np.testing.assert_allclose(out, want.reshape(4, 8), rtol=1e-6)


# ---- pad_value= on a slice takes effect ------------------------------------------------------------

@pytest.mark.parametrize("pad,fill", [("max", np.inf), ("min", -np.inf), ("zero", 0.0)])
def test_load_pad_value_fills_outside_the_valid_box(pad, fill):
    x = _x(14, (40, 16))
    body = (f"t = pl.load(x, [r, 0], [16, 16], [40 - r, 5], pad_value=pl.PadValue.{pad})\n"
            f"        w = pl.set_validshape(t, 16, 16)")
    out = _run(_src(body, "w", x_shape=(40, 16), scalars="r"), [x], (16, 16), (32,))
    want = np.full((16, 16), fill, np.float32)
    want[:8, :5] = x[32:, :5]
    np.testing.assert_array_equal(out, want)


def test_kernel_tensor_slice_pad_value_reaches_the_load():
    x = _x(14, (40, 16))
    body = "t = pl.tensor.slice(x, [16, 16], [r, 0], valid_shape=[40 - r, 5], pad_value=pl.PadValue.max)"
    src = _src(body + "\n        out = pl.assemble(out, pl.mul(t, 2.0), [0, 0])", None, x_shape=(40, 16), scalars="r")
    lowered = codegen.run_pipeline(pl.parse_program(src, "k.py"))
    text = ir.python_print(lowered)
    assert 'pl.load(x, [r, 0], [16, 16], [40 - r, 5], pad_value="max")' in text, text
    assert ir.structural_equal_explain(pl.parse_program(text), lowered)[0]
    out = _run(src, [x], (16, 16), (32,))
    want = np.full((16, 16), -7.0, np.float32)
    want[:8, :5] = x[32:, :5] * 2.0
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("pad,fill", [("max", np.inf), ("min", -np.inf), ("zero", 0.0)])
def test_tile_slice_pad_value_fills_outside_the_valid_box(pad, fill):
    x = _x(15)
    body = (f"t = pl.slice(pl.add(pl.load(x, [0, 0], [16, 16]), 1.0), [8, 16], [4, 0], valid_shape=[3, 6], "
            f"pad_value=pl.PadValue.{pad})\n"
            f"        w = pl.set_validshape(t, 8, 16)")
    out = _run(_src(body, "w", out_shape=(8, 16)), [x], (8, 16))
    want = np.full((8, 16), fill, np.float32)
    want[:3, :6] = x[4:7, :6] + 1.0
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_pad_value_null_leaves_the_window_as_is():
    x = _x(16)
    body = ("t = pl.slice(pl.load(x, [0, 0], [16, 16]), [8, 16], [4, 0], valid_shape=[3, 6], pad_value=pl.PadValue.null)\n"
            "        w = pl.set_validshape(t, 8, 16)")
    np.testing.assert_array_equal(_run(_src(body, "w", out_shape=(8, 16)), [x], (8, 16)), x[4:12])


def test_bad_load_pad_value_is_located():
    body = 't = pl.load(x, [0, 0], [16, 16], [4, 16], pad_value="edge")'
    _located(_src(body, "t"), body, "tile.load: pad_value must be pl.PadValue.null, .zero, .max or .min")


# ---- drop_dims= in an orchestration: refused (docs/dsl.md, decision), the reshape route works ----------

ORCH_DROP = '''
import pypto.language as pl


@pl.program
class O:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, v: pl.Tensor[[40, 16], pl.FP32], out: pl.Out[pl.Tensor[[40, 16], pl.FP32]]) -> pl.Tensor[[40, 16], pl.FP32]:
        out = pl.store(pl.mul(pl.load(v, [0, 0], [40, 16]), 2.0), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[3, 40, 16], pl.FP32], out: pl.Out[pl.Tensor[[40, 16], pl.FP32]],
             b: pl.Scalar[pl.INDEX]) -> pl.Tensor[[40, 16], pl.FP32]:
        VIEW
        out = self.k(v, out)
        return out
'''


def test_orchestration_drop_dims_refusal_says_why():
    line = "v = pl.tensor.slice(x, [1, 40, 16], [b, 0, 0], drop_dims=[0])"
    e = _located(ORCH_DROP.replace("VIEW", line), line, "the runtime's Tensor::view cannot drop an axis")
    assert "pl.reshape(view, shape)" in e.help


def test_orchestration_plane_through_reshape_runs():
    src = ORCH_DROP.replace("VIEW", "p = pl.tensor.slice(x, [1, 40, 16], [b, 0, 0])\n"
                                    "        v = pl.reshape(p, [40, 16])")
    x = _x(17, (3, 40, 16))
    p = pypto.compile(pl.parse_program(src, "o.py"))
    try:
        out = np.zeros((40, 16), np.float32)
        p(x, out, 2, race_check=True)
    finally:
        p.close()
    np.testing.assert_allclose(out, x[2] * 2.0, rtol=1e-6)


# ---- the kernel C++ golden (tests/golden/kernel_valid_ops/kernel_k.cpp) -------------------------------
# One kernel using every valid-region path above; regenerate after an intended change with
#   PYPTO_UPDATE_GOLDEN=1 python -m pytest -q tests/python/test_kernel_valid_ops.py -k golden

GOLDEN_BODY = """t = pl.load(x, [0, 0], [16, 16], [n, 5], pad_value=pl.PadValue.min)
        u = pl.set_validshape(pl.load(x, [0, 0], [16, 16]), 6, n)
        p = pl.part_max(t, u)
        c = pl.col_sum(t)
        r = pl.row_prod(u)
        e = pl.col_expand_mul(t, c)
        s = pl.tile.slice(u, [8, 16], [2, 0], valid_shape=[3, 4], pad_value=pl.PadValue.max)
        f = pl.tile.fillpad_inplace(t, 0.0)
        i = pl.load(y, [0, 0], [16, 16], [n, 3])
        g = pl.tile.gather(f, i)
        q = pl.tile.scatter(f, p, i)
        w = pl.add(pl.add(pl.add(p, e), pl.add(g, q)), pl.tile.sum(u, axis=0, keepdim=True))
        o = pl.row_expand_add(pl.add(w, pl.fillpad(pl.col_expand(w, c), math.inf)), r)
        z = pl.tile.assemble(o, s, [8, 0])"""


def _golden_src():
    return _src(GOLDEN_BODY, "z", y="[16, 16], pl.INT32", scalars="n")


def test_kernel_cpp_golden():
    import os
    from pypto._core import kernel_cpu
    from codegen_test_util import GOLDEN_DIR, significant_lines
    code = kernel_cpu.generate(codegen.run_pipeline(pl.parse_program(_golden_src(), "k.py")), "k")
    path = os.path.join(GOLDEN_DIR, "kernel_valid_ops", "kernel_k.cpp")
    if os.environ.get("PYPTO_UPDATE_GOLDEN") == "1":
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(code)
    with open(path) as f:
        assert significant_lines(code) == significant_lines(f.read()), code


def test_kernel_cpp_compiles_warning_free(tmp_path):
    import subprocess
    from pypto._core import kernel_cpu
    from pypto.runtime import include_dir, kernel_include_dir
    path = tmp_path / "k.cpp"
    path.write_text(kernel_cpu.generate(codegen.run_pipeline(pl.parse_program(_golden_src(), "k.py")), "k"))
    r = subprocess.run(["g++", "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-I" + include_dir(),
                        "-I" + kernel_include_dir(), "-c", str(path), "-o", str(tmp_path / "k.o")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_assemble_writes_only_the_source_valid_region_and_is_fully_valid():
    x = _x(18)
    body = ("t = pl.load(x, [0, 0], [16, 16], [n, 16])\n"
            "        s = pl.mul(pl.load(x, [0, 0], [4, 8], [2, 3]), 10.0)\n"
            "        z = pl.tile.assemble(t, s, [5, 6])")
    src = _src(body, "z", scalars="n")
    out = _run(src, [x], (16, 16), (9,))
    want = np.zeros((16, 16), np.float32)       # t's rows past n read as the load's zero fill
    want[:9] = x[:9]
    want[5:7, 6:9] = x[:2, :3] * 10.0
    np.testing.assert_allclose(out, want, rtol=1e-6)
    assert "z: pl.Tile[[16, 16], pl.FP32] = pl.assemble(t, s, [5, 6])" in ir.python_print(pl.parse_program(src, "k.py"))


def test_tensor_fillpad_takes_the_shorthands_too():
    x = _x(21, (40, 16))
    body = ("t = pl.tensor.slice(x, [16, 16], [r, 0], valid_shape=[40 - r, 5])\n"
            "        out = pl.assemble(out, pl.fillpad(t, -math.inf), [0, 0])")
    out = _run(_src(body, None, x_shape=(40, 16), scalars="r"), [x], (16, 16), (32,))
    want = np.full((16, 16), -np.inf, np.float32)
    want[:8, :5] = x[32:, :5]
    np.testing.assert_array_equal(out, want)


def test_a_tile_computed_on_no_row_builds_and_reads_as_zeros():
    """A tile whose valid shape has no row is never written; a window of it read later is zeros,
    not an indeterminate stack value (which a -Werror build refused as maybe-uninitialized;
    tests/python/valid_region_fuzz.py, seed 4)."""
    x = _x(22, (5, 3)).astype(np.int32)
    body = ("t = pl.load(x, [0, 0], [5, 3], [0, 2])\n"
            "        u = pl.minimum(t, t)\n"
            "        w = pl.tile.slice(u, [1, 3], [3, 0])")
    src = _src(body, "w", out_shape=(1, 3), x_shape=(5, 3), out_dtype="pl.INT32").replace(
        "pl.Tensor[[5, 3], pl.FP32]", "pl.Tensor[[5, 3], pl.INT32]")
    np.testing.assert_array_equal(_run(src, [x], (1, 3), out_dtype=np.int32), np.zeros((1, 3), np.int32))


def test_assemble_of_a_column_with_run_time_valid_rows_builds_and_writes_them():
    """An FP16 [3, 1] column with run-time valid rows assembled into a [3, 16] tile: GCC 12 took
    the copy loop past the target (-Wstringop-overflow, a -Werror build failure) until the helper
    bounded the valid box by the source's shape itself (valid_region_fuzz.py, seed 1184)."""
    x = np.arange(48, dtype=np.float16).reshape(3, 16)
    body = ("t = pl.load(x, [0, 0], [3, 16], [n, 16])\n"
            "        z = pl.fillpad(pl.tile.assemble(t, pl.row_min(t), [0, 8]), 0)")
    src = _src(body, "z", out_shape=(3, 16), x_shape=(3, 16), scalars="n", out_dtype="pl.FP16").replace(
        "pl.Tensor[[3, 16], pl.FP32]", "pl.Tensor[[3, 16], pl.FP16]")
    out = _run(src, [x], (3, 16), (2,), out_dtype=np.float16)
    want = np.zeros((3, 16), np.float16)
    want[:2] = x[:2]
    want[:2, 8] = x[:2].min(axis=1)
    np.testing.assert_array_equal(out, want)
