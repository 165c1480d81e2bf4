"""StampNonNegativeVars: every chip-level Orchestration function gets Function.non_negative_vars,
the scalars known >= 0 (its tensor parameters' dim symbols, then the loop variables of loops with a
literal start >= 0 and a literal step > 0), which the L2 generator reads to print `//` and `%` as
the plain C++ operators (DSL Before / Expected)."""

import pytest

import pypto.language as pl
from pypto import codegen, ir
from pypto.ir import passes

from pass_test_util import assert_pass


def test_dim_symbols_then_counting_loops():
    M = pl.dynamic("M")
    N = pl.dynamic("N")

    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[M, N], pl.FP32], y: pl.Tensor[[N, M], pl.FP32],
                 n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
            for i, (s,) in pl.range(0, 8, 2, init_values=(n,)):
                s2 = pl.yield_(s + i // 2)
            return s2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.Orchestration, non_negative_vars=["M", "N", "i"])
        def main(self, x: pl.Tensor[[M, N], pl.FP32], y: pl.Tensor[[N, M], pl.FP32],
                 n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
            for i, (s,) in pl.range(0, 8, 2, init_values=(n,)):
                s2 = pl.yield_(s + i // 2)
            return s2

    after = assert_pass(passes.StampNonNegativeVars(), Before, Expected)
    assert [v.name for v in after.get("main").non_negative_vars] == ["M", "N", "i"]
    assert passes.verify_property(passes.IRProperty.NonNegativeVarsStamped, after) == []
    assert passes.verify_property(passes.IRProperty.NonNegativeVarsStamped, Before) != []


def test_descending_negative_and_runtime_loops_are_not_stamped():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
            for i, (s,) in pl.range(8, 0, -1, init_values=(n,)):      # a negative step: not stamped
                s2 = pl.yield_(s + i)
            for j, (t,) in pl.range(-4, 4, 1, init_values=(s2,)):     # starts below 0
                t2 = pl.yield_(t + j)
            for k, (u,) in pl.range(n, 16, 1, init_values=(t2,)):     # start known only at run time
                u2 = pl.yield_(u + k)
            for m, (w,) in pl.range(1, 16, 3, init_values=(u2,)):     # stamped
                for q, (z,) in pl.range(0, m, 1, init_values=(w,)):   # nested, run-time stop: stamped
                    z2 = pl.yield_(z + q % 4)
                w2 = pl.yield_(z2)
            return w2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.Orchestration, non_negative_vars=["m", "q"])
        def main(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
            for i, (s,) in pl.range(8, 0, -1, init_values=(n,)):
                s2 = pl.yield_(s + i)
            for j, (t,) in pl.range(-4, 4, 1, init_values=(s2,)):
                t2 = pl.yield_(t + j)
            for k, (u,) in pl.range(n, 16, 1, init_values=(t2,)):
                u2 = pl.yield_(u + k)
            for m, (w,) in pl.range(1, 16, 3, init_values=(u2,)):
                for q, (z,) in pl.range(0, m, 1, init_values=(w,)):
                    z2 = pl.yield_(z + q % 4)
                w2 = pl.yield_(z2)
            return w2

    assert_pass(passes.StampNonNegativeVars(), Before, Expected)


def test_kernels_and_host_functions_are_not_stamped():
    M = pl.dynamic("M")

    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[M], pl.FP32], c: pl.Out[pl.Tensor[[M], pl.FP32]]) -> pl.Tensor[[M], pl.FP32]:
            t = pl.load(a, [0], [16])
            c2 = pl.store(t, [0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[M], pl.FP32], c: pl.Out[pl.Tensor[[M], pl.FP32]]) -> pl.Tensor[[M], pl.FP32]:
            for i in pl.range(0, 4, 1):
                c2 = self.k(a, c)
            return c

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[M], pl.FP32], c: pl.Out[pl.Tensor[[M], pl.FP32]]) -> pl.Tensor[[M], pl.FP32]:
            t = pl.load(a, [0], [16])
            c2 = pl.store(t, [0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration, non_negative_vars=["M", "i"])
        def main(self, a: pl.Tensor[[M], pl.FP32], c: pl.Out[pl.Tensor[[M], pl.FP32]]) -> pl.Tensor[[M], pl.FP32]:
            for i in pl.range(0, 4, 1):
                c2 = self.k(a, c)
            return c

    after = assert_pass(passes.StampNonNegativeVars(), Before, Expected)
    assert after.get("k").non_negative_vars == []


def test_printed_stamp_round_trips_and_unknown_names_are_refused():
    M = pl.dynamic("M")

    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[M, 16], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
            for i, (s,) in pl.range(0, 8, 1, init_values=(n,)):
                s2 = pl.yield_(s + i)
            return s2

    after = passes.StampNonNegativeVars()(Before)
    text = ir.python_print(after)
    assert 'non_negative_vars=["M", "i"]' in text
    again = pl.parse_program(text)
    assert ir.structural_equal(again, after)
    with pytest.raises(Exception, match="non_negative_vars=: 'nope' is no dynamic dimension"):
        pl.parse_program(text.replace('non_negative_vars=["M", "i"]', 'non_negative_vars=["M", "nope"]'))


def test_generator_prints_plain_division_only_over_stamped_operands():
    @pl.program
    class Prog:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
            for i, (s,) in pl.range(0, 8, 1, init_values=(n,)):
                s2 = pl.yield_(s + i // 2)
            for j, (t,) in pl.range(-8, 8, 1, init_values=(s2,)):
                t2 = pl.yield_(t + j // 2)
            return t2

    code = codegen.generate_orchestration(Prog, "main").code
    assert "i / 2)" in code and "pto2_floordiv<int64_t>(j, 2, " in code   # i: plain `/`; j: Python's floor
