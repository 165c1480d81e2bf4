"""StampArrayBackings: each Orchestration function gets its typed ``Function.array_backings``
(spec anchor_features §13: arrays are updated in place, so every pl.Array SSA version lives in
the C array of an array.create result or of a phi if-result), printed as
``array_backings={"w_1": "w"}``; the L2 generator prints an array if-result as the pre-if array or
a phi array from it (DSL Before / Expected)."""

import pytest

import pypto.language as pl
from pypto import codegen, ir
from pypto.ir import passes

from pass_test_util import assert_pass


def test_an_if_result_both_branches_store_in_one_array_is_that_array_else_a_phi():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c_1: pl.Tensor[[16, 16], pl.FP32] = pl.store(pl.mul(pl.load(a, [0, 0], [16, 16]), s), [0, 0], c)
            return c_1

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            w = pl.array.create(4, pl.FP32)
            w_1 = pl.array.update_element(w, 0, 1.0)
            u = pl.array.create(4, pl.FP32)
            if n > 2:
                r = pl.yield_(w_1)
            else:
                r = pl.yield_(w)
            if n > 3:
                z = pl.yield_(r)
            else:
                z = pl.yield_(u)
            x = z[0]
            out_1: pl.Tensor[[16, 16], pl.FP32] = self.k(a, x, out)
            return out_1

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c_1: pl.Tensor[[16, 16], pl.FP32] = pl.store(pl.mul(pl.load(a, [0, 0], [16, 16]), s), [0, 0], c)
            return c_1

        @pl.function(type=pl.FunctionType.Orchestration, array_backings={"w_1": "w", "r": "w"})
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            w = pl.array.create(4, pl.FP32)
            w_1 = pl.array.update_element(w, 0, 1.0)
            u = pl.array.create(4, pl.FP32)
            if n > 2:
                r = pl.yield_(w_1)
            else:
                r = pl.yield_(w)
            if n > 3:
                z = pl.yield_(r)
            else:
                z = pl.yield_(u)
            x = z[0]
            out_1: pl.Tensor[[16, 16], pl.FP32] = self.k(a, x, out)
            return out_1

    after = assert_pass(passes.StampArrayBackings(), Before, Expected)
    main = after.get("main")
    # z's branches store in w and u: a phi array of its own, so it has no entry.
    assert [(e.version.name, e.backing.name) for e in main.array_backings] == [("w_1", "w"), ("r", "w")]
    assert passes.verify_property(passes.IRProperty.ArrayBackingsStamped, Before) != []
    assert passes.verify_property(passes.IRProperty.ArrayBackingsStamped, after) == []
    # printed, re-parsed, structurally equal
    assert ir.structural_equal(pl.parse_program(ir.python_print(after)), after)


