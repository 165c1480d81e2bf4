"""StampReturnedParams: every function with a return gets Function.returned_params, for each
return value the index of the parameter it writes back (-1: none), printed as
``@pl.function(..., returned_params=[2])`` (DSL Before / Expected)."""

import pypto.language as pl
from pypto import ir
from pypto.ir import passes

from pass_test_util import assert_pass


def test_a_kernel_returning_its_out_parameters_in_any_order():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
              c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> tuple[pl.Tensor[[16, 16], pl.FP32],
                                                               pl.Tensor[[16, 16], pl.FP32]]:
            b2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], b)
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c, b

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore, returned_params=[2, 1])
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
              c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> tuple[pl.Tensor[[16, 16], pl.FP32],
                                                               pl.Tensor[[16, 16], pl.FP32]]:
            b2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], b)
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c, b

    after = assert_pass(passes.StampReturnedParams(), Before, Expected)
    assert list(after.functions[0].returned_params) == [2, 1]
    assert passes.verify_property(passes.IRProperty.ReturnedParamsStamped, after) == []
    assert passes.verify_property(passes.IRProperty.ReturnedParamsStamped, Before) != []


def test_a_scalar_return_names_no_parameter_and_a_function_without_return_gets_nothing():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INT64]) -> pl.Scalar[pl.INT64]:
            m = n + 1
            return m

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32]):
            x = self.k(a, 3)

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore, returned_params=[-1])
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INT64]) -> pl.Scalar[pl.INT64]:
            m = n + 1
            return m

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32]):
            x = self.k(a, 3)

    assert_pass(passes.StampReturnedParams(), Before, Expected)


def test_an_orchestration_return_that_is_no_parameter_names_its_kth_written_parameter():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INT64],
                 o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Scalar[pl.INT64]:
            m = n + 1
            return m

    @pl.program
    class Expected:
        # The HOST runtime binds a chip-level function's k-th result to its k-th Out argument.
        @pl.function(type=pl.FunctionType.Orchestration, returned_params=[2])
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INT64],
                 o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Scalar[pl.INT64]:
            m = n + 1
            return m

    assert_pass(passes.StampReturnedParams(), Before, Expected)


def test_returned_params_print_parse_and_compare():
    @pl.program
    class Prog:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

    after = passes.StampReturnedParams()(Prog)
    text = ir.python_print(after)
    assert "returned_params=[1]" in text
    back = pl.parse_program(text)
    assert ir.structural_equal(after, back)
    assert ir.structural_hash(after) == ir.structural_hash(back)
    assert not ir.structural_equal(after, Prog)
