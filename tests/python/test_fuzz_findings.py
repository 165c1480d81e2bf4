"""Regression tests for outcomes `make fuzz` (scripts/fuzz.py) found outside "ran" and
"located error", each reduced to its smallest program."""
import pytest

import pypto.language as pl
from pypto.errors import PyptoError


def test_kernel_returning_a_tensor_other_than_its_annotation_is_located():
    # seed 1, mutant 365: `-> pl.Tensor[[16, 17], ...]` on a kernel returning its [16, 16]
    # parameter reached a pass as an internal error (AssignStmt type mismatch).
    src = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def work(self, x: pl.Tensor[[16, 16], pl.FP32],
             out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 17], pl.FP32]:
        out = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32],
             out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        out = self.work(x, out)
        return out
'''
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(src, filename="p.py")
    e = ei.value
    assert e.line == 10 and "return value is pl.Tensor[[16, 16], pl.FP32] but 'work' declares" in e.message, str(e)
