"""VerifyDestinationReads: a program that reads no tile after a destination-passing op wrote into
it passes unchanged and has DestinationReadsChecked; one that does is refused, located at the read
(DSL Before / Expected; the end-to-end cases are in test_destination_reads.py)."""
import pytest

import pypto.language as pl
from pypto.errors import PyptoError
from pypto.ir import passes

from pass_test_util import assert_pass


def test_a_rebound_accumulator_passes_unchanged():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            l = pl.load(a, [0, 0], [16, 16], target_memory=pl.MemorySpace.Left)
            r = pl.load(a, [0, 0], [16, 16], target_memory=pl.MemorySpace.Right)
            c = pl.matmul(l, r)
            c = pl.matmul_acc(c, l, r)
            out = pl.store(c, [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            out = self.k(a, out)
            return out

    after = assert_pass(passes.VerifyDestinationReads(), Before, Before)
    assert passes.verify_property(passes.IRProperty.DestinationReadsChecked, after) == []


def test_a_loop_carried_accumulator_passes_unchanged():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 64], pl.FP32], b: pl.Tensor[[64, 16], pl.FP32],
              out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            acc = pl.tile.full([16, 16], dtype=pl.FP32, value=0.0)
            for k in pl.range(4):
                l = pl.load(a, [0, k * 16], [16, 16], target_memory=pl.MemorySpace.Left)
                r = pl.load(b, [k * 16, 0], [16, 16], target_memory=pl.MemorySpace.Right)
                acc = pl.matmul_acc(acc, l, r)
            out = pl.store(acc, [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 64], pl.FP32], b: pl.Tensor[[64, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            out = self.k(a, b, out)
            return out

    after = assert_pass(passes.VerifyDestinationReads(), Before, Before)
    assert passes.verify_property(passes.IRProperty.DestinationReadsChecked, after) == []


def test_a_scatter_whose_destination_is_not_read_again_passes_unchanged():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[4, 8], pl.FP32], i: pl.Tensor[[4, 8], pl.INT32],
              out: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
            ta = pl.load(a, [0, 0], [4, 8])
            ti = pl.load(i, [0, 0], [4, 8])
            s = pl.tile.scatter(pl.tile.adds(ta, 0.0), ta, ti)    # a tile of its own: ta stays readable
            out = pl.store(s, [0, 0], out)
            out = pl.store(ta, [4, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[4, 8], pl.FP32], i: pl.Tensor[[4, 8], pl.INT32],
                 out: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
            out = self.k(a, i, out)
            return out

    after = assert_pass(passes.VerifyDestinationReads(), Before, Before)
    assert passes.verify_property(passes.IRProperty.DestinationReadsChecked, after) == []


def test_a_read_of_the_destination_is_refused():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[4, 8], pl.FP32], i: pl.Tensor[[4, 8], pl.INT32],
              out: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
            ta = pl.load(a, [0, 0], [4, 8])
            ti = pl.load(i, [0, 0], [4, 8])
            s = pl.tile.scatter(ta, ta, ti)
            out = pl.store(s, [0, 0], out)
            out = pl.store(ta, [4, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[4, 8], pl.FP32], i: pl.Tensor[[4, 8], pl.INT32],
                 out: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
            out = self.k(a, i, out)
            return out

    with pytest.raises(PyptoError, match="tile 'ta' is read after pl.tile.scatter"):
        passes.VerifyDestinationReads()(Before)
    assert passes.verify_property(passes.IRProperty.DestinationReadsChecked, Before) != []
