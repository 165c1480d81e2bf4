"""Cast modes, element access (tile.read / tile.write), the vector-lane index and barriers
(spec/reference_ops.md §5, §10, §13): NumPy-checked end to end, the kernel C++ they emit
(golden-style substrings, compiled with -Wall -Wextra -Werror) and their located misuse errors."""
import shutil
import subprocess
import warnings

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import codegen
from pypto._core import kernel_cpu
from pypto.errors import PyptoError
from pypto.frontend.diagnostics import PyptoWarning
from pypto.runtime import include_dir, kernel_include_dir

from e2e_util import kernel_program_text, run_kernel_program

S = [4, 8]
MODES = ["none", "rint", "round", "floor", "ceil", "trunc", "odd"]

# Ties, negatives, out-of-range values (saturate) and NaN (-> 0).
F = np.array([[0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.49, -3.51],
              [1e10, -1e10, np.nan, 7.0, -7.25, 0.0, 2.5000002, 100.5],
              [0.25, 0.75, -0.25, -0.75, 5.5, 6.5, -5.5, -6.5],
              [123.456, -123.456, 1.0, -1.0, 2147483000.0, -2147483000.0, 0.49999997, 8.5]], np.float32)


def _round_half_away(x):
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def _round_half_odd(x):
    f = np.floor(x)
    tie = (x - f) == 0.5
    odd = np.where(np.mod(f, 2) != 0, f, f + 1)
    return np.where(tie, odd, _round_half_away(x))


REF = {"none": np.trunc, "trunc": np.trunc, "rint": np.rint, "round": _round_half_away, "floor": np.floor,
       "ceil": np.ceil, "odd": _round_half_odd}


def _to_int32(r):
    r = np.where(np.isnan(r), 0, r)
    return np.clip(r, np.iinfo(np.int32).min, np.iinfo(np.int32).max).astype(np.int32)


def _modes_program():
    outputs = [("o_" + m, S, "INT32", f'pl.cast(tf, pl.INT32, mode="{m}")') for m in MODES]
    outputs.append(("o_num", S, "INT32", "pl.cast(tf, pl.INT32, mode=3)"))   # a mode number: floor
    return pypto.compile(pl.parse_program(kernel_program_text([("f", S, "FP32")], outputs)))


def test_cast_modes_against_numpy():
    outs = run_kernel_program(_modes_program(), {"f": F})
    for m in MODES:
        np.testing.assert_array_equal(outs["o_" + m], _to_int32(REF[m](F.astype(np.float64))), err_msg=m)
    np.testing.assert_array_equal(outs["o_num"], _to_int32(np.floor(F.astype(np.float64))))


def test_cast_without_mode_rounds_and_warns_once_per_program():
    text = kernel_program_text([("f", S, "FP32")], [("a", S, "INT32", "pl.cast(tf, pl.INT32)"),
                                                    ("b", S, "INT16", "pl.cast(tf, pl.INT16)")])
    with pytest.warns(PyptoWarning, match='rounds to nearest .* mode="trunc"') as rec:
        prog = pl.parse_program(text, "cast.py")
    assert len([w for w in rec if issubclass(w.category, PyptoWarning)]) == 1
    assert "cast.py:" in str(rec[0].message)
    f = np.array([[0.5, -0.5, 1.5, -2.5, 2.4, -2.6, 7.0, 0.0]] * 4, np.float32)
    outs = run_kernel_program(pypto.compile(prog), {"f": f})
    np.testing.assert_array_equal(outs["a"], _round_half_away(f).astype(np.int32))
    # an explicit mode (or a float target) does not warn
    with warnings.catch_warnings():
        warnings.simplefilter("error", PyptoWarning)
        pl.parse_program(kernel_program_text([("f", S, "FP32")], [("a", S, "INT32", 'pl.cast(tf, pl.INT32, mode="round")'),
                                                                  ("h", S, "FP16", "pl.cast(tf, pl.FP16)")]))


