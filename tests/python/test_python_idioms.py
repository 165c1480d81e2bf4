"""Python idioms a DSL program writes as in plain Python: a module constant holding a shape or an
offset list (`SHAPE = [16, 16]`, then `pl.Tensor[SHAPE, pl.FP32]`, `pl.load(x, ZERO, SHAPE)`), chained
comparisons (`0 < i < 3`), and docstrings in DSL functions. Before, the first was "malformed type
annotation ... the shape must be a list" or "'ZERO' is a Python list, not a value the DSL can use",
and the second "chained comparisons are not supported"."""
import importlib.util

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import ir

HEAD = '''
import pypto.language as pl
SHAPE = [16, 16]
SHP = (16, 16)
ZERO = [0, 0]
HALF = [8, 16]


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[SHAPE, pl.FP32], y: pl.Out[pl.Tensor[SHP, pl.FP32]]) -> pl.Tensor[SHAPE, pl.FP32]:
        """A kernel with a docstring."""
        KBODY
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[SHAPE, pl.FP32], y: pl.Out[pl.Tensor[SHAPE, pl.FP32]]) -> pl.Tensor[SHAPE, pl.FP32]:
        """An orchestration with a docstring."""
        OBODY
        return y
'''
STORE = "y = pl.store(t, ZERO, y)"


def _run(tmp_path, kbody, obody="y = self.k(x, y)"):
    path = tmp_path / "idioms.py"
    path.write_text(HEAD.replace("KBODY", kbody).replace("OBODY", obody))
    spec = importlib.util.spec_from_file_location("idioms", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    x = np.arange(256, dtype=np.float32).reshape(16, 16)
    y = np.zeros((16, 16), np.float32)
    stats = pypto.compile(mod.P)(x, y)
    return x, y, stats, mod.P


K = "\n        "


@pytest.mark.parametrize("kbody,obody,want", [
    ("t: pl.Tile[SHAPE, pl.FP32] = pl.load(x, ZERO, SHAPE)" + K + STORE, "y = self.k(x, y)", lambda x: x),
    ("t = pl.add(pl.load(x, ZERO, SHAPE), pl.tile.full(SHAPE, pl.FP32, 1.0))" + K + STORE, "y = self.k(x, y)",
     lambda x: x + 1),
    ("t = pl.tile.slice(pl.load(x, ZERO, SHAPE), HALF, ZERO)" + K + STORE, "y = self.k(x, y)",
     lambda x: np.vstack([x[:8], np.zeros((8, 16), np.float32)])),
    ("t = pl.reshape(pl.reshape(pl.load(x, ZERO, SHAPE), [256, 1]), SHAPE)" + K + STORE, "y = self.k(x, y)",
     lambda x: x),
    ("t = pl.load(x, ZERO, SHAPE)" + K + STORE,
     "w = pl.create_tensor(SHAPE, dtype=pl.FP32)" + K + "w = self.k(x, w)" + K + "h = pl.tensor.slice(w, HALF, ZERO)"
     + K + "y = self.k(w, y)", lambda x: x),
    ("t = pl.tile.write(pl.load(x, ZERO, SHAPE), ZERO, 5.0)" + K + STORE, "y = self.k(x, y)",
     lambda x: np.where(np.arange(256).reshape(16, 16) == 0, np.float32(5), x)),
    # a DSL value named like a module constant is that value, not the constant
    ("ZERO = pl.mul(pl.load(x, [0, 0], [16, 16]), 2.0)" + K + "y = pl.store(ZERO, [0, 0], y)", "y = self.k(x, y)",
     lambda x: x * 2),
])
def test_module_constant_lists_are_the_lists_they_hold(tmp_path, kbody, obody, want):
    x, y, _, _ = _run(tmp_path, kbody, obody)
    np.testing.assert_array_equal(y, want(x))


def test_annotation_of_a_constant_shape_types_the_parameter(tmp_path):
    _, _, _, prog = _run(tmp_path, "t = pl.load(x, ZERO, SHAPE)" + K + STORE)
    text = ir.python_print(prog)
    assert "x: pl.Tensor[[16, 16], pl.FP32]" in text and "pl.load(x, [0, 0], [16, 16])" in text, text


@pytest.mark.parametrize("cond,tasks", [("0 < i < 3", 2), ("0 <= i < 4 != i", 4), ("3 > i >= 1 == 1", 2),
                                        ("i < 2 < i", 0), ("1 <= i <= 1", 1)])
def test_chained_comparisons_are_and_of_their_pairs(tmp_path, cond, tasks):
    obody = "for i in pl.range(4):" + K + f"    if {cond}:" + K + "        y = self.k(x, y)"
    x, y, stats, _ = _run(tmp_path, "t = pl.load(x, ZERO, SHAPE)" + K + STORE, obody)
    assert stats.tasks == tasks
    np.testing.assert_array_equal(y, x if tasks else 0 * x)


def test_chained_comparison_in_a_kernel(tmp_path):
    kbody = ("t = pl.load(x, ZERO, SHAPE)" + K + "s = pl.tensor.read(x, [0, 1])" + K +
             "if 0.0 < s < 2.0:" + K + "    t = pl.add(t, 1.0)" + K + STORE)
    x, y, _, _ = _run(tmp_path, kbody)
    np.testing.assert_array_equal(y, x + 1)          # x[0, 1] = 1


def test_chained_comparison_prints_as_and_and_round_trips():
    text = HEAD.replace("KBODY", "t = pl.load(x, ZERO, SHAPE)" + K + STORE).replace(
        "OBODY", "for i in pl.range(4):" + K + "    if 0 < i < 3:" + K + "        y = self.k(x, y)")
    prog = pl.parse_program(text, "chain.py")
    printed = ir.python_print(prog)
    assert "0 < i and i < 3" in printed, printed
    assert ir.structural_equal_explain(pl.parse_program(printed), prog)[0]
