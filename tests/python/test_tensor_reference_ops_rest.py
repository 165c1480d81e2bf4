"""The reference DSL's last dispatching / tensor-only names on tensors (spec reference_ops.md §1.1, §10,
§11; anchor_features §9):

  - `pl.batch_matmul(a, b)` on tensors of rank 2 to 4: one matmul per batch index, batch dims
    broadcast; `pl.matmul_acc(acc, a, b)` with an operand of rank > 2 is the batched accumulate.
    ConvertTensorToTileOps loads a rank-3/4 operand batch matrix by batch matrix (kernel loads are
    1-D / 2-D) into one tile of its shape and calls tile.batch_matmul / tile.batch_matmul_acc;
  - `pl.full(shape, dtype, value)` is the tensor fill (tensor.full); on tiles it is a located error
    naming `pl.tile.full`, the tile fill;
  - `pl.create_tile(shape, dtype)` next to tensors in a kernel is the same zero-filled value as
    `pl.create_tensor`; with tiles it stays tile.create;
  - `pl.assemble(tensor, tile, offsets)` in a kernel stores the tile (anchor_features §9 rule 4).

Checked: NumPy results end to end (race-checked), the lowering, the kernel C++ golden
(tests/golden/anchor_tensor_reference_ops_rest/; the orchestration golden is test_golden.py's), the
round trip, and a located error for each misuse. Regenerate the kernel goldens after an intended change:

    PYPTO_UPDATE_GOLDEN=1 python -m pytest -q tests/python/test_tensor_reference_ops_rest.py
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

CASE = os.path.join(GOLDEN_DIR, "anchor_tensor_reference_ops_rest")
UPDATE = os.environ.get("PYPTO_UPDATE_GOLDEN") == "1"
KERNELS = ["batched", "fills"]


def _program():
    return load_single_program(os.path.join(CASE, "program.py"))


@pytest.mark.parametrize("race_check", [False, True])
def test_golden_program_matches_numpy(race_check):
    rng = np.random.default_rng(11)
    a = rng.standard_normal((2, 4, 8)).astype(np.float32)
    b = rng.standard_normal((2, 8, 6)).astype(np.float32)
    b1 = rng.standard_normal((1, 8, 6)).astype(np.float32)
    c = rng.standard_normal((2, 4, 6)).astype(np.float32)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    p, q, r = (np.zeros((2, 4, 6), np.float32) for _ in range(3))
    f, z = np.zeros((4, 8), np.float32), np.zeros((4, 8), np.float32)
    s = np.full((4, 8), 5.0, np.float32)
    prog = pypto.compile(_program())
    try:
        prog(a, b, b1, c, x, p, q, r, f, z, s, race_check=race_check)
    finally:
        prog.close()
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    np.testing.assert_allclose(p, a64 @ b64, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(q, a64 @ b1.astype(np.float64), rtol=1e-5, atol=1e-5)     # b1's batch broadcasts
    np.testing.assert_allclose(r, c + a64 @ b64, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(f, 1.0 - x)
    np.testing.assert_array_equal(z, np.maximum(x, 0.0))         # pl.create_tile is zero-filled
    want = np.full((4, 8), 5.0, np.float32)
    want[2:4] = 2.0 * x[0:2]                                      # the tile is stored at [2, 0], nothing else
    np.testing.assert_array_equal(s, want)


def test_lowered_to_tile_ops():
    text = ir.python_print(codegen.run_pipeline(_program()))
    assert "pl.tensor." not in text, text
    # a rank-3 operand: a loop loads one batch matrix per iteration into an in-place [B*M, K] carry
    assert "in pl.range(0, 2, 1, init_values=(pl.tile.create([8, 6], dtype=pl.FP32),), inplace_carries=[0]):" in text
    assert "pl.load(c, [b_5, 0, 0], [1, 4, 6], drop_dims=[0])" in text, text
    assert "pl.assemble(batch_acc_4, batch_mat_4, [b_5 * 4, 0])" in text, text
    assert "pl.tile.batch_matmul_acc(pl.reshape(c_batch, [2, 4, 6]), pl.reshape(a_batch_2, [2, 4, 8]), " \
           "pl.reshape(b_batch_1, [2, 8, 6]))" in text, text
    assert "pl.batch_matmul(pl.reshape(a_batch_1, [2, 4, 8]), pl.reshape(b1_batch, [1, 8, 6]))" in text, text
    assert "pl.sub(pl.tile.full([4, 8], pl.FP32, 1.0), pl.load(x, [0, 0], [4, 8]))" in text, text
    assert "pl.maximum(pl.load(x, [0, 0], [4, 8]), pl.tile.full([4, 8], pl.FP32, 0.0))" in text, text
    assert "pl.store(pl.muls(pl.load(x, [0, 0], [2, 8]), 2.0), [2, 0], s)" in text, text


def test_prints_and_round_trips():
    prog = _program()
    text = ir.python_print(prog)
    assert "pl.tensor.batch_matmul(a, b)" in text and "pl.tensor.matmul_acc(c, a, b)" in text, text
    assert "pl.tensor.full([4, 8], 1.0, dtype=pl.FP32)" in text, text
    again = pl.parse_program(text)
    assert ir.structural_equal_explain(again, prog)[0], text
    lowered = codegen.run_pipeline(prog)
    again = pl.parse_program(ir.python_print(lowered))         # pl.tile.full prints as itself
    assert ir.python_print(again) == ir.python_print(lowered)


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


# ---- more batch shapes: rank 4, a 2-D operand against a batch, INT8, kernel-local operands ----------

BATCH = '''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a4: pl.Tensor[[2, 3, 4, 8], pl.FP32], b4: pl.Tensor[[2, 3, 8, 5], pl.FP32],
          x: pl.Tensor[[4, 8], pl.FP32], b: pl.Tensor[[3, 8, 5], pl.FP32],
          i8a: pl.Tensor[[2, 4, 8], pl.INT8], i8b: pl.Tensor[[2, 8, 4], pl.INT8],
          o4: pl.Out[pl.Tensor[[2, 3, 4, 5], pl.FP32]], ob: pl.Out[pl.Tensor[[3, 4, 5], pl.FP32]],
          oi: pl.Out[pl.Tensor[[2, 4, 4], pl.INT32]], oc: pl.Out[pl.Tensor[[3, 4, 5], pl.FP32]]
          ) -> tuple[pl.Tensor[[2, 3, 4, 5], pl.FP32], pl.Tensor[[3, 4, 5], pl.FP32], pl.Tensor[[2, 4, 4], pl.INT32],
                     pl.Tensor[[3, 4, 5], pl.FP32]]:
        o4 = pl.assemble(o4, pl.batch_matmul(a4, b4), [0, 0, 0, 0])
        ob = pl.assemble(ob, pl.batch_matmul(x, b), [0, 0, 0])
        oi = pl.assemble(oi, pl.batch_matmul(i8a, i8b), [0, 0, 0])
        first = pl.batch_matmul(x, b)
        oc = pl.assemble(oc, pl.matmul_acc(first, x, b), [0, 0, 0])
        return o4, ob, oi, oc

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a4: pl.Tensor[[2, 3, 4, 8], pl.FP32], b4: pl.Tensor[[2, 3, 8, 5], pl.FP32],
             x: pl.Tensor[[4, 8], pl.FP32], b: pl.Tensor[[3, 8, 5], pl.FP32],
             i8a: pl.Tensor[[2, 4, 8], pl.INT8], i8b: pl.Tensor[[2, 8, 4], pl.INT8],
             o4: pl.Out[pl.Tensor[[2, 3, 4, 5], pl.FP32]], ob: pl.Out[pl.Tensor[[3, 4, 5], pl.FP32]],
             oi: pl.Out[pl.Tensor[[2, 4, 4], pl.INT32]], oc: pl.Out[pl.Tensor[[3, 4, 5], pl.FP32]]
             ) -> tuple[pl.Tensor[[2, 3, 4, 5], pl.FP32], pl.Tensor[[3, 4, 5], pl.FP32], pl.Tensor[[2, 4, 4], pl.INT32],
                        pl.Tensor[[3, 4, 5], pl.FP32]]:
        o4, ob, oi, oc = self.k(a4, b4, x, b, i8a, i8b, o4, ob, oi, oc)
        return o4, ob, oi, oc
'''


def test_batch_shapes_match_numpy():
    rng = np.random.default_rng(5)
    a4 = rng.standard_normal((2, 3, 4, 8)).astype(np.float32)
    b4 = rng.standard_normal((2, 3, 8, 5)).astype(np.float32)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    b = rng.standard_normal((3, 8, 5)).astype(np.float32)
    i8a = rng.integers(-128, 128, (2, 4, 8)).astype(np.int8)
    i8b = rng.integers(-128, 128, (2, 8, 4)).astype(np.int8)
    o4, ob = np.zeros((2, 3, 4, 5), np.float32), np.zeros((3, 4, 5), np.float32)
    oi, oc = np.zeros((2, 4, 4), np.int32), np.zeros((3, 4, 5), np.float32)
    prog = pypto.compile(pl.parse_program(BATCH))
    try:
        prog(a4, b4, x, b, i8a, i8b, o4, ob, oi, oc, race_check=True)
    finally:
        prog.close()
    np.testing.assert_allclose(o4, a4.astype(np.float64) @ b4.astype(np.float64), rtol=1e-5, atol=1e-5)
    xb = x.astype(np.float64) @ b.astype(np.float64)              # the 2-D operand broadcasts over b's batch
    np.testing.assert_allclose(ob, xb, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(oi, i8a.astype(np.int32) @ i8b.astype(np.int32))   # INT8 accumulates in INT32
    np.testing.assert_allclose(oc, 2 * xb, rtol=1e-5, atol=1e-5)   # acc computed in the kernel (a tile)


LOOPS = '''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[2, 4, 8], pl.FP32], b: pl.Tensor[[2, 8, 6], pl.FP32],
          o: pl.Out[pl.Tensor[[2, 4, 6], pl.FP32]]) -> pl.Tensor[[2, 4, 6], pl.FP32]:
        acc = pl.batch_matmul(a, b)
        for i in pl.range(2):
            acc = pl.matmul_acc(acc, a, b)
        if pl.tensor.dim(a, 0) > 1:
            r = pl.matmul_acc(acc, a, b)
        else:
            r = acc
        o = pl.assemble(o, r, [0, 0, 0])
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[2, 4, 8], pl.FP32], b: pl.Tensor[[2, 8, 6], pl.FP32],
             o: pl.Out[pl.Tensor[[2, 4, 6], pl.FP32]]) -> pl.Tensor[[2, 4, 6], pl.FP32]:
        o = self.k(a, b, o)
        return o
'''


def test_batched_accumulate_in_a_loop_and_a_branch():
    """The load loops are placed before the statement that needs them, inside the loop body or branch."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((2, 4, 8)).astype(np.float32)
    b = rng.standard_normal((2, 8, 6)).astype(np.float32)
    o = np.zeros((2, 4, 6), np.float32)
    prog = pypto.compile(pl.parse_program(LOOPS))
    try:
        prog(a, b, o, race_check=True)
    finally:
        prog.close()
    np.testing.assert_allclose(o, 4 * (a.astype(np.float64) @ b.astype(np.float64)), rtol=1e-5, atol=1e-5)


