"""UnrollLoops: a pl.unroll loop becomes one copy of its body per iteration value, the loop var
a constant, the carries threaded copy to copy and the loop results bound to the last values
(DSL Before / Expected)."""

import pypto.language as pl
from pypto.ir import passes

from pass_test_util import assert_pass


def test_carried_loop_becomes_one_call_per_iteration():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def row(self, x: pl.Tensor[[8, 16], pl.FP32], k: pl.Scalar[pl.INDEX],
                y: pl.Out[pl.Tensor[[4, 16], pl.FP32]]) -> pl.Tensor[[4, 16], pl.FP32]:
            y2 = pl.store(pl.load(x, [k * 4, 0], [4, 16]), [0, 0], y)
            return y2

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[8, 16], pl.FP32],
                 y: pl.Out[pl.Tensor[[4, 16], pl.FP32]]) -> pl.Tensor[[4, 16], pl.FP32]:
            for i in pl.unroll(2):
                y = self.row(x, i, y)
            return y

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def row(self, x: pl.Tensor[[8, 16], pl.FP32], k: pl.Scalar[pl.INDEX],
                y: pl.Out[pl.Tensor[[4, 16], pl.FP32]]) -> pl.Tensor[[4, 16], pl.FP32]:
            y2 = pl.store(pl.load(x, [k * 4, 0], [4, 16]), [0, 0], y)
            return y2

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[8, 16], pl.FP32],
                 y: pl.Out[pl.Tensor[[4, 16], pl.FP32]]) -> pl.Tensor[[4, 16], pl.FP32]:
            y_1: pl.Tensor[[4, 16], pl.FP32] = self.row(x, 0, y)
            y_2: pl.Tensor[[4, 16], pl.FP32] = self.row(x, 1, y_1)
            y_3: pl.Tensor[[4, 16], pl.FP32] = y_2
            return y_3

    assert_pass(passes.UnrollLoops(), Before, Expected)


def test_zero_trip_loop_leaves_only_the_result_binding():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def row(self, x: pl.Tensor[[8, 16], pl.FP32], k: pl.Scalar[pl.INDEX],
                y: pl.Out[pl.Tensor[[4, 16], pl.FP32]]) -> pl.Tensor[[4, 16], pl.FP32]:
            y2 = pl.store(pl.load(x, [k * 4, 0], [4, 16]), [0, 0], y)
            return y2

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[8, 16], pl.FP32],
                 y: pl.Out[pl.Tensor[[4, 16], pl.FP32]]) -> pl.Tensor[[4, 16], pl.FP32]:
            for i in pl.unroll(0, 0, 1):
                y = self.row(x, i, y)
            return y

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def row(self, x: pl.Tensor[[8, 16], pl.FP32], k: pl.Scalar[pl.INDEX],
                y: pl.Out[pl.Tensor[[4, 16], pl.FP32]]) -> pl.Tensor[[4, 16], pl.FP32]:
            y2 = pl.store(pl.load(x, [k * 4, 0], [4, 16]), [0, 0], y)
            return y2

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[8, 16], pl.FP32],
                 y: pl.Out[pl.Tensor[[4, 16], pl.FP32]]) -> pl.Tensor[[4, 16], pl.FP32]:
            y_3: pl.Tensor[[4, 16], pl.FP32] = y
            return y_3

    assert_pass(passes.UnrollLoops(), Before, Expected)


def test_negative_stepped_range_copies_in_iteration_order():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def row(self, x: pl.Tensor[[8, 16], pl.FP32], k: pl.Scalar[pl.INDEX],
                y: pl.Out[pl.Tensor[[4, 16], pl.FP32]]) -> pl.Tensor[[4, 16], pl.FP32]:
            y2 = pl.store(pl.load(x, [k * 4, 0], [4, 16]), [0, 0], y)
            return y2

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[8, 16], pl.FP32],
                 y: pl.Out[pl.Tensor[[4, 16], pl.FP32]]) -> pl.Tensor[[4, 16], pl.FP32]:
            for i in pl.unroll(1, -1, -1):
                y = self.row(x, i, y)
            return y

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def row(self, x: pl.Tensor[[8, 16], pl.FP32], k: pl.Scalar[pl.INDEX],
                y: pl.Out[pl.Tensor[[4, 16], pl.FP32]]) -> pl.Tensor[[4, 16], pl.FP32]:
            y2 = pl.store(pl.load(x, [k * 4, 0], [4, 16]), [0, 0], y)
            return y2

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[8, 16], pl.FP32],
                 y: pl.Out[pl.Tensor[[4, 16], pl.FP32]]) -> pl.Tensor[[4, 16], pl.FP32]:
            y_1: pl.Tensor[[4, 16], pl.FP32] = self.row(x, 1, y)
            y_2: pl.Tensor[[4, 16], pl.FP32] = self.row(x, 0, y_1)
            y_3: pl.Tensor[[4, 16], pl.FP32] = y_2
            return y_3

    assert_pass(passes.UnrollLoops(), Before, Expected)