ACCESS_BODY = [
    "pl.system.bar_v()",
    "pl.system.bar_all()",
    "pl.system.sync_src(set_pipe=1, wait_pipe=2, event_id=0)",
    "lane = pl.tile.get_subblock_idx()",
    "v = pl.tile.read(ta, [1, lane + 2])",
    "w = pl.tile.write(tb, [2, 3], v)",        # in place on tb; w is the updated tile
    "pl.tile.write(tb, [0, 0], pl.tile.read(ta, [3, 7]) * 2.0)",
]


def _access_program():
    outputs = [("o_w", S, "FP32", "w"), ("o_b", S, "FP32", "tb"), ("o_s", S, "FP32", "pl.expands(ta, v)"),
               ("o_lane", S, "INT32", "pl.expands(ti, pl.cast(lane, pl.INT32))")]
    return kernel_program_text([("a", S, "FP32"), ("b", S, "FP32"), ("i", S, "INT32")], outputs, body=ACCESS_BODY)


@pytest.mark.parametrize("race_check", [False, True])
def test_read_write_lane_and_barriers_against_numpy(race_check):
    rng = np.random.default_rng(7)
    a = rng.standard_normal(S).astype(np.float32)
    b = rng.standard_normal(S).astype(np.float32)
    i = np.zeros(S, np.int32)
    outs = run_kernel_program(pypto.compile(pl.parse_program(_access_program())), {"a": a, "b": b, "i": i},
                              race_check=race_check)
    want_w = b.copy()
    want_w[2, 3] = a[1, 2]
    want = want_w.copy()
    want[0, 0] = a[3, 7] * 2
    np.testing.assert_array_equal(outs["o_b"], want)     # both writes landed in tb's buffer
    np.testing.assert_array_equal(outs["o_w"], want_w)   # w: tb as of the first write (a copy)
    np.testing.assert_array_equal(outs["o_s"], np.full(S, a[1, 2], np.float32))
    np.testing.assert_array_equal(outs["o_lane"], np.zeros(S, np.int32))


def _kernel_src(text):
    return kernel_cpu.generate(codegen.run_pipeline(pl.parse_program(text)), "k")