# ---- misuse: a located error each ---------------------------------------------------------------

MISUSE = '''
import pypto.language as pl
D = pl.dynamic("D")


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[2, 4, 8], pl.FP32], b: pl.Tensor[[2, 8, 6], pl.FP32], c: pl.Tensor[[2, 4, 6], pl.FP32],
          x: pl.Tensor[[4, 8], pl.FP32], y: pl.Tensor[[8, 6], pl.FP32], b3: pl.Tensor[[3, 8, 6], pl.FP32],
          bh: pl.Tensor[[2, 8, 6], pl.FP16], ci: pl.Tensor[[2, 4, 6], pl.INT32], v: pl.Tensor[[8], pl.FP32],
          ad: pl.Tensor[[D, 4, 8], pl.FP32], bd: pl.Tensor[[D, 8, 6], pl.FP32], big: pl.Tensor[[65, 4, 8], pl.FP32],
          a5: pl.Tensor[[1, 1, 1, 4, 8], pl.FP32], xi: pl.Tensor[[4, 8], pl.INT32],
          o: pl.Out[pl.Tensor[[2, 4, 6], pl.FP32]], o2: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[2, 4, 6], pl.FP32]:
        {stmt}
        return o
'''
LINE = "<string>:15:"


@pytest.mark.parametrize("stmt, message, help", [
    # pl.batch_matmul / pl.matmul_acc of rank > 2 on tensors
    ("o = pl.assemble(o, pl.batch_matmul(a, v), [0, 0, 0])",
     "tensor.batch_matmul: operands must have rank 2 to 4, got [2, 4, 8] and [8]", None),
    ("o = pl.assemble(o, pl.batch_matmul(a5, y), [0, 0, 0])", "tensor.batch_matmul: operands must have rank 2 to 4",
     None),
    ("o = pl.assemble(o, pl.batch_matmul(a, bh), [0, 0, 0])", "tensor.batch_matmul: dtype mismatch: lhs is FP32, rhs "
     "is FP16", "pl.cast(x, dtype)"),
    ("o = pl.assemble(o, pl.batch_matmul(a, b3), [0, 0, 0])", "tensor.batch_matmul: batch dims [2] and [3] do not "
     "broadcast", "1 on one of them (NumPy broadcasting)"),
    ("o = pl.assemble(o, pl.batch_matmul(a, c), [0, 0, 0])", "tensor.batch_matmul: inner dimensions differ", None),
    ("o = pl.assemble(o, pl.batch_matmul(a, pl.load(y, [0, 0], [8, 6])), [0, 0, 0])",
     "pl.batch_matmul cannot mix Tensor and Tile arguments", None),
    ("o = pl.assemble(o, pl.matmul_acc(ci, a, b), [0, 0, 0])", "tensor.matmul_acc: acc must be FP32, got INT32", None),
    ("o = pl.assemble(o, pl.matmul_acc(x, a, b), [0, 0, 0])", "tensor.matmul_acc: acc shape [4, 8] does not match the "
     "product's shape [2, 4, 6]", None),
    ("o = pl.assemble(o, pl.matmul_acc(c, a, b3), [0, 0, 0])", "tensor.matmul_acc: batch dims [2] and [3]", None),
    # pl.full: the tensor fill
    ("o2 = pl.store(pl.full([4, 8], pl.FP32, 1.0), [0, 0], o2)",
     "pl.full makes a tensor (as in the reference DSL), but tile.store needs a tile here",
     "on tiles write pl.tile.full(shape, dtype, value)"),
    ("o2 = pl.store(pl.add(pl.load(x, [0, 0], [4, 8]), pl.full([4, 8], pl.FP32, 1.0)), [0, 0], o2)",
     "pl.full makes a tensor (as in the reference DSL), but pl.add needs a tile here", "pl.tile.full"),
    ("o2 = pl.assemble(o2, pl.full([4, 8], pl.FP32, x), [0, 0])",
     "tensor.full: argument 'value' must be a numeric scalar, got Tensor[[4, 8], FP32]", None),
    ("o2 = pl.assemble(o2, pl.full([4, 8], pl.FP16, 1.5), [0, 0])",
     "tensor.assemble: source dtype FP16 differs from target dtype FP32", None),
    # pl.assemble of a tile into a tensor
    ("o2 = pl.assemble(o2, pl.load(xi, [0, 0], [4, 8]), [0, 0])",
     "tensor.assemble: source dtype INT32 differs from target dtype FP32", "pl.cast(tile, dtype)"),
    ("o2 = pl.assemble(o2, pl.tile.reshape(pl.load(x, [0, 0], [4, 8]), [1, 4, 8]), [0, 0])",
     "tensor.assemble: a tile of rank 3 [1, 4, 8] cannot be written into a tensor of rank 2 [4, 8]", None),
    ("o2 = pl.assemble(o2, pl.load(x, [0, 0], [4, 8]), [1, 0])",
     "tensor.assemble: the tile [4, 8] at offset 1 of dimension 0 does not fit in the tensor [4, 8]", None),
    # pl.create_tile
    ("t = pl.create_tile([4, D], pl.FP32)", "tile.create: shape entries must be positive integer constants", None),
    ("o2 = pl.assemble(o2, pl.add(pl.create_tile([4, 4], pl.FP32), x), [0, 0])",
     "requires compatible shapes, but got [4, 4] and [4, 8]", None),
])
def test_misuse_is_located(stmt, message, help):
    with pytest.raises(PyptoError) as e:
        pl.parse_program(MISUSE.format(stmt=stmt))
    text = str(e.value)
    assert message in text, text
    assert LINE in text, text
    if help:
        assert help in text, text