def test_loop_carries_copies_and_updates_live_in_their_init_array_and_a_phi_is_its_own():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c_1: pl.Tensor[[16, 16], pl.FP32] = pl.store(pl.mul(pl.load(a, [0, 0], [16, 16]), s), [0, 0], c)
            return c_1

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            w = pl.array.create(4, pl.FP32)
            for i, (w_1,) in pl.range(0, n, 1, init_values=(w,)):
                cur = w_1[i % 4]
                w_2 = pl.array.update_element(w_1, i % 4, cur + 1.0)
                w_3 = pl.yield_(w_2)
            u = pl.array.create(4, pl.FP32)
            z = u
            if n > 3:
                z_1 = w_3
                z_2 = pl.yield_(z_1)
            else:
                z_2 = pl.yield_(z)
            y = z_2
            for j, (y_1,) in pl.range(0, 2, 1, init_values=(y,)):
                y_2 = pl.array.update_element(y_1, j, 2.0)
                y_3 = pl.yield_(y_2)
            x = y_3[0]
            out_1: pl.Tensor[[16, 16], pl.FP32] = self.k(a, x, out)
            return out_1

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c_1: pl.Tensor[[16, 16], pl.FP32] = pl.store(pl.mul(pl.load(a, [0, 0], [16, 16]), s), [0, 0], c)
            return c_1

        @pl.function(type=pl.FunctionType.Orchestration,
                     array_backings={"w_1": "w", "w_2": "w", "w_3": "w", "z": "u", "z_1": "w", "y": "z_2",
                                     "y_1": "z_2", "y_2": "z_2", "y_3": "z_2"})
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            w = pl.array.create(4, pl.FP32)
            for i, (w_1,) in pl.range(0, n, 1, init_values=(w,)):
                cur = w_1[i % 4]
                w_2 = pl.array.update_element(w_1, i % 4, cur + 1.0)
                w_3 = pl.yield_(w_2)
            u = pl.array.create(4, pl.FP32)
            z = u
            if n > 3:
                z_1 = w_3
                z_2 = pl.yield_(z_1)
            else:
                z_2 = pl.yield_(z)
            y = z_2
            for j, (y_1,) in pl.range(0, 2, 1, init_values=(y,)):
                y_2 = pl.array.update_element(y_1, j, 2.0)
                y_3 = pl.yield_(y_2)
            x = y_3[0]
            out_1: pl.Tensor[[16, 16], pl.FP32] = self.k(a, x, out)
            return out_1

    after = assert_pass(passes.StampArrayBackings(), Before, Expected)
    assert ir.structural_equal(pl.parse_program(ir.python_print(after)), after)
    # A stamp naming other storage is a different program (compared and hashed).
    assert not ir.structural_equal(after, Before)
    assert ir.structural_hash(after) != ir.structural_hash(Before)


def test_functions_without_arrays_get_no_stamp_and_the_generator_refuses_a_stale_one():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c_1: pl.Tensor[[16, 16], pl.FP32] = pl.store(pl.mul(pl.load(a, [0, 0], [16, 16]), s), [0, 0], c)
            return c_1

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            out_1: pl.Tensor[[16, 16], pl.FP32] = self.k(a, 2.0, out)
            return out_1

    after = assert_pass(passes.StampArrayBackings(), Before, Before)
    assert all(not f.array_backings for f in after.functions)

    @pl.program
    class Stale:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c = pl.store(pl.mul(pl.load(a, [0, 0], [16, 16]), s), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            w = pl.array.create(4, pl.FP32)
            u = pl.array.create(4, pl.FP32)
            z = u
            if n > 3:
                z = w
            x = z[0]
            out = self.k(a, x, out)
            return out

    prepared = codegen.run_pipeline(Stale)
    main = prepared.get("main")
    assert [e.backing.name for e in main.array_backings] == ["u", "w"]   # the phi z has none
    code = codegen.generate_orchestration(prepared, "main", run_passes=False).code
    assert "float z[4];" in code and "z[k] = w[k];" in code and "z[k] = u[k];" in code   # the phi array
    # The generator prints the stamp: one claiming the phi lives in u is refused as stale.
    names = [(e.version.name, e.backing.name) for e in main.array_backings]
    phi = next(rv for rv in _if_results(main))
    stale = main.with_array_backings_named(names + [(phi.name, "u")])
    with pytest.raises(Exception, match="ArrayBackingsStamped"):
        codegen.generate_orchestration(prepared.with_function(stale), "main", run_passes=False)


def test_array_backings_option_names_arrays_the_function_defines():
    src = '''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration, array_backings={"nope": "w"})
    def main(self, n: pl.Scalar[pl.INDEX]):
        w = pl.array.create(4, pl.FP32)
        return
'''
    with pytest.raises(Exception, match="array_backings=: 'nope' is not a pl.Array the function defines"):
        pl.parse_program(src)


def _if_results(fn):
    out = []

    def walk(stmts):
        for s in stmts:
            if isinstance(s, ir.IfStmt):
                out.extend(s.return_vars)
            for body in ("body", "then_body", "else_body"):
                if getattr(s, body, None) is not None:
                    walk(ir.flatten_stmts(getattr(s, body)))
    walk(ir.flatten_stmts(fn.body))
    return out
