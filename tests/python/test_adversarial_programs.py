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
