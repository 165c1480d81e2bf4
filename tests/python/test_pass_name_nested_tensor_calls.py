"""NameNestedTensorCalls: in an Orchestration function, a tensor-valued call written as an
argument of another call is bound to a fresh variable right before its statement, innermost
first (DSL Before / Expected)."""

import pypto.language as pl
from pypto.ir import passes

from pass_test_util import assert_pass


def test_inline_create_tensor_in_an_assemble_is_named_first():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, o: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
            o2 = pl.assemble(o, pl.create_tensor([4, 8], dtype=pl.FP32), [4, 0])
            return o

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, o: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
            create = pl.create_tensor([4, 8], dtype=pl.FP32)
            o2 = pl.assemble(o, create, [4, 0])
            return o

    assert_pass(passes.NameNestedTensorCalls(), Before, Expected)


def test_nested_calls_are_named_innermost_first():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, o: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
            o2 = pl.assemble(o, pl.slice(pl.create_tensor([8, 8], dtype=pl.FP32), [4, 8], [0, 0]), [4, 0])
            return o

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, o: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
            create = pl.create_tensor([8, 8], dtype=pl.FP32)
            part = pl.slice(create, [4, 8], [0, 0])
            o2 = pl.assemble(o, part, [4, 0])
            return o

    assert_pass(passes.NameNestedTensorCalls(), Before, Expected)


def test_kernel_call_argument_is_named_and_kernel_bodies_are_left_alone():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            y2 = pl.store(pl.exp(pl.load(x, [0, 0], [16, 16])), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32],
                 y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            t2 = self.k(x, pl.create_tensor([16, 16], dtype=pl.FP32))
            y2 = self.k(t2, y)
            return y

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            y2 = pl.store(pl.exp(pl.load(x, [0, 0], [16, 16])), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32],
                 y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            create = pl.create_tensor([16, 16], dtype=pl.FP32)
            t2 = self.k(x, create)
            y2 = self.k(t2, y)
            return y

    # The kernel's nested tile calls (pl.exp(pl.load(...))) are kernel code: left as written.
    assert_pass(passes.NameNestedTensorCalls(), Before, Expected)
