"""A tensor-valued call written inline as an operand in an orchestration (NameNestedTensorCalls):
`pl.assemble(o, pl.create_tensor(...), ...)`, `pl.slice(pl.create_tensor(...), ...)`,
`pl.reshape(self.k(...), ...)`, a kernel call with an inline pl.create_tensor argument. Each
compiles and runs like the same program with the inner call bound to a name, checked with NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import pypto
import pypto.language as pl

HEAD = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, o: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
        o = pl.store(pl.tile.full([8, 8], pl.FP32, 2.0), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.InCore)
    def add(self, a: pl.Tensor[[8, 8], pl.FP32], b: pl.Tensor[[8, 8], pl.FP32],
            o: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
        o = pl.store(pl.add(pl.load(a, [0, 0], [8, 8]), pl.load(b, [0, 0], [8, 8])), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.InCore)
    def copy64(self, a: pl.Tensor[[64], pl.FP32], c: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        c = pl.store(pl.load(a, [0], [64]), [0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def copy48(self, a: pl.Tensor[[4, 8], pl.FP32], c: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        c = pl.store(pl.load(a, [0, 0], [4, 8]), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 8], pl.FP32], o: pl.Out[pl.Tensor[[8, 8], pl.FP32]],
             y: pl.Out[pl.Tensor[[64], pl.FP32]], z: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
'''


def _run(body: str):
    src = HEAD + "".join("        " + line + "\n" for line in body.strip().splitlines())
    compiled = pypto.compile(pl.parse_program(src))
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    o = np.full((8, 8), 7, np.float32)
    y = np.full(64, 7, np.float32)
    z = np.full((4, 8), 7, np.float32)
    compiled(x, o, y, z)
    return x, o, y, z


# (inline body, the same program with the inner call named)
CASES = {
    "assemble_of_create_tensor": (
        """
o = self.fill(o)
o = pl.assemble(o, pl.create_tensor([4, 8], dtype=pl.FP32, init_value=0.0), [4, 0])
return o
""", """
o = self.fill(o)
zeros = pl.create_tensor([4, 8], dtype=pl.FP32, init_value=0.0)
o = pl.assemble(o, zeros, [4, 0])
return o
"""),
    "kernel_call_with_create_tensor_argument": (
        """
o = self.add(x, self.fill(pl.create_tensor([8, 8], dtype=pl.FP32)), o)
return o
""", """
t = pl.create_tensor([8, 8], dtype=pl.FP32)
t = self.fill(t)
o = self.add(x, t, o)
return o
"""),
    "reshape_of_kernel_call": (
        """
y = self.copy64(pl.reshape(self.add(x, x, o), [64]), y)
return o
""", """
o = self.add(x, x, o)
r = pl.reshape(o, [64])
y = self.copy64(r, y)
return o
"""),
    "slice_of_create_tensor": (
        """
z = self.copy48(pl.slice(pl.create_tensor([8, 8], dtype=pl.FP32, init_value=3.0), [4, 8], [4, 0]), z)
return o
""", """
t = pl.create_tensor([8, 8], dtype=pl.FP32, init_value=3.0)
v = pl.slice(t, [4, 8], [4, 0])
z = self.copy48(v, z)
return o
"""),
}


def _expected(name, x):
    o = np.full((8, 8), 7, np.float32)
    y = np.full(64, 7, np.float32)
    z = np.full((4, 8), 7, np.float32)
    if name == "assemble_of_create_tensor":
        o[:4] = 2.0
        o[4:] = 0.0
    elif name == "kernel_call_with_create_tensor_argument":
        o = x + 2.0
    elif name == "reshape_of_kernel_call":
        o = x + x
        y = (x + x).reshape(64)
    else:
        z[:] = 3.0
    return o, y, z


@pytest.mark.parametrize("name", sorted(CASES))
def test_inline_call_operand_runs_like_the_named_program(name):
    inline, named = CASES[name]
    x, o, y, z = _run(inline)
    want_o, want_y, want_z = _expected(name, x)
    np.testing.assert_array_equal(o, want_o)
    np.testing.assert_array_equal(y, want_y)
    np.testing.assert_array_equal(z, want_z)
    _, o2, y2, z2 = _run(named)
    np.testing.assert_array_equal(o, o2)
    np.testing.assert_array_equal(y, y2)
    np.testing.assert_array_equal(z, z2)