def test_full_as_a_loop_carried_tile_accumulator_is_located():
    stmt = ("acc = pl.full([4, 6], pl.FP32, 0.0)\n        for i in pl.range(2):\n"
            "            acc = pl.matmul_acc(acc, pl.load(x, [0, 0], [4, 8]), pl.load(y, [0, 0], [8, 6]))")
    with pytest.raises(PyptoError) as e:
        pl.parse_program(MISUSE.format(stmt=stmt))
    text = str(e.value)
    assert "pl.full makes a tensor (as in the reference DSL), but pl.matmul_acc needs a tile here" in text, text
    assert "<string>:17:33" in text and "pl.tile.full(shape, dtype, value)" in text, text


@pytest.mark.parametrize("stmt, message", [
    ("o = pl.assemble(o, pl.batch_matmul(ad, bd), [0, 0, 0])",
     "pl.batch_matmul inside a kernel needs operands of static shape, got Tensor[[D, 4, 8], FP32]"),
])
def test_batched_operand_of_dynamic_shape_is_located(stmt, message):
    prog = pl.parse_program(MISUSE.format(stmt=stmt))
    with pytest.raises(PyptoError) as e:
        codegen.run_pipeline(prog)
    text = str(e.value)
    assert message in text and LINE in text, text


ORCH = '''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4, 8], pl.FP32], o: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        {stmt}
        return o
'''


