"""A kernel tensor parameter declared pl.Out that no store of its body writes is a located
compile error at the parameter (src/transforms/verify_kernel_outputs.cpp): the runtime hands the
kernel the caller's buffer, which kept whatever it held (zeros, or an omitted pl.Out's fresh
allocation) while the run reported success. A Group's kernels see the Group's whole signature,
so there each Group pl.Out parameter needs a write by one of its kernels. Every case below that
expects an error compiled and ran silently before the check."""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto.errors import PyptoError

HEAD = "import pypto.language as pl\n\n\n@pl.program\nclass P:\n"
ORCH = '''
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16], pl.FP32], c: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
        c = self.k(a, c)
        return c
'''
SIG = ("    @pl.function(type=pl.FunctionType.InCore)\n"
       "    def k(self, a: pl.Tensor[[16], pl.FP32], c: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:\n")
PARAM_LINE = 7   # the `def k` line of HEAD + SIG


def _compile(body):
    return pypto.compile(pl.parse_program(HEAD + SIG + body + ORCH, "k.py"))


@pytest.mark.parametrize("body", [
    # the store was forgotten
    "        t = pl.add(pl.load(a, [0], [16]), 1.0)\n        return c\n",
    # only read
    "        t = pl.load(c, [0], [16])\n        return c\n",
    # a tensor-level body rebinds the name: its result goes to a new output, not to c
    "        c = pl.add(a, a)\n        return c\n",
])
def test_out_parameter_never_stored_is_a_located_error(body):
    with pytest.raises(PyptoError) as ei:
        _compile(body)
    e = ei.value
    assert "kernel 'k' never stores to its pl.Out parameter 'c': the caller's tensor would keep whatever it held" \
        in e.message
    assert (e.file, e.line) == ("k.py", PARAM_LINE)
    assert "c: pl.Out[" in str(e) and "c = pl.store(tile, offsets, c)" in str(e)


@pytest.mark.parametrize("body, expect", [
    # stored in one branch only: a store the body may skip is the user's choice
    ("        t = pl.load(a, [0], [16])\n"
     "        if pl.tile.read(t, [0]) > 0.0:\n"
     "            c2 = pl.store(t, [0], c)\n"
     "            c3 = pl.yield_(c2)\n"
     "        else:\n"
     "            c3 = pl.yield_(c)\n"
     "        return c3\n", 1.0),
    # through a loop carry, in pieces
    ("        for i in pl.range(4):\n"
     "            c = pl.store(pl.load(a, [i * 4], [4]), [i * 4], c)\n"
     "        return c\n", 1.0),
])
def test_out_parameter_stored_somewhere_runs(body, expect):
    prog = _compile(body)
    c = np.full(16, 7.0, np.float32)
    prog(np.ones(16, np.float32), c)
    np.testing.assert_array_equal(c, np.full(16, expect, np.float32))


GROUP = '''import pypto.language as pl


@pl.program
class G:
    @pl.function(type=pl.FunctionType.AIC)
    def mm(self, a: pl.Tensor[[16, 16], pl.FP16], x: pl.Tensor[[16, 16], pl.FP32],
           c: pl.Out[pl.Tensor[[16, 16], pl.FP32]], d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        ta = pl.move(pl.load(a, [0, 0], [16, 16]), target_memory=pl.MemorySpace.Left)
        tb = pl.move(pl.load(a, [0, 0], [16, 16]), target_memory=pl.MemorySpace.Right)
        c = pl.store(pl.matmul(ta, tb), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.AIV)
    def act(self, a: pl.Tensor[[16, 16], pl.FP16], x: pl.Tensor[[16, 16], pl.FP32],
            c: pl.Out[pl.Tensor[[16, 16], pl.FP32]], d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.relu(pl.load(x, [0, 0], [16, 16]))
        STORE_D
        return d

    @pl.function(type=pl.FunctionType.Group)
    def pair(self, a: pl.Tensor[[16, 16], pl.FP16], x: pl.Tensor[[16, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]], d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> tuple[pl.Tensor[[16, 16], pl.FP32], pl.Tensor[[16, 16], pl.FP32]]:
        c = self.mm(a, x, c, d)
        d = self.act(a, x, c, d)
        return c, d

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP16], x: pl.Tensor[[16, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]], d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> tuple[pl.Tensor[[16, 16], pl.FP32], pl.Tensor[[16, 16], pl.FP32]]:
        c, d = self.pair(a, x, c, d)
        return c, d
'''


def test_group_kernels_each_writing_their_part_run():
    # mm writes c and act writes d: each kernel leaves the other's pl.Out alone (examples/group_mixed.py)
    prog = pypto.compile(pl.parse_program(GROUP.replace("STORE_D", "d = pl.store(t, [0, 0], d)"), "g.py"))
    a = np.eye(16, dtype=np.float16)
    x = np.arange(-128, 128, dtype=np.float32).reshape(16, 16)
    c = np.full((16, 16), 7.0, np.float32)
    d = np.full((16, 16), 7.0, np.float32)
    prog(a, x, c, d)
    np.testing.assert_array_equal(c, np.eye(16, dtype=np.float32))
    np.testing.assert_array_equal(d, np.maximum(x, 0))


def test_group_out_parameter_no_kernel_writes_is_a_located_error():
    src = GROUP.replace("STORE_D", "pass")
    with pytest.raises(PyptoError) as ei:
        pypto.compile(pl.parse_program(src, "g.py"))
    e = ei.value
    assert "Group 'pair' never stores to its pl.Out parameter 'd' (none of its kernels 'mm', 'act' writes it)" \
        in e.message
    lines = src.splitlines()
    assert (e.file, e.line) == ("g.py", next(i for i, l in enumerate(lines) if "def pair" in l) + 2)
