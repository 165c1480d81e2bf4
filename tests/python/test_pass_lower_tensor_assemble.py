"""LowerTensorAssemble: a tensor.assemble whose source is a separate tensor becomes a copy task
(a synthesized InCore kernel) writing the target's view; an assemble whose source already is
that view is left alone (DSL Before / Expected)."""

import pypto.language as pl
from pypto.ir import passes

from pass_test_util import assert_pass


def test_separate_source_gets_a_copy_kernel_into_the_view():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            y2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
            part = pl.create_tensor([16, 16], dtype=pl.FP32)
            part2 = self.k(x, part)
            out2 = pl.tensor.assemble(out, part2, [16, 0])
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            y2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
            part = pl.create_tensor([16, 16], dtype=pl.FP32)
            part2 = self.k(x, part)
            out2_dst = pl.tensor.slice(out, [16, 16], [16, 0])
            out2_dst_1 = self.pypto_copy_fp32_16x16(part2, out2_dst)
            out2 = pl.tensor.assemble(out, out2_dst_1, [16, 0])
            return out

        @pl.function(type=pl.FunctionType.InCore)
        def pypto_copy_fp32_16x16(self, src: pl.Tensor[[16, 16], pl.FP32],
                                  dst: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            t = pl.load(src, [0, 0], [16, 16])
            dst_1 = pl.store(t, [0, 0], dst)
            return dst

    assert_pass(passes.LowerTensorAssemble(), Before, Expected)


def test_two_assembles_of_one_shape_share_one_copy_kernel():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[8, 8], pl.INT32], b: pl.Tensor[[8, 8], pl.INT32],
                 out: pl.Out[pl.Tensor[[16, 8], pl.INT32]]) -> pl.Tensor[[16, 8], pl.INT32]:
            o1 = pl.tensor.assemble(out, a, [0, 0])
            o2 = pl.tensor.assemble(o1, b, [8, 0])
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[8, 8], pl.INT32], b: pl.Tensor[[8, 8], pl.INT32],
                 out: pl.Out[pl.Tensor[[16, 8], pl.INT32]]) -> pl.Tensor[[16, 8], pl.INT32]:
            o1_dst = pl.tensor.slice(out, [8, 8], [0, 0])
            o1_dst_1 = self.pypto_copy_int32_8x8(a, o1_dst)
            o1 = pl.tensor.assemble(out, o1_dst_1, [0, 0])
            o2_dst = pl.tensor.slice(o1, [8, 8], [8, 0])
            o2_dst_1 = self.pypto_copy_int32_8x8(b, o2_dst)
            o2 = pl.tensor.assemble(o1, o2_dst_1, [8, 0])
            return out

        @pl.function(type=pl.FunctionType.InCore)
        def pypto_copy_int32_8x8(self, src: pl.Tensor[[8, 8], pl.INT32],
                                 dst: pl.Out[pl.Tensor[[8, 8], pl.INT32]]) -> pl.Tensor[[8, 8], pl.INT32]:
            t = pl.load(src, [0, 0], [8, 8])
            dst_1 = pl.store(t, [0, 0], dst)
            return dst

    assert_pass(passes.LowerTensorAssemble(), Before, Expected)


def test_source_already_the_targets_view_is_left_alone():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            y2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
            view = pl.tensor.slice(out, [16, 16], [16, 0])
            view2 = self.k(x, view)
            out2 = pl.tensor.assemble(out, view2, [16, 0])
            return out

    after = passes.LowerTensorAssemble()(Before)
    assert_pass(passes.LowerTensorAssemble(), Before, Before)
    assert [f.name for f in after.functions] == ["k", "main"]
