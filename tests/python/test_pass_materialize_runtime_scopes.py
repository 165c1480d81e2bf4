"""MaterializeRuntimeScopes: Orchestration bodies and their loop / branch bodies are wrapped
in AUTO runtime scopes (`with pl.scope():`); manual scopes are left alone (DSL Before / Expected)."""

import pypto.language as pl
from pypto.ir import passes

from pass_test_util import assert_pass


def test_straight_line_body_is_wrapped_before_the_return():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
            t = pl.create_tensor([16, 16], dtype=pl.FP32)
            return t

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)
        def main(self, n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.scope():
                t = pl.create_tensor([16, 16], dtype=pl.FP32)
            return t

    after = assert_pass(passes.MaterializeRuntimeScopes(), Before, Expected)
    assert passes.verify_property(passes.IRProperty.RuntimeScopesMaterialized, after) == []
    assert passes.verify_property(passes.IRProperty.RuntimeScopesMaterialized, Before) != []


def test_loop_and_branch_bodies_get_their_own_scope():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], d: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
                 n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
            for i, (acc,) in pl.range(n, init_values=(d,)):
                if i == 0:
                    acc2 = self.k(a, acc)
                    acc3 = pl.yield_(acc2)
                else:
                    acc3 = pl.yield_(acc)
                acc4 = pl.yield_(acc3)
            return acc4

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], d: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
                 n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.scope():
                for i, (acc,) in pl.range(n, init_values=(d,)):
                    with pl.scope():
                        if i == 0:
                            with pl.scope():
                                acc2 = self.k(a, acc)
                                acc3 = pl.yield_(acc2)
                        else:
                            with pl.scope():
                                acc3 = pl.yield_(acc)
                        acc4 = pl.yield_(acc3)
            return acc4

    assert_pass(passes.MaterializeRuntimeScopes(), Before, Expected)


def test_manual_scope_contents_and_kernels_are_untouched():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32],
                 d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.manual_scope():
                for i in pl.range(2):
                    d2, tid = pl.submit(self.k, a, d)
            return d

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32],
                 d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.scope():
                with pl.manual_scope():
                    for i in pl.range(2):
                        d2, tid = pl.submit(self.k, a, d)
            return d

    assert_pass(passes.MaterializeRuntimeScopes(), Before, Expected)


def test_wrapped_function_is_marked_auto_scope_false_and_rerun_is_a_no_op():
    """Spec anchor_features §4: the pass marks what it wrapped `auto_scope=False`, so its printed
    output re-parses with the same scopes and a second run changes nothing."""
    from pypto import ir
    from pass_test_util import assert_equal

    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
            t = pl.create_tensor([16, 16], dtype=pl.FP32)
            return t

    once = passes.MaterializeRuntimeScopes()(Before)
    text = ir.python_print(once)
    assert "@pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)" in text
    reparsed = pl.parse_program(text)
    assert_equal(reparsed, once, "re-parse")
    assert_equal(passes.MaterializeRuntimeScopes()(once), once, "second run")
    assert_equal(passes.MaterializeRuntimeScopes()(reparsed), once, "run on the re-parsed text")


def test_a_loop_body_already_in_the_lifted_form_is_not_wrapped_again():
    """The form the pass gives a body whose allocation escapes (the allocation, then the scope that
    ends with the yield), which AutoDeriveTaskDependencies also builds, stays as it is: wrapping
    it again would reclaim `t` with the iteration while the carry still names it."""
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, d: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
            for i, (acc,) in pl.range(n, init_values=(d,)):
                t = pl.create_tensor([16, 16], dtype=pl.FP32)
                with pl.scope():
                    t2 = self.k(acc, t)
                    acc2 = pl.yield_(t2)
            return acc2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)
        def main(self, d: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.scope():
                for i, (acc,) in pl.range(n, init_values=(d,)):
                    t = pl.create_tensor([16, 16], dtype=pl.FP32)
                    with pl.scope():
                        t2 = self.k(acc, t)
                        acc2 = pl.yield_(t2)
            return acc2

    assert_pass(passes.MaterializeRuntimeScopes(), Before, Expected)