@pytest.mark.parametrize("stmt, message, help", [
    ("x = pl.full([4, 8], pl.FP32, 1.0)", "tensor.full computes on tensor data",
     "wrap it in `with pl.at(level=pl.Level.CORE_GROUP):`"),
    ("x = pl.batch_matmul(a, a)", "tensor.batch_matmul computes on tensor data", "pl.Level.CORE_GROUP"),
    ("o = pl.assemble(o, pl.create_tile([4, 8], pl.FP32), [0, 0])",
     "pl.create_tile is a tile operation, which only a kernel can run", "pl.Level.CORE_GROUP"),
])
def test_orchestration_refuses(stmt, message, help):
    with pytest.raises(PyptoError) as e:
        pl.parse_program(ORCH.format(stmt=stmt))
    text = str(e.value)
    assert message in text and "<string>:9:" in text and help in text, text


def test_tile_forms_stay_tile_ops():
    """pl.batch_matmul and pl.create_tile on tiles are the tile ops; pl.tile.full is the tile fill."""
    prog = pl.parse_program(MISUSE.format(stmt="t = pl.batch_matmul(pl.load(x, [0, 0], [4, 8]), pl.load(y, [0, 0], "
                                                "[8, 6]))\n        u = pl.add(pl.create_tile([4, 8], pl.FP32), "
                                                "pl.tile.full([4, 8], pl.FP32, 1.0))"))
    text = ir.python_print(prog)
    assert "pl.batch_matmul(pl.load(x, [0, 0], [4, 8]), pl.load(y, [0, 0], [8, 6]))" in text, text
    assert "pl.add(pl.tile.create([4, 8], dtype=pl.FP32), pl.tile.full([4, 8], pl.FP32, 1.0))" in text, text


