"""StampAllocationBatches: each Orchestration function gets its typed
``Function.batched_creates`` (the tensor.create results the L2 generator allocates in one
alloc_tensors call at their block's entry: those whose shape only names values defined before
the block), printed as ``batched_creates=["c"]``; the generator prints the batches from it (DSL
Before / Expected)."""

import pypto.language as pl
from pypto import codegen, ir
from pypto.ir import passes

from pass_test_util import assert_pass


def test_a_create_whose_shape_reads_a_value_of_its_block_is_not_batched():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], counts: pl.Tensor[[4], pl.INDEX],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c = pl.create_tensor([16, 16], dtype=pl.FP32)
            m = pl.tensor.read(counts, [0])
            d = pl.create_tensor([m, 16], dtype=pl.FP32)
            c = self.k(a, c)
            out = self.k(c, out)
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration, batched_creates=["c"])
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], counts: pl.Tensor[[4], pl.INDEX],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c = pl.create_tensor([16, 16], dtype=pl.FP32)
            m = pl.tensor.read(counts, [0])
            d = pl.create_tensor([m, 16], dtype=pl.FP32)
            c = self.k(a, c)
            out = self.k(c, out)
            return out

    after = assert_pass(passes.StampAllocationBatches(), Before, Expected)
    assert [v.name for v in after.get("main").batched_creates] == ["c"]
    assert passes.verify_property(passes.IRProperty.AllocationBatchesStamped, Before) != []
    assert passes.verify_property(passes.IRProperty.AllocationBatchesStamped, after) == []


def test_loop_bodies_batch_creates_shaped_by_the_loop_variable_and_parameters():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            for i in pl.range(4):
                w = pl.create_tensor([i + 1, 16], dtype=pl.FP32)
                s = pl.create_tensor([n * 2, 16], dtype=pl.FP32)
                out = self.k(a, out)
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration, batched_creates=["w", "s"])
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            for i in pl.range(4):
                w = pl.create_tensor([i + 1, 16], dtype=pl.FP32)
                s = pl.create_tensor([n * 2, 16], dtype=pl.FP32)
                out = self.k(a, out)
            return out

    assert_pass(passes.StampAllocationBatches(), Before, Expected)


def test_the_stamp_prints_parses_back_and_drives_the_batches():
    @pl.program
    class Prog:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], counts: pl.Tensor[[4], pl.INDEX],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c = pl.create_tensor([16, 16], dtype=pl.FP32)
            e = pl.create_tensor([16, 16], dtype=pl.FP32)
            m = pl.tensor.read(counts, [0])
            d = pl.create_tensor([m, 16], dtype=pl.FP32)
            c = self.k(a, c)
            e = self.k(c, e)
            out = self.k(e, out)
            return out

    out = codegen.run_pipeline(Prog)
    text = ir.python_print(out)
    assert 'batched_creates=["c", "e"]' in text, text
    back = pl.parse_program(text)
    assert ir.structural_equal(out, back) and ir.structural_hash(out) == ir.structural_hash(back)
    assert not ir.structural_equal(out, pl.parse_program(text.replace('batched_creates=["c", "e"]', 'batched_creates=["c"]')))
    # c and e share one alloc_tensors call at the function's entry; d is allocated where it stands.
    code = codegen.generate_orchestration(out, "main", run_passes=False).code
    assert "alloc_tensors(c_ci, e_ci)" in code, code
    assert code.count("alloc_tensors(") == 2


def test_dynamic_dims_of_parameters_count_and_a_manual_scope_batches_before_it_opens():
    # M is read from a's shape at entry: ready everywhere. In the MANUAL scope, w (shape [M, 16])
    # is allocated before the scope opens; e's shape reads m, assigned inside it: not batched.
    M = pl.dynamic("M")

    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[M, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[M, 16], pl.FP32], counts: pl.Tensor[[4], pl.INDEX],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.manual_scope():
                w = pl.create_tensor([M, 16], dtype=pl.FP32)
                m = pl.tensor.read(counts, [0])
                e = pl.create_tensor([m, 16], dtype=pl.FP32)
                out2, t = pl.submit(self.k, a, out)
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[M, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration, batched_creates=["w"])
        def main(self, a: pl.Tensor[[M, 16], pl.FP32], counts: pl.Tensor[[4], pl.INDEX],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.manual_scope():
                w = pl.create_tensor([M, 16], dtype=pl.FP32)
                m = pl.tensor.read(counts, [0])
                e = pl.create_tensor([m, 16], dtype=pl.FP32)
                out2, t = pl.submit(self.k, a, out)
            return out

    after = assert_pass(passes.StampAllocationBatches(), Before, Expected)
    assert after.get("k").batched_creates == []   # kernels get no stamp
