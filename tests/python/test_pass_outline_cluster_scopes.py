"""OutlineClusterScopes: a pl.cluster() scope becomes a Group function (its AIC / AIV calls)
and one call in its place (DSL Before / Expected)."""

import pypto.language as pl
from pypto import ir
from pypto.ir import passes

from pass_test_util import assert_equal, assert_pass


def test_cluster_of_a_cube_and_a_vector_call_becomes_a_group():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.AIC)
        def cube(self, x: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            out2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.AIV)
        def vec(self, x: pl.Tensor[[16, 16], pl.FP32],
                out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            out2 = pl.store(pl.exp(pl.load(x, [0, 0], [16, 16])), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.cluster():
                out = self.cube(x, out)
                out = self.vec(x, out)
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.AIC)
        def cube(self, x: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            out2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.AIV)
        def vec(self, x: pl.Tensor[[16, 16], pl.FP32],
                out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            out2 = pl.store(pl.exp(pl.load(x, [0, 0], [16, 16])), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            main_cluster_out = self.main_cluster(x, out)
            out_1 = main_cluster_out
            return out_1

        @pl.function(type=pl.FunctionType.Group)
        def main_cluster(self, x: pl.Tensor[[16, 16], pl.FP32],
                         out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            out_1 = self.cube(x, out)
            out_2 = self.vec(x, out_1)
            return out

    assert_pass(passes.OutlineClusterScopes(), Before, Expected)


def test_spmd_inside_a_cluster_becomes_an_spmd_submit_of_the_group():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def work(self, x: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            out2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.cluster():
                with pl.spmd(2):
                    out = self.work(x, out)
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def work(self, x: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            out2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            out_1, _ = pl.spmd_submit(self.main_cluster, x, out, core_num=2)
            return out_1

        @pl.function(type=pl.FunctionType.Group)
        def main_cluster(self, x: pl.Tensor[[16, 16], pl.FP32],
                         out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            out_1 = self.work(x, out)
            return out

    after = passes.OutlineClusterScopes()(Before, verify_well_formed=True)
    # The pass does not bind the unused TaskId the parser binds to `_`; both print alike.
    assert_equal(pl.parse_program(ir.python_print(after)), Expected)
    # Outlining again finds no cluster: the result is a fixed point.
    assert_pass(passes.OutlineClusterScopes(), after, after)


def test_program_without_clusters_is_unchanged():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32],
              out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            out2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.at(level=pl.Level.CORE_GROUP):
                out2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], out)
            return out

    assert_pass(passes.OutlineClusterScopes(), Before, Before)
