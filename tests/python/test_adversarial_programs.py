"""Hand-written adversarial DSL programs (the fuzz18 sweep): extents beyond what the runtime's
32-bit tensors can hold are located parse errors, not generated C++ that fails to compile."""
import re

import pytest

import pypto.language as pl
from pypto.errors import PyptoError

SRC = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def kern(self, a: pl.Tensor[[16], pl.FP32], c: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
        c = pl.store(pl.load(a, [0], [16]), [0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16], pl.FP32], c: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
        {stmt}
        c = self.kern(a, c)
        return c
"""


@pytest.mark.parametrize("stmt, message", [
    ("t = pl.tensor.create([1099511627776], dtype=pl.FP32)",
     "tensor.create: dimension 1099511627776 does not fit the runtime's 32-bit extent (limit 4294967295)"),
    ("t = pl.tensor.create([4294967296, 1], dtype=pl.FP32)", "tensor.create: dimension 4294967296 does not fit"),
    ("t = pl.tensor.reshape(pl.tensor.create([65536, 65536], dtype=pl.FP32), [4294967296])",
     "tensor.reshape: dimension 4294967296 does not fit"),
    ("t = pl.tensor.create([4294967295], dtype=pl.FP32)", None),
])
def test_tensor_extent_beyond_32_bits(stmt, message):
    src = SRC.format(stmt=stmt)
    if message is None:      # the limit itself is not an error
        pl.parse_program(src, "p.py")
        return
    with pytest.raises(PyptoError, match=re.escape(message)) as e:
        pl.parse_program(src, "p.py")
    assert e.value.line == 13, str(e.value)     # the statement, in the user's file


# A tensor whose byte count passes 2^63 - 1 (each extent within 32 bits): the runtime's byte
# count wrapped ([2^31, 2^31] FP32 is 2^64 bytes -> 0), so the tasks wrote through a zero-byte
# buffer and the process died with SIGSEGV. Literal extents: a located parse error.
@pytest.mark.parametrize("stmt, message", [
    ("t = pl.tensor.create([2147483648, 2147483648], dtype=pl.FP32)",
     "tensor.create: a [2147483648, 2147483648] FP32 tensor needs more than 2^63 bytes"),
    ("t = pl.tensor.create([4294967295, 4294967295, 4294967295], dtype=pl.INT8)",
     "tensor.create: a [4294967295, 4294967295, 4294967295] INT8 tensor needs more than 2^63 bytes"),
    ("t = pl.tensor.create([2147483648, 2147483648, 2], dtype=pl.BOOL)", "needs more than 2^63 bytes"),
    ("t = pl.tensor.create([2147483648, 2147483647, 2], dtype=pl.UINT8)", None),   # 2^63 - 2^32 bytes
])
def test_tensor_byte_count_beyond_int64(stmt, message):
    test_tensor_extent_beyond_32_bits(stmt, message)


RUNTIME_EXTENT = '''
import sys
import numpy as np
import pypto
import pypto.language as pl
src = """
import pypto.language as pl

@pl.program
class Huge:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), 1.0), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, n: pl.Scalar[pl.INDEX], a: pl.Tensor[[16, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        big = pl.tensor.create([n, n], dtype=pl.FP32)
        s = pl.tensor.slice(big, [16, 16], [0, 0])
        s = self.k(a, s)
        c = self.k(s, c)
        return c
"""
p = pypto.compile(pl.parse_program(src, "huge.py"))
a, c = np.ones((16, 16), np.float32), np.zeros((16, 16), np.float32)
p(16, a, c)
print("SMALL", c[0, 0])
try:
    p(int(sys.argv[1]), a, c)
    print("RAN")
except pypto.PyptoError as e:
    print("REFUSED", e)
p(16, a, c)
print("AFTER", c[0, 0])
'''


def test_run_time_extents_whose_byte_count_overflows_are_refused():
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-c", RUNTIME_EXTENT, str(2 ** 31)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]   # was -11 (SIGSEGV)
    assert "SMALL 3.0" in done.stdout and "AFTER 3.0" in done.stdout, done.stdout
    assert "REFUSED" in done.stdout, done.stdout
    assert "allocation of a tensor [2147483648, 2147483648] float32 needs more than 2^63 bytes" in done.stdout, done.stdout


KERNEL_SRC = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def kern(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.load(a, [0, 0], {shape}), [0, 0], c)
        return c
"""


# The extent of a tile shape that is 0 or negative is named with its axis ("tile dimension 0 must
# be positive" read as if axis 0 were at fault).
@pytest.mark.parametrize("shape, message", [
    ("[16, 0]", "tile.load: tile shape [16, 0] has extent 0 on axis 1; every extent must be positive"),
    ("[-4, 16]", "tile.load: tile shape [-4, 16] has extent -4 on axis 0; every extent must be positive"),
])
def test_tile_extent_not_positive_names_its_axis(shape, message):
    with pytest.raises(PyptoError, match=re.escape(message)) as e:
        pl.parse_program(KERNEL_SRC.format(shape=shape), "p.py")
    assert e.value.line == 8, str(e.value)