NAMED_TILE = '''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[4, 8], pl.FP32], o: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        t = pl.create_tile([4, 8], pl.FP32)
        pl.tile.write(t, [1, 2], 3.5)
        o = pl.assemble(o, t, [0, 0])
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4, 8], pl.FP32], o: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        o = self.k(x, o)
        return o
'''


def test_named_create_tile_keeps_its_writes_when_assembled():
    """A name bound to pl.create_tile is the tile itself (written in place): assembled into a tensor it is
    stored with the write, not replaced by a fresh zero fill."""
    o = np.full((4, 8), 9.0, np.float32)
    prog = pypto.compile(pl.parse_program(NAMED_TILE))
    try:
        prog(np.zeros((4, 8), np.float32), o, race_check=True)
    finally:
        prog.close()
    want = np.zeros((4, 8), np.float32)
    want[1, 2] = 3.5
    np.testing.assert_array_equal(o, want)


def test_named_create_tile_next_to_tensors_is_located():
    stmt = "z = pl.create_tile([4, 8], pl.FP32)\n        o2 = pl.assemble(o2, pl.add(x, z), [0, 0])"
    with pytest.raises(PyptoError) as e:
        pl.parse_program(MISUSE.format(stmt=stmt))
    text = str(e.value)
    assert "pl.add cannot mix Tensor and Tile arguments: 'z' is a tile (pl.create_tile)" in text, text
    assert "<string>:16:40" in text and "write pl.create_tile(...) inline" in text, text
