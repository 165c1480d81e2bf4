"""The reference DSL's tensor-only op names (spec reference_ops.md §1.1) on tensors: pl.sin, pl.cos,
pl.gather, pl.scatter, pl.scatter_update, pl.gather_row and pl.arange (and their pl.tensor.<name>
spellings) inside kernels and CORE_GROUP pl.at bodies. Each is a tensor.* op with the tile op's
parameters and type rule; ConvertTensorToTileOps lowers it to the tile op (anchor_features §9).

Checked here: NumPy results end to end (race-checked), the lowering, the kernel C++ golden
(tests/golden/anchor_tensor_reference_ops/; the orchestration golden is test_golden.py's), round-trips,
run-time index errors, and a located error for each misuse.

Regenerate the kernel goldens after an intended change, then review the diff:

    PYPTO_UPDATE_GOLDEN=1 python -m pytest -q tests/python/test_tensor_reference_ops.py
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
from pypto.errors import PyptoError
from pypto.runtime import include_dir, kernel_include_dir

from codegen_test_util import GOLDEN_DIR, load_single_program, significant_lines

CASE = os.path.join(GOLDEN_DIR, "anchor_tensor_reference_ops")
UPDATE = os.environ.get("PYPTO_UPDATE_GOLDEN") == "1"
KERNELS = ["index_ops", "trig"]


def _program():
    return load_single_program(os.path.join(CASE, "program.py"))


@pytest.fixture(scope="module")
def compiled():
    p = pypto.compile(_program())
    yield p
    p.close()


def _inputs(seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((4, 8)).astype(np.float32)
    idx = rng.integers(0, 32, (4, 8)).astype(np.int32)
    idx[3, 7] = idx[0, 0]                       # a repeated index: the last write wins
    rows = np.array([[3, 1]], np.int32)
    upd = rng.standard_normal((2, 8)).astype(np.float32)
    return a, idx, rows, upd


def _outputs():
    return [np.zeros((4, 8), np.float32) for _ in range(4)] + [np.zeros((1, 8), np.int32),
                                                                np.zeros((4, 8), np.float32)]


def _scatter(dst, src, idx):
    out = dst.copy().ravel()
    for k in range(idx.size):                   # row-major order, last write wins
        out[idx.flat[k]] = src.flat[k]
    return out.reshape(dst.shape)


@pytest.mark.parametrize("race_check", [False, True])
def test_tensor_reference_ops_match_numpy(compiled, race_check):
    a, idx, rows, upd = _inputs(7)
    g, s, u, r, ar, t = outs = _outputs()
    compiled(a, idx, rows, upd, *outs, race_check=race_check)
    np.testing.assert_array_equal(g, a.flat[idx])
    np.testing.assert_array_equal(s, _scatter(np.zeros((4, 8), np.float32), a, idx))
    want_u = a.copy()
    want_u[3], want_u[1] = upd[0], upd[1]
    np.testing.assert_array_equal(u, want_u)
    want_r = np.full((4, 8), -1.0, np.float32)
    want_r[1:3, 2:6] = a[0:2, 1:5]
    np.testing.assert_array_equal(r, want_r)
    np.testing.assert_array_equal(ar, np.arange(3, 11, dtype=np.int32)[None, :])
    x = a.flat[idx].astype(np.float64)
    np.testing.assert_allclose(t, _scatter(np.zeros((4, 8)), (np.sin(x) ** 2 + np.cos(x) ** 2) * x, idx),
                               rtol=1e-5, atol=1e-6)


def test_lowered_to_tile_ops():
    text = ir.python_print(codegen.run_pipeline(_program()))
    for n in ("sin", "cos", "gather", "scatter", "scatter_update", "gather_row", "arange"):
        assert f"pl.tensor.{n}(" not in text, text
    assert "pl.tile.gather_row(block, a, [1, 2], [0, 1], [2, 4])" in text, text   # src stays the tensor
    assert "pl.tile.scatter_update(pl.load(a, [0, 0], [4, 8]), pl.load(rows, [0, 0], [1, 2]), " in text, text
    assert "pl.tile.sin(x)" in text and "pl.tile.arange(3, [1, 8], dtype=pl.INT32)" in text, text


def test_prints_and_round_trips():
    prog = _program()
    text = ir.python_print(prog)
    assert "pl.tensor.scatter_update(a, rows, upd, dim=-2)" in text, text      # the dim-first form normalised
    again = pl.parse_program(text)
    assert ir.structural_equal_explain(again, prog)[0], text
    assert ir.python_print(again) == text


@pytest.mark.parametrize("fn", KERNELS)
def test_kernel_cpp_golden(fn):
    code = kernel_cpu.generate(codegen.run_pipeline(_program()), fn)
    path = os.path.join(CASE, "kernel_%s.cpp" % fn)
    if UPDATE:
        with open(path, "w") as f:
            f.write(code)
    with open(path) as f:
        assert significant_lines(code) == significant_lines(f.read()), code


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
@pytest.mark.parametrize("fn", KERNELS)
def test_kernel_cpp_compiles_warning_free(fn, tmp_path):
    path = tmp_path / (fn + ".cpp")
    path.write_text(kernel_cpu.generate(codegen.run_pipeline(_program()), fn))
    r = subprocess.run(["g++", "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-I" + include_dir(),
                        "-I" + kernel_include_dir(), "-c", str(path), "-o", str(tmp_path / (fn + ".o"))],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


# ---- run-time indices outside the tensors fail the run -------------------------------------------

# Both tasks gather `a` by `idx` (index_ops submitted at program.py:37, the trig block at :38; the
# gathers at :21 and :40) and do not depend on each other, so a bad gather index fails both: the run
# reports whichever failed first, located at its gather's line.
# scatter_update is index_ops' alone.
@pytest.mark.parametrize("which, message", [
    ("gather", r"task #\d+ \(AIV kernel '(index_ops|trig)'.*failed: program.py:(21|40): gather from tensor 'a' with "
               r"indices from tensor 'idx': flat index 32 is outside \[0, 32\)"),
    ("scatter_update", r"task #\d+ \(AIV kernel 'index_ops'.*failed: program.py:23: scatter_update of tensor 'a' "
                       r"with indices from tensor 'rows': row 4 is outside \[0, 4\)"),
])
def test_out_of_range_index_fails_the_run(compiled, which, message):
    a, idx, rows, upd = _inputs(8)
    if which == "gather":
        idx[2, 5] = 32
    else:
        rows[0, 1] = 4
    with pytest.raises(Exception, match=message):
        compiled(a, idx, rows, upd, *_outputs())


SCATTER_ONLY = '''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4, 8], pl.FP32], idx: pl.Tensor[[4, 8], pl.INT32],
             o: pl.InOut[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            o = pl.assemble(o, pl.scatter(o, a, idx), [0, 0])
        return o
'''


@pytest.mark.parametrize("bad", [-1, 32])
def test_scatter_index_outside_fails_the_run_and_writes_nothing(bad):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((4, 8)).astype(np.float32)
    idx = rng.permutation(32).reshape(4, 8).astype(np.int32)[:, ::-1].copy()
    o = np.full((4, 8), 7.0, np.float32)
    prog = pypto.compile(pl.parse_program(SCATTER_ONLY))
    try:
        prog(a, idx, o, race_check=True)                 # in range: a permutation of o's slots
        np.testing.assert_array_equal(o, _scatter(np.full((4, 8), 7.0, np.float32), a, idx))
        o[:] = 7.0
        idx[1, 1] = bad
        with pytest.raises(Exception, match=r"scatter into tensor 'o' with indices from tensor 'idx': flat index %d is "
                                                 r"outside \[0, 32\)" % bad):
            prog(a, idx, o)
    finally:
        prog.close()
    np.testing.assert_array_equal(o, np.full((4, 8), 7.0, np.float32))   # the store never ran


# ---- pl.tensor.<name> spellings, 1-D gather, descending arange -------------------------------------

EXPLICIT = '''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16], pl.FP32], idx: pl.Tensor[[8], pl.INT32], m: pl.Tensor[[2, 8], pl.FP32],
          g: pl.Out[pl.Tensor[[8], pl.FP32]], tr: pl.Out[pl.Tensor[[2, 8], pl.FP32]],
          ar: pl.Out[pl.Tensor[[1, 16], pl.INT32]], blk: pl.Out[pl.Tensor[[8, 2], pl.FP32]]
          ) -> tuple[pl.Tensor[[8], pl.FP32], pl.Tensor[[2, 8], pl.FP32], pl.Tensor[[1, 16], pl.INT32],
                     pl.Tensor[[8, 2], pl.FP32]]:
        g = pl.assemble(g, pl.tensor.gather(a, idx), [0])
        tr = pl.assemble(tr, pl.tensor.sub(pl.tensor.sin(m), pl.tensor.cos(m)), [0, 0])
        ar = pl.assemble(ar, pl.tensor.arange(5, [1, 16], dtype=pl.INT32, descending=True), [0, 0])
        blk = pl.assemble(blk, pl.tensor.gather_row(pl.tensor.full([8, 2], 0.0, dtype=pl.FP32), m, [0, 0], [0, 3],
                                                    [2, 5], transpose=True), [0, 0])
        return g, tr, ar, blk

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16], pl.FP32], idx: pl.Tensor[[8], pl.INT32], m: pl.Tensor[[2, 8], pl.FP32],
             g: pl.Out[pl.Tensor[[8], pl.FP32]], tr: pl.Out[pl.Tensor[[2, 8], pl.FP32]],
             ar: pl.Out[pl.Tensor[[1, 16], pl.INT32]], blk: pl.Out[pl.Tensor[[8, 2], pl.FP32]]
             ) -> tuple[pl.Tensor[[8], pl.FP32], pl.Tensor[[2, 8], pl.FP32], pl.Tensor[[1, 16], pl.INT32],
                        pl.Tensor[[8, 2], pl.FP32]]:
        g, tr, ar, blk = self.k(a, idx, m, g, tr, ar, blk)
        return g, tr, ar, blk
'''


SCATTER_INTO_NEW = '''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4, 8], pl.FP32], idx: pl.Tensor[[4, 8], pl.INT32],
             o: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            o = pl.assemble(o, pl.scatter(pl.create_tensor([4, 8], dtype=pl.FP32), a, idx), [0, 0])
        return o
'''


def test_scatter_into_a_new_tile_is_named_so_and_located():
    # The destination is a nested pl.create_tensor: "a new tile" (it was "a computed tile"), and
    # the failure is located at the scatter's line (dsl_terms reads the label back).
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 8)).astype(np.float32)
    idx = rng.permutation(32).reshape(4, 8).astype(np.int32)
    o = np.zeros((4, 8), np.float32)
    prog = pypto.compile(pl.parse_program(SCATTER_INTO_NEW, "new.py"))
    try:
        prog(a, idx, o, race_check=True)
        np.testing.assert_array_equal(o, _scatter(np.zeros((4, 8), np.float32), a, idx))
        idx[3, 0] = 32
        with pytest.raises(Exception, match=r"failed: new\.py:11: scatter into a new tile with indices from tensor "
                                             r"'idx': flat index 32 is outside \[0, 32\)"):
            prog(a, idx, o)
    finally:
        prog.close()


def test_explicit_tensor_spellings_match_numpy():
    rng = np.random.default_rng(3)
    a = rng.standard_normal(16).astype(np.float32)
    idx = rng.integers(0, 16, 8).astype(np.int32)
    m = rng.uniform(-3, 3, (2, 8)).astype(np.float32)
    g, tr = np.zeros(8, np.float32), np.zeros((2, 8), np.float32)
    ar, blk = np.zeros((1, 16), np.int32), np.ones((8, 2), np.float32)
    prog = pypto.compile(pl.parse_program(EXPLICIT))
    try:
        prog(a, idx, m, g, tr, ar, blk, race_check=True)
    finally:
        prog.close()
    np.testing.assert_array_equal(g, a[idx])
    np.testing.assert_allclose(tr, np.sin(m.astype(np.float64)) - np.cos(m.astype(np.float64)), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(ar, (5 - np.arange(16))[None, :])
    want = np.zeros((8, 2), np.float32)
    want[0:5, 0:2] = m[0:2, 3:8].T
    np.testing.assert_array_equal(blk, want)


# ---- misuse: a located error each ---------------------------------------------------------------

MISUSE = '''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[4, 8], pl.FP32], ai: pl.Tensor[[4, 8], pl.INT32], idx: pl.Tensor[[4, 8], pl.INT32],
          f: pl.Tensor[[4, 8], pl.FP32], h: pl.Tensor[[4, 8], pl.FP16], a3: pl.Tensor[[2, 4, 8], pl.FP32],
          i16: pl.Tensor[[4, 8], pl.INT16], o: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        {stmt}
        return o
'''


@pytest.mark.parametrize("stmt, message, help", [
    ("x = pl.sin(ai)", "tensor.sin is FP32-only, got INT32", "pl.cast(x, pl.FP32)"),
    ("x = pl.cos(h)", "tensor.cos is FP32-only, got FP16", None),
    ("x = pl.sin(pl.load(a, [0, 0], [4, 8]))", "pl.sin is a tensor op (as in the reference DSL), got a tile",
     "pl.tile.sin(...)"),
    ("x = pl.gather(pl.load(a, [0, 0], [4, 8]), idx)", "pl.gather is a tensor op", "pl.tile.gather(...)"),
    ("x = pl.gather(a, f)", "tensor.gather: indices dtype must be one of INT32, got FP32", None),
    ("x = pl.gather(ai, pl.load(idx, [0, 0], [4, 8]))", "tensor.gather: cannot mix Tensor and Tile arguments", None),
    ("x = pl.gather(pl.tensor.cast(a, pl.INT8), idx)", "tensor.gather: src dtype must be one of", None),
    ("x = pl.scatter(a, a, f)", "tensor.scatter: indexes dtype must be one of INT32, got FP32", None),
    ("x = pl.scatter(h, h, idx)", "tensor.scatter: indexes dtype must be one of INT16, got INT32", None),
    ("x = pl.scatter(a3, a3, idx)", "tensor.scatter: argument 'dst' must be a 2-D tensor, got Tensor[[2, 4, 8]", None),
    ("x = pl.scatter(a, h, idx)", "tensor.scatter", None),
    ("x = pl.scatter_update(a, -1, idx, a)", "tensor.scatter_update: only dim=-2 is currently supported", None),
    ("x = pl.scatter_update(a, idx, f)", "tensor.scatter_update: src must be [index size, d] = [32, 8]", None),
    ("x = pl.scatter_update(a, f, f)", "tensor.scatter_update: requires integer index dtype, but got FP32", None),
    ("x = pl.gather_row(a, h, [0, 0], [0, 0], [2, 2])", "tensor.gather_row: src dtype FP16 differs from dst dtype FP32",
     None),
    ("x = pl.gather_row(a, f, [3, 0], [0, 0], [2, 2])", "tensor.gather_row: block [3, 5) of dst dimension 0 is outside",
     None),
    ("x = pl.gather_row(a, f, [0, 0], [3, 0], [2, 2])", "tensor.gather_row: block [3, 5) of src dimension 0 is outside "
     "the tensor's 4", "src_offset + shapes"),
    ("x = pl.gather_row(a, f, [0, 0], [0, -1], [2, 2])", "block [-1, 1) of src dimension 1 is outside", None),
    ("x = pl.gather_row(a, a3, [0, 0], [0, 0], [2, 2])", "tensor.gather_row: src must be a 2-D tensor", None),
    ("x = pl.arange(0, [2, 8])", "tensor.arange: every leading dim must be 1, got [2, 8]", None),
    ("x = pl.arange(0, [1, 1])", "tensor.arange: the last dim must not be 1", None),
    ("x = pl.arange(0, [1, 8], dtype=pl.FP32)", "tensor.arange: result dtype must be one of INT16, INT32, UINT16, "
     "UINT32, got FP32", None),
    ("x = pl.arange(a, [1, 8])", "tensor.arange: argument 'start' must be an integer scalar", None),
    ("x = pl.sin(a, a)", "pl.sin takes at most 1 positional arguments", None),
    ("x = pl.sin(3.0)", "pl.sin needs a tensor, got", None),
])
def test_misuse_is_located(stmt, message, help):
    with pytest.raises(PyptoError) as e:
        pl.parse_program(MISUSE.format(stmt=stmt))
    text = str(e.value)
    assert message in text, text
    assert "<string>:11:" in text, text          # the statement's line
    if help:
        assert help in text, text


def test_gather_row_of_a_computed_source_is_located():
    prog = pl.parse_program(MISUSE.format(stmt="o = pl.assemble(o, pl.gather_row(a, pl.exp(f), [0, 0], [0, 0], [2, 2]), "
                                               "[0, 0])"))
    with pytest.raises(PyptoError) as e:
        codegen.run_pipeline(prog)
    text = str(e.value)
    assert "pl.tensor.gather_row reads its operand 1 from a tensor, but inside the kernel it is a computed (tile) " \
           "value" in text and "<string>:11:" in text and "pass a tensor parameter" in text, text


ORCH = '''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4, 8], pl.FP32], idx: pl.Tensor[[4, 8], pl.INT32],
             o: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        {stmt}
        return o
'''


@pytest.mark.parametrize("stmt, op", [
    ("x = pl.sin(a)", "tensor.sin"),
    ("x = pl.tensor.cos(a)", "tensor.cos"),
    ("x = pl.gather(a, idx)", "tensor.gather"),
    ("x = pl.scatter(o, a, idx)", "tensor.scatter"),
    ("x = pl.scatter_update(o, idx, a)", "tensor.scatter_update"),
    ("x = pl.gather_row(o, a, [0, 0], [0, 0], [2, 2])", "tensor.gather_row"),
    ("x = pl.arange(0, [1, 8])", "tensor.arange"),
])
def test_orchestration_refuses_with_the_pl_at_help(stmt, op):
    with pytest.raises(PyptoError) as e:
        pl.parse_program(ORCH.format(stmt=stmt))
    text = str(e.value)
    assert f"{op} computes on tensor data" in text and "<string>:10:" in text, text
    assert "wrap it in `with pl.at(level=pl.Level.CORE_GROUP):`" in text, text


@pytest.mark.parametrize("name", ["sort32", "mrgsort"])
def test_sort32_and_mrgsort_say_they_are_accelerator_only(name):
    with pytest.raises(PyptoError) as e:
        pl.parse_program(ORCH.format(stmt=f"x = pl.{name}(a, idx)"))
    text = str(e.value)
    assert f"unknown DSL function 'pl.{name}'" in text and "<string>:10:" in text, text
    assert f"the reference's pl.{name} is the hardware sort (tile.{name}), an accelerator-only op" in text, text


# ---- the reference's dispatching names on tensors (reference_ops.md §1.1) ------------------------
# pl.cmp / concat / fillpad / expands / row_prod / col_* / row_expand* / col_expand* / part_* on
# tensors are tensor.<op> mirrors, lowered like the rest; on tiles they stay the tile ops.

DM, DN = 8, 16
DMASK = ((DN + 7) // 8 + 31) // 32 * 32
_S, _ROW, _COL = [DM, DN], [DM, 1], [1, DN]


def _pack_mask(pred):
    out = np.zeros((pred.shape[0], DMASK), np.uint8)
    for j in range(pred.shape[1]):
        out[:, j // 8] |= (pred[:, j].astype(np.uint8) << (j % 8))
    return out


DISPATCH = {
    # name: (expression on tensors a, b, r, c, q, out shape, out dtype, NumPy reference over float64)
    "cmp": ("pl.cmp(a, b, cmp_type=4)", [DM, DMASK], "UINT8", lambda v: _pack_mask(v["a"] > v["b"])),
    "cmp_scalar": ("pl.cmp(a, 0.0)", [DM, DMASK], "UINT8", lambda v: _pack_mask(v["a"] == 0)),
    "concat": ("pl.concat(a, r)", [DM, DN + 1], "FP32", lambda v: np.concatenate([v["a"], v["r"]], axis=1)),
    "fillpad": ("pl.fillpad(a, pad_value=0)", _S, "FP32", lambda v: v["a"]),
    "fillpad_pos": ("pl.fillpad(a, pl.PadValue.max)", _S, "FP32", lambda v: v["a"]),   # every element is valid
    "expands": ("pl.expands(a, 0.75)", _S, "FP32", lambda v: np.full(_S, 0.75)),
    "row_prod": ("pl.row_prod(q)", _ROW, "FP32", lambda v: v["q"].prod(axis=1, keepdims=True)),
    "col_sum": ("pl.col_sum(a)", _COL, "FP32", lambda v: v["a"].sum(axis=0, keepdims=True)),
    "col_sum_tmp": ("pl.col_sum(a, b)", _COL, "FP32", lambda v: v["a"].sum(axis=0, keepdims=True)),
    "col_max": ("pl.col_max(a)", _COL, "FP32", lambda v: v["a"].max(axis=0, keepdims=True)),
    "col_min": ("pl.col_min(a)", _COL, "FP32", lambda v: v["a"].min(axis=0, keepdims=True)),
    "col_prod": ("pl.col_prod(q)", _COL, "FP32", lambda v: v["q"].prod(axis=0, keepdims=True)),
    "row_expand": ("pl.row_expand(a, r)", _S, "FP32", lambda v: np.broadcast_to(v["r"], _S)),
    "row_expand_max": ("pl.row_expand_max(a, r)", _S, "FP32", lambda v: np.maximum(v["a"], v["r"])),
    "row_expand_min": ("pl.row_expand_min(a, r)", _S, "FP32", lambda v: np.minimum(v["a"], v["r"])),
    "row_expand_expdif": ("pl.row_expand_expdif(a, r)", _S, "FP32", lambda v: np.exp(v["a"] - v["r"])),
    "col_expand": ("pl.col_expand(a, c)", _S, "FP32", lambda v: np.broadcast_to(v["c"], _S)),
    "col_expand_add": ("pl.col_expand_add(a, c)", _S, "FP32", lambda v: v["a"] + v["c"]),
    "col_expand_sub": ("pl.col_expand_sub(a, c)", _S, "FP32", lambda v: v["a"] - v["c"]),
    "col_expand_mul": ("pl.col_expand_mul(a, c)", _S, "FP32", lambda v: v["a"] * v["c"]),
    "col_expand_div": ("pl.col_expand_div(a, c)", _S, "FP32", lambda v: v["a"] / v["c"]),
    "col_expand_max": ("pl.col_expand_max(a, c)", _S, "FP32", lambda v: np.maximum(v["a"], v["c"])),
    "col_expand_min": ("pl.col_expand_min(a, c)", _S, "FP32", lambda v: np.minimum(v["a"], v["c"])),
    "col_expand_expdif": ("pl.col_expand_expdif(a, c)", _S, "FP32", lambda v: np.exp(v["a"] - v["c"])),
    "part_add": ("pl.part_add(a, b)", _S, "FP32", lambda v: v["a"] + v["b"]),
    "part_mul": ("pl.part_mul(a, b)", _S, "FP32", lambda v: v["a"] * v["b"]),
    "part_max": ("pl.part_max(a, b)", _S, "FP32", lambda v: np.maximum(v["a"], v["b"])),
    "part_min": ("pl.tensor.part_min(a, b)", _S, "FP32", lambda v: np.minimum(v["a"], v["b"])),
}
_DIN = {"a": _S, "b": _S, "r": _ROW, "c": _COL, "q": _S}


def _dispatch_program():
    T = lambda shape, dt="FP32": "pl.Tensor[[%s], pl.%s]" % (", ".join(map(str, shape)), dt)   # noqa: E731
    ins = ", ".join("%s: %s" % (n, T(s)) for n, s in _DIN.items())
    outs = ", ".join("o_%s: pl.Out[%s]" % (n, T(s, dt)) for n, (_e, s, dt, _f) in DISPATCH.items())
    ret = "tuple[%s]" % ", ".join(T(s, dt) for _e, s, dt, _f in DISPATCH.values())
    body = "\n".join("            o_%s = pl.assemble(o_%s, %s, [0, 0])" % (n, n, e) for n, (e, *_r) in DISPATCH.items())
    names = ", ".join("o_" + n for n in DISPATCH)
    return f'''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, {ins}, {outs}) -> {ret}:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="ref_ops"):
{body}
        return {names}
'''


@pytest.mark.parametrize("race_check", [False, True])
def test_dispatching_names_on_tensors_match_numpy(race_check):
    rng = np.random.default_rng(17)
    vals = {"a": rng.integers(-3, 4, _S).astype(np.float32), "b": rng.integers(-3, 4, _S).astype(np.float32),
            "r": rng.standard_normal(_ROW).astype(np.float32), "c": rng.uniform(0.5, 2, _COL).astype(np.float32),
            "q": rng.uniform(0.5, 1.5, _S).astype(np.float32)}
    vals["a"][0, :4] = 0.0
    outs = {n: np.zeros(s, np.uint8 if dt == "UINT8" else np.float32) for n, (_e, s, dt, _f) in DISPATCH.items()}
    prog = pypto.compile(pl.parse_program(_dispatch_program()))
    try:
        prog(*vals.values(), *outs.values(), race_check=race_check)
    finally:
        prog.close()
    v64 = {k: x.astype(np.float64) for k, x in vals.items()}
    for n, (_e, _s, dt, f) in DISPATCH.items():
        if dt == "UINT8":
            np.testing.assert_array_equal(outs[n], f(v64), err_msg=n)
        else:
            np.testing.assert_allclose(outs[n], f(v64), rtol=1e-5, atol=1e-5, err_msg=n)


def test_dispatching_names_keep_the_tile_op_on_tiles():
    prog = pl.parse_program(_dispatch_program())
    text = ir.python_print(prog)
    assert "pl.tensor.col_sum(a)" in text and "pl.tensor.cmp(a, b, cmp_type=4)" in text, text
    lowered = ir.python_print(codegen.run_pipeline(prog))
    assert "pl.tensor.col_sum" not in lowered and "pl.tensor.part_min" not in lowered, lowered
    again = pl.parse_program(text)
    assert ir.structural_equal_explain(again, prog)[0], text


@pytest.mark.parametrize("stmt, message", [
    ("x = pl.col_expand(a, f)", "tensor.col_expand: shape mismatch"),
    ("x = pl.concat(a, ai)", "tensor.concat: dtype mismatch: Tensor[[4, 8], FP32] vs Tensor[[4, 8], INT32]"),
    ("x = pl.part_add(a, pl.load(a, [0, 0], [4, 8]))", "pl.part_add cannot mix Tensor and Tile arguments"),
    ("x = pl.col_sum(a3)", "tensor.col_sum"),
    ("x = pl.cmp(a, f, cmp_type=9)", "tensor.cmp"),
])
def test_dispatching_names_misuse_is_located(stmt, message):
    with pytest.raises(PyptoError) as e:
        pl.parse_program(MISUSE.format(stmt=stmt))
    text = str(e.value)
    assert message in text and "<string>:11:" in text, text


def test_dispatching_name_in_orchestration_body_is_refused():
    with pytest.raises(PyptoError) as e:
        pl.parse_program(ORCH.format(stmt="x = pl.col_sum(a)"))
    assert "tensor.col_sum computes on tensor data" in str(e.value), str(e.value)


# ---- pl.full is the tensor fill (the reference's pl.full is tensor-only) ------------------------------

FULL = '''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4, 8], pl.FP32], o: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            two = pl.full([4, 8], pl.FP32, 2.0)
            o = pl.assemble(o, pl.sub(pl.full([4, 8], pl.FP32, 1.0), pl.maximum(a, two)), [0, 0])
        return o
'''


def test_full_is_a_tensor_operand_of_tensor_ops():
    a = np.random.default_rng(9).uniform(0, 4, (4, 8)).astype(np.float32)
    o = np.zeros((4, 8), np.float32)
    prog = pypto.compile(pl.parse_program(FULL))
    try:
        prog(a, o, race_check=True)
    finally:
        prog.close()
    np.testing.assert_array_equal(o, 1.0 - np.maximum(a, 2.0))
    text = ir.python_print(pl.parse_program(FULL))
    assert "two: pl.Tensor[[4, 8], pl.FP32] = pl.tensor.full([4, 8], 2.0, dtype=pl.FP32)" in text, text
    assert "pl.tensor.sub(pl.tensor.full([4, 8], 1.0, dtype=pl.FP32), pl.tensor.maximum(a, two))" in text, text


@pytest.mark.parametrize("name", ["tpush_to_aiv", "tpush_to_aic", "tpop_from_aic", "tpop_from_aiv"])
def test_pipe_fifo_names_are_refused_as_accelerator_only(name):
    with pytest.raises(PyptoError) as e:
        pl.parse_program(MISUSE.format(stmt=f"x = pl.{name}(pl.load(a, [0, 0], [4, 8]), split=0)"))
    text = str(e.value)
    assert f"tile.{name} is an accelerator-only op" in text and "<string>:11:" in text, text
