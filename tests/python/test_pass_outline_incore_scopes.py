"""OutlineIncoreScopes: pl.at(CORE_GROUP) / pl.spmd scopes become InCore functions and a call
or submit in their place; scope options move onto the submit (DSL Before / Expected)."""

import pypto.language as pl
from pypto import ir
from pypto.ir import passes

from pass_test_util import assert_equal, assert_pass


def test_at_scope_becomes_an_incore_function_and_a_call():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.at(level=pl.Level.CORE_GROUP):
                out = pl.store(pl.exp(pl.load(x, [0, 0], [16, 16])), [0, 0], out)
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            main_incore_out = self.main_incore(x, out)
            out_1 = main_incore_out
            return out_1

        @pl.function(type=pl.FunctionType.InCore)
        def main_incore(self, x: pl.Tensor[[16, 16], pl.FP32],
                        out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            out_1 = pl.store(pl.exp(pl.load(x, [0, 0], [16, 16])), [0, 0], out)
            return out

    assert_pass(passes.OutlineIncoreScopes(), Before, Expected)


def test_task_id_and_deps_move_onto_submits():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.at(level=pl.Level.CORE_GROUP) as tid:
                out = pl.store(pl.exp(pl.load(x, [0, 0], [16, 16])), [0, 0], out)
            with pl.at(level=pl.Level.CORE_GROUP, deps=[tid]) as tid2:
                out = pl.store(pl.add(pl.load(x, [0, 0], [16, 16]), pl.load(out, [0, 0], [16, 16])), [0, 0], out)
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            out_1, tid = pl.submit(self.main_incore, x, out)
            out_2, tid2 = pl.submit(self.main_incore_1, x, out_1, deps=[tid])
            return out_2

        @pl.function(type=pl.FunctionType.InCore)
        def main_incore(self, x: pl.Tensor[[16, 16], pl.FP32],
                        out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            out_1 = pl.store(pl.exp(pl.load(x, [0, 0], [16, 16])), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.InCore)
        def main_incore_1(self, x: pl.Tensor[[16, 16], pl.FP32],
                          out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            out_1 = pl.store(pl.add(pl.load(x, [0, 0], [16, 16]), pl.load(out, [0, 0], [16, 16])), [0, 0], out)
            return out

    after = passes.OutlineIncoreScopes()(Before, verify_well_formed=True)
    # The pass binds a submit's TaskId before its tensor results; the parser binds them in
    # tuple order. Both print as `out_1, tid = pl.submit(...)`: compare through the printer.
    assert_equal(pl.parse_program(ir.python_print(after)), Expected)
    # The scope's deps= left the scope: the ManualDepsOnSubmitOnly property now holds.
    assert passes.verify_property(passes.IRProperty.ManualDepsOnSubmitOnly, Before) != []
    assert passes.verify_property(passes.IRProperty.ManualDepsOnSubmitOnly, after) == []


def test_program_without_scopes_is_unchanged():
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
            out2 = self.k(x, out)
            return out

    assert_pass(passes.OutlineIncoreScopes(), Before, Before)


DYNAMIC_CREATE = '''
import pypto.language as pl
M = pl.dynamic("M")


@pl.program
class DynamicRows:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[M, 16], pl.FP32], row: pl.Scalar[pl.INDEX],
          y: pl.InOut[pl.Tensor[[M, 16], pl.FP32]]) -> pl.Tensor[[M, 16], pl.FP32]:
        y = pl.store(pl.exp(pl.load(x, [row, 0], [16, 16])), [row, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[M, 16], pl.FP32], y: pl.Out[pl.Tensor[[M, 16], pl.FP32]]) -> pl.Tensor[[M, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            tmp = pl.create_tensor([M, 16], dtype=pl.FP32)
        for i in pl.range(0, M, 16):
            tmp = self.k(x, i, tmp)
        for i in pl.range(0, M, 16):
            y = self.k(tmp, i, y)
        return y
'''


def test_a_dynamic_dim_the_scope_reads_is_a_parameter_of_the_outlined_function():
    # The body's tensor.create([M, 16]) reads M, which becomes the function's parameter M_1; the
    # fresh Var the body defines had kept the caller's type [M, 16] while its value was
    # [M_1, 16]: an internal error (fuzz seed 777005 mutant 1288, dynamic_dims.py).
    out = passes.OutlineIncoreScopes()(pl.parse_program(DYNAMIC_CREATE, "dyn.py"))
    assert passes.verify_well_formed(out) == []
    text = str(out)
    assert "def main_incore(self, M_1: pl.Scalar[pl.INDEX])" in text
    assert "tmp: pl.Tensor[[M_1, 16], pl.FP32] = pl.create_tensor([M_1, 16], dtype=pl.FP32)" in text
    assert "main_incore_out: pl.Tensor[[M, 16], pl.FP32] = self.main_incore(M)" in text


def test_a_dynamic_dim_the_scope_reads_runs_against_numpy():
    import numpy as np
    import pypto
    prog = pypto.compile(pl.parse_program(DYNAMIC_CREATE, "dyn.py"))
    for rows in (16, 48):
        x = np.random.default_rng(rows).uniform(-1, 1, (rows, 16)).astype(np.float32)
        y = np.zeros_like(x)
        prog(x, y)
        np.testing.assert_allclose(y, np.exp(np.exp(x)), rtol=1e-5)
