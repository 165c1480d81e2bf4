"""Spellings and decisions of anchor_features.md that a fidelity audit found refused or differing
(each case failed before): a program written for the reference compiler must run unchanged
(spec README decision 8).

  §1   pl.at(pl.Level.CORE_GROUP) with level positional, role=None; spec'd None defaults written out
  §4   @pl.function(level=None, attrs=None, strict_ssa=False / True)
  §11  a single integer index of a 1-D tensor (pl.tensor.read / write, pl.read / write) and tile;
       rank 0 prints `0, nullptr`, not a zero-size array
  §14  string and pl.UnknownType annotations are skipped; an annotated space retargets tile.full
"""
import re

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import codegen

KERNEL = '''
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[8], pl.FP32], y: pl.Out[pl.Tensor[[8], pl.FP32]]) -> pl.Tensor[[8], pl.FP32]:
        y = pl.store(pl.adds(pl.load(x, [0], [8]), 1.0), [0], y)
        return y
'''


def _run(decorator, body, x=None):
    src = ("import pypto.language as pl\n\n\n@pl.program\nclass P:" + KERNEL + "\n    " + decorator + "\n"
           "    def main(self, x: pl.Tensor[[8], pl.FP32], y: pl.InOut[pl.Tensor[[8], pl.FP32]]) -> "
           "pl.Tensor[[8], pl.FP32]:\n" + "".join("        " + ln + "\n" for ln in body.splitlines()) +
           "        return y\n")
    prog = pl.parse_program(src, "a.py")
    x = np.arange(8, dtype=np.float32) if x is None else x
    y = np.zeros(8, np.float32)
    pypto.compile(prog)(x, y)
    return prog, y


ORCH = "@pl.function(type=pl.FunctionType.Orchestration)"


@pytest.mark.parametrize("scope", [
    "with pl.at(pl.Level.CORE_GROUP):",
    "with pl.at(pl.Level.CORE_GROUP, None):",
    "with pl.at(level=pl.Level.CORE_GROUP, deps=None, optimizations=None, no_dep_args=None, dumps=None):",
    "with pl.spmd(1, deps=None, optimizations=None):",
])
def test_scope_spellings_of_the_spec_signatures(scope):
    _, y = _run(ORCH, scope + "\n    y = pl.assemble(y, pl.add(x, 1.0), [0])")
    np.testing.assert_array_equal(y, np.arange(8) + 1)


def test_pl_at_refuses_a_role_and_a_level_given_twice():
    with pytest.raises(pypto.PyptoError, match="role= on pl.at is not supported"):
        _run(ORCH, "with pl.at(pl.Level.CORE_GROUP, pl.Role.Orchestrator):\n    y = pl.add(x, 1.0)")
    with pytest.raises(pypto.PyptoError, match="pl.at got level twice"):
        _run(ORCH, "with pl.at(pl.Level.CORE_GROUP, level=pl.Level.CORE_GROUP):\n    y = pl.add(x, 1.0)")


@pytest.mark.parametrize("options", ["level=None", "attrs=None", "strict_ssa=False", "strict_ssa=True"])
def test_function_options_with_their_spec_defaults(options):
    _, y = _run(f"@pl.function(type=pl.FunctionType.Orchestration, {options})", "y = self.k(x, y)")
    np.testing.assert_array_equal(y, np.arange(8) + 1)
    with pytest.raises(pypto.PyptoError, match="strict_ssa= must be True or False"):
        _run("@pl.function(type=pl.FunctionType.Orchestration, strict_ssa=1)", "y = self.k(x, y)")


@pytest.mark.parametrize("body", [
    "v = pl.tensor.read(x, 2)\npl.tensor.write(y, 3, v)",
    "v = pl.read(x, 2)\npl.write(y, 3, v)",
])
def test_a_single_index_of_a_1d_tensor(body):
    _, y = _run(ORCH, body)
    assert y[3] == 2 and np.count_nonzero(y) == 1


def test_a_single_index_of_a_1d_tile_and_the_rank_2_error():
    src = '''import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[8], pl.FP32], y: pl.Out[pl.Tensor[[8], pl.FP32]]) -> pl.Tensor[[8], pl.FP32]:
        t = pl.load(x, [0], [8])
        pl.tile.write(t, 3, pl.tile.read(t, 1))
        y = pl.store(t, [0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8], pl.FP32], y: pl.Out[pl.Tensor[[8], pl.FP32]]) -> pl.Tensor[[8], pl.FP32]:
        y = self.k(x, y)
        return y
'''
    y = np.zeros(8, np.float32)
    pypto.compile(pl.parse_program(src, "t.py"))(np.arange(8, dtype=np.float32), y)
    np.testing.assert_array_equal(y, [0, 1, 2, 1, 4, 5, 6, 7])
    with pytest.raises(pypto.PyptoError, match="must be a list of integers"):
        pl.parse_program(src.replace("[[8], pl.FP32], y: pl.Out", "[[8], pl.FP32], y: pl.Out")
                         .replace("t = pl.load(x, [0], [8])", "t = pl.load(x, [0], [8])\n        u = pl.tile.create([2, 8], "
                                  "dtype=pl.FP32)\n        pl.tile.write(u, 1, 2.0)"), "t.py")


def test_rank_0_element_accesses_print_no_zero_size_array():
    src = '''import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, s: pl.InOut[pl.Tensor[[], pl.FP32]], f: pl.Scalar[pl.FP32]) -> pl.Tensor[[], pl.FP32]:
        v = pl.tensor.read(s, [])
        s = pl.tensor.write(s, [], v + f)
        return s
'''
    prog = pl.parse_program(src, "r.py")
    code = codegen.generate_orchestration(prog, "main").code
    assert "[0]" not in code, code
    assert "get_tensor_data<float>(ext_s, 0, nullptr)" in code and "set_tensor_data<float>(ext_s, 0, nullptr," in code
    s = np.full((), 1.5, np.float32)
    pypto.compile(prog)(s, 2.0)
    assert s == 3.5


@pytest.mark.parametrize("annotation", ['"Tile"', "pl.UnknownType"])
def test_unresolvable_annotations_are_skipped(annotation):
    _, y = _run(ORCH, f"t: {annotation} = self.k(x, y)\ny = t")
    np.testing.assert_array_equal(y, np.arange(8) + 1)


def test_an_annotated_memory_space_retargets_tile_full():
    src = '''import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.tile.full([16, 16], pl.FP32, 1.5)
        c = pl.store(pl.move(t, target_memory=pl.MemorySpace.Vec), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = self.k(y)
        return y
'''
    prog = pl.parse_program(src, "m.py")
    text = pypto.ir.python_print(prog)
    assert re.search(r"pl\.tile\.full\(\[16, 16\], pl\.FP32, 1\.5, target_memory=pl\.MemorySpace\.Mat\)", text), text
    assert pypto.ir.structural_equal(prog, pl.parse_program(text, "m2.py"))   # the printed form parses back
    y = np.zeros((16, 16), np.float32)
    pypto.compile(prog)(y)
    assert (y == 1.5).all()