def test_emitted_kernel_code(tmp_path):
    src = _kernel_src(_access_program())
    # the DSL site, then the indices and the extents: tile_at / tile_set check each index per axis
    assert 'pypto_kernel::tile_at(ctx, ta, "<string>", ' in src and ", {static_cast<int64_t>(1), " in src, src
    assert ("if (!pypto_kernel::tile_set<pypto_kernel::Storage::F32>(ctx, tb, \"<string>\", " in src
            and "{static_cast<int64_t>(2), static_cast<int64_t>(3)}, {4, 8}, " in src), src
    assert "0 /* system.bar_v: no-op on the CPU */" in src
    modes = _kernel_src(kernel_program_text([("f", S, "FP32")], [("o", S, "INT32", 'pl.cast(tf, pl.INT32, mode="odd")')]))
    assert "pypto_kernel::cast_mode<pypto_kernel::Storage::I32>(" in modes and ", 32, 6);" in modes, modes
    if shutil.which("g++") is None:
        pytest.fail("g++ is required")
    for tag, text in (("access", src), ("modes", modes)):
        path = tmp_path / (tag + ".cpp")
        path.write_text(text)
        r = subprocess.run(["g++", "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-I" + include_dir(),
                            "-I" + kernel_include_dir(), "-c", str(path), "-o", str(tmp_path / (tag + ".o"))],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[:4000]


def test_printed_cast_mode_round_trips():
    from pypto import ir
    prog = pl.parse_program(kernel_program_text([("f", S, "FP32")], [("o", S, "INT32", 'pl.cast(tf, pl.INT32, mode="floor")')]))
    text = ir.python_print(prog)
    assert 'pl.cast(tf, pl.INT32, mode="floor")' in text, text
    assert ir.structural_equal_explain(pl.parse_program(text), prog)[0]



def test_printed_tile_read_and_namespaced_tile_ops_round_trip():
    # tile.read printed as pl.read(...) re-parsed as tensor.read; tile.create / gather_row /
    # get_subblock_idx have no top-level spelling at all.
    from pypto import ir
    for prog in (pl.parse_program(_access_program()), pl.parse_program(SCATTER_GATHER)):
        text = ir.python_print(prog)
        assert "pl.read(" not in text and "pl.create(" not in text and "pl.gather_row(" not in text, text
        ok, why = ir.structural_equal_explain(pl.parse_program(text), prog)
        assert ok, why
    assert "pl.tile.read(ta, [1, lane + 2])" in ir.python_print(pl.parse_program(_access_program()))


MISUSE = [
    ('pl.cast(tf, pl.INT32, mode="banker")', "unknown cast mode 'banker'", '"round"'),
    ("pl.cast(tf, pl.INT32, mode=9)", "unknown cast mode 9", None),
    ("pl.cast(tf, pl.INT32, rounding=1)", "pl.cast has no parameter 'rounding'", None),
    ('pl.expands(tf, pl.cast(pl.tile.read(tf, [0, 0]), pl.INT32, mode="floor"))',
     "a scalar pl.cast accepts only the default mode", None),
    ("pl.tile.write(tf, [0, 0], 1)", "tile.write: value Scalar[INDEX] must have the tile's dtype FP32",
     "pl.cast(v, pl.FP32)"),
    ("pl.tile.write(tf, [0], 1.0)", "tile.write: indices count (1) must match tile rank (2)", None),
    ("pl.expands(tf, pl.tile.read(tf, [0, 0, 0]))", "tile.read: indices count (3) must match tile rank (2)", None),
]


@pytest.mark.parametrize("expr,message,help", MISUSE, ids=[m[0] for m in MISUSE])
def test_misuse_is_located(expr, message, help):
    text = kernel_program_text([("f", S, "FP32")], [("o", S, "FP32", "x")], body=["x = " + expr])
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(text, "t.py")
    e = ei.value
    line = next(n for n, t in enumerate(text.splitlines(), 1) if t.strip().startswith("x = "))
    assert message in e.message, f"\nwant: {message}\ngot:  {e.message}"
    assert (e.file, e.line) == ("t.py", line), str(e)
    if help is not None:
        assert help in e.help, e.help


# ---- mscatter, gather_row, store(atomic=Add) ----------------------------------------------------

SCATTER_GATHER = '''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[4, 8], pl.FP32], idx: pl.Tensor[[4, 8], pl.INT32], o: pl.Out[pl.Tensor[[6, 8], pl.FP32]],
          g: pl.Out[pl.Tensor[[8, 8], pl.FP32]], gt: pl.Out[pl.Tensor[[8, 8], pl.FP32]]
          ) -> tuple[pl.Tensor[[6, 8], pl.FP32], pl.Tensor[[8, 8], pl.FP32], pl.Tensor[[8, 8], pl.FP32]]:
        ta = pl.load(a, [0, 0], [4, 8])
        ti = pl.load(idx, [0, 0], [4, 8])
        o = pl.mscatter(ta, ti, o)
        d = pl.tile.create([8, 8], dtype=pl.FP32)
        d2 = pl.tile.gather_row(d, a, [1, 2], [1, 3], [2, 4])
        e = pl.tile.create([8, 8], dtype=pl.FP32)
        e2 = pl.tile.gather_row(e, a, [0, 5], [0, 1], [3, 2], transpose=True)
        g = pl.store(d2, [0, 0], g)
        gt = pl.store(e2, [0, 0], gt)
        return o, g, gt

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4, 8], pl.FP32], idx: pl.Tensor[[4, 8], pl.INT32], o: pl.Out[pl.Tensor[[6, 8], pl.FP32]],
             g: pl.Out[pl.Tensor[[8, 8], pl.FP32]], gt: pl.Out[pl.Tensor[[8, 8], pl.FP32]]
             ) -> tuple[pl.Tensor[[6, 8], pl.FP32], pl.Tensor[[8, 8], pl.FP32], pl.Tensor[[8, 8], pl.FP32]]:
        o, g, gt = self.k(a, idx, o, g, gt)
        return o, g, gt
'''


@pytest.mark.parametrize("race_check", [False, True])
def test_mscatter_and_gather_row_against_numpy(race_check):
    rng = np.random.default_rng(11)
    a = rng.standard_normal((4, 8)).astype(np.float32)
    idx = rng.integers(0, 48, (4, 8)).astype(np.int32)
    idx[3, 7] = idx[0, 0]                    # a repeated index: the last write wins
    o = np.zeros((6, 8), np.float32)
    g = np.zeros((8, 8), np.float32)
    gt = np.zeros((8, 8), np.float32)
    pypto.compile(pl.parse_program(SCATTER_GATHER))(a, idx, o, g, gt, race_check=race_check)
    want = np.zeros(48, np.float32)
    for k in range(32):
        want[idx.flat[k]] = a.flat[k]
    np.testing.assert_array_equal(o, want.reshape(6, 8))
    want_g = np.zeros((8, 8), np.float32)
    want_g[1:3, 2:6] = a[1:3, 3:7]
    np.testing.assert_array_equal(g, want_g)
    want_gt = np.zeros((8, 8), np.float32)
    want_gt[0:2, 5:8] = a[0:3, 1:3].T
    np.testing.assert_array_equal(gt, want_gt)


def test_mscatter_index_outside_the_tensor_fails_the_run():
    a = np.ones((4, 8), np.float32)
    idx = np.zeros((4, 8), np.int32)
    idx[2, 2] = 48
    with pytest.raises(Exception, match=r"mscatter of tensor 'o': index 48 is outside \[0, 48\)"):
        pypto.compile(pl.parse_program(SCATTER_GATHER))(a, idx, np.zeros((6, 8), np.float32),
                                                        np.zeros((8, 8), np.float32), np.zeros((8, 8), np.float32))


# §18: gather_row / mscatter on a tensor argument smaller than the declared [8, 8] parameter
# (clamped slices): reads past the run-time extent give 0, writes there are dropped.
CLIPPED_SCATTER_GATHER = '''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[8, 8], pl.FP32], idx: pl.Tensor[[4, 8], pl.INT32], o: pl.Out[pl.Tensor[[8, 8], pl.FP32]],
          g: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> tuple[pl.Tensor[[8, 8], pl.FP32], pl.Tensor[[8, 8], pl.FP32]]:
        ta = pl.load(a, [0, 0], [4, 8])
        ti = pl.load(idx, [0, 0], [4, 8])
        o = pl.mscatter(ta, ti, o)
        d = pl.tile.full([8, 8], pl.FP32, -1.0)
        d2 = pl.tile.gather_row(d, a, [0, 0], [2, 0], [4, 8])
        g = pl.store(d2, [0, 0], g)
        return o, g

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[12, 8], pl.FP32], idx: pl.Tensor[[4, 8], pl.INT32],
             out: pl.Out[pl.Tensor[[13, 8], pl.FP32]], g: pl.Out[pl.Tensor[[8, 8], pl.FP32]]
             ) -> tuple[pl.Tensor[[13, 8], pl.FP32], pl.Tensor[[8, 8], pl.FP32]]:
        a = pl.tensor.slice(x, [8, 8], [8, 0])
        o = pl.tensor.slice(out, [8, 8], [8, 0])
        o, g = self.k(a, idx, o, g)
        return out, g
'''


@pytest.mark.parametrize("race_check", [False, True])
def test_gather_row_and_mscatter_are_clipped_to_a_smaller_runtime_tensor(race_check):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((12, 8)).astype(np.float32)
    idx = rng.permutation(64)[:32].reshape(4, 8).astype(np.int32)
    out = np.full((13, 8), 3.0, np.float32)
    g = np.zeros((8, 8), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PyptoWarning)        # the static overhang warning of the slices
        prog = pypto.compile(pl.parse_program(CLIPPED_SCATTER_GATHER))
    try:
        prog(x, idx, out, g, race_check=race_check)
    finally:
        prog.close()
    a = x[8:12]                                               # the 4 run-time rows of the [8, 8] view
    want = np.full((13, 8), 3.0, np.float32)
    for k in range(32):
        r, c = divmod(int(idx.flat[k]), 8)
        if r < 5:                                             # the output view is clamped to 5 rows
            want[8 + r, c] = a.flat[k]
    np.testing.assert_array_equal(out, want)
    want_g = np.full((8, 8), -1.0, np.float32)
    want_g[0:2] = a[2:4]
    want_g[2:4] = 0.0                                         # rows 4, 5 of the view: past the extent
    np.testing.assert_array_equal(g, want_g)


ATOMIC = '''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def part(self, a: pl.Tensor[[16, 8], pl.FP32], i: pl.Scalar[pl.INDEX],
             acc: pl.InOut[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        acc = pl.store(pl.load(a, [i * 4, 0], [4, 8]), [0, 0], acc, atomic=pl.AtomicType.Add)
        return acc

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 8], pl.FP32],
             acc: pl.InOut[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        for i in pl.parallel(4):
            acc = self.part(a, i, acc)
        return acc
'''


@pytest.mark.parametrize("race_check", [False, True])
def test_store_atomic_add_accumulates(race_check):
    a = np.random.default_rng(5).standard_normal((16, 8)).astype(np.float32)
    acc = np.full((4, 8), 1.0, np.float32)
    pypto.compile(pl.parse_program(ATOMIC))(a, acc, race_check=race_check)
    np.testing.assert_allclose(acc, 1.0 + a.reshape(4, 4, 8).sum(axis=0), rtol=1e-5, atol=1e-6)


def test_store_atomic_prints_and_emits_store_add():
    from pypto import ir
    prog = pl.parse_program(ATOMIC)
    text = ir.python_print(prog)
    assert 'atomic="Add"' in text, text
    assert ir.structural_equal_explain(pl.parse_program(text), prog)[0]
    src = kernel_cpu.generate(codegen.run_pipeline(prog), "part")
    assert "if (!pypto_kernel::store_add<pypto_kernel::Storage::F32>(ctx, " in src, src
    src2 = kernel_cpu.generate(codegen.run_pipeline(pl.parse_program(SCATTER_GATHER)), "k")
    assert "if (!pypto_kernel::mscatter<pypto_kernel::Storage::F32>(ctx, ta, ti, 32, ctx->tensors[2]" in src2, src2
    assert "pypto_kernel::gather_row<pypto_kernel::Storage::F32>(ctx, " in src2 and ", true, \"a\")) return;" in src2


KERNEL_MISUSE = [
    ("x = pl.store(pl.load(l, [0, 0], [4, 8]), [0, 0], l, atomic=pl.AtomicType.Add)",
     "tile.store: atomic=Add supports FP32, FP16, INT32, INT16 and INT8, got INT64", "pl.cast"),
    ("x = pl.mscatter(ta, ta, o)", "tile.mscatter: idx dtype must be one of INT32, got FP32", None),
    ("x = pl.mscatter(ta, ti, l)", "tile.mscatter: output_tensor dtype INT64 differs from src dtype FP32", "pl.cast"),
    ("x = pl.tile.gather_row(ta, a, [2, 0], [0, 0], [4, 8])", "tile.gather_row: block [2, 6) of dst dimension 0 is outside", None),
    ("x = pl.tile.gather_row(ta, l, [0, 0], [0, 0], [4, 8])", "tile.gather_row: src dtype INT64 differs from dst dtype FP32", None),
]


@pytest.mark.parametrize("stmt,message,help", KERNEL_MISUSE, ids=[m[0] for m in KERNEL_MISUSE])
def test_scatter_gather_atomic_misuse_is_located(stmt, message, help):
    text = f'''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[4, 8], pl.FP32], i: pl.Tensor[[4, 8], pl.INT32], l: pl.Tensor[[4, 8], pl.INT64],
          o: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        ta = pl.load(a, [0, 0], [4, 8])
        ti = pl.load(i, [0, 0], [4, 8])
        {stmt}
        o = pl.store(ta, [0, 0], o)
        return o
'''
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(text, "t.py")
    e = ei.value
    line = next(n for n, t in enumerate(text.splitlines(), 1) if t.strip().startswith("x = "))
    assert message in e.message, f"\nwant: {message}\ngot:  {e.message}"
    assert (e.file, e.line) == ("t.py", line), str(e)
    if help is not None:
        assert help in e.help, e.help
