"""StampScopeExits: every runtime scope of an Orchestration function gets its typed
``RuntimeScopeStmt.exit_values`` — the tensor / number results of the loops and ifs at the top of
its body that code after the block reads — printed ``with pl.manual_scope(exit_values=["src_3"]):``
(DSL Before / Expected). The L2 generator declares an exit slot before the block for each."""

import pytest

import pypto.language as pl
from pypto import codegen, ir
from pypto.errors import PyptoError
from pypto.ir import passes

from pass_test_util import assert_pass


def test_loop_carries_read_after_a_manual_block_are_stamped_the_others_not():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)
        def main(self, a: pl.InOut[pl.Tensor[[16, 16], pl.FP32]], b: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.scope():
                steps = 1
                with pl.manual_scope():
                    for i, (src_1, dst_1, steps_1) in pl.range(0, n, 1, init_values=(a, b, steps),
                                                               carries=(pl.rebind, pl.rebind, pl.rebind)):
                        dst_2, t = pl.submit(self.k, src_1, dst_1)
                        steps_2 = steps_1 + 1
                        src_3, dst_3, steps_3 = pl.yield_(dst_2, src_1, steps_2)
                out_1 = self.k(src_3, out)
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)
        def main(self, a: pl.InOut[pl.Tensor[[16, 16], pl.FP32]], b: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.scope():
                steps = 1
                with pl.manual_scope(exit_values=["src_3"]):
                    for i, (src_1, dst_1, steps_1) in pl.range(0, n, 1, init_values=(a, b, steps),
                                                               carries=(pl.rebind, pl.rebind, pl.rebind)):
                        dst_2, t = pl.submit(self.k, src_1, dst_1)
                        steps_2 = steps_1 + 1
                        src_3, dst_3, steps_3 = pl.yield_(dst_2, src_1, steps_2)
                out_1 = self.k(src_3, out)
            return out

    after = assert_pass(passes.StampScopeExits(), Before, Expected)
    scope = ir.flatten_stmts(ir.flatten_stmts(after.get("main").body)[0].body)[1]
    assert [v.name for v in scope.exit_values] == ["src_3"]
    assert passes.verify_property(passes.IRProperty.ScopeExitsStamped, after) == []
    assert passes.verify_property(passes.IRProperty.ScopeExitsStamped, Before) != []


def test_if_results_read_after_an_auto_block_are_stamped_numbers_too():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.mul(pl.load(a, [0, 0], [16, 16]), s), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.scope():
                with pl.scope():
                    if n > 0:
                        res, f, unused = pl.yield_(a, 2.0, b)
                    else:
                        res, f, unused = pl.yield_(b, 0.5, a)
                out_1 = self.k(res, f, out)
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.mul(pl.load(a, [0, 0], [16, 16]), s), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.scope():
                with pl.scope(exit_values=["res", "f"]):
                    if n > 0:
                        res, f, unused = pl.yield_(a, 2.0, b)
                    else:
                        res, f, unused = pl.yield_(b, 0.5, a)
                out_1 = self.k(res, f, out)
            return out

    after = assert_pass(passes.StampScopeExits(), Before, Expected)
    # The generator reads the stamp: one exit slot per stamped value, none for `unused`.
    code = codegen.generate_orchestration(codegen.run_pipeline(Before), "main").code
    assert "std::optional<Tensor> res_exit;" in code and "float f_exit = 0;" in code and "unused_exit" not in code


def test_values_used_only_inside_their_block_and_alias_carries_get_no_stamp():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
                 n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.scope():
                with pl.manual_scope():
                    for i, (o_1, k_1) in pl.range(0, n, 1, init_values=(out, 0), carries=(pl.alias, pl.rebind)):
                        o_2 = self.k(a, o_1)
                        k_2 = k_1 + 1
                        o_3, k_3 = pl.yield_(o_2, k_2)
                    o_4 = self.k(a, o_3)
                o_5 = self.k(a, o_3)
            return out

    after = assert_pass(passes.StampScopeExits(), Before, Before)   # o_3 is an alias carry: no slot
    assert passes.verify_property(passes.IRProperty.ScopeExitsStamped, Before) == []
    assert passes.StampScopeExits()(after) is after or ir.structural_equal(passes.StampScopeExits()(after), after)


def test_exit_values_print_parse_back_and_a_stale_stamp_is_caught():
    src = ir.python_print(codegen.run_pipeline(pl.parse_program(open(_golden("manual_scope_loop_exit")).read(),
                                                                "program.py")))
    assert 'with pl.manual_scope(exit_values=["src_3", "steps_3"]):' in src
    reparsed = pl.parse_program(src, "printed.py")
    scopes = [s for s in _scopes(reparsed.get("main").body) if s.exit_values]
    assert [v.name for v in scopes[0].exit_values] == ["src_3", "steps_3"]
    assert passes.verify_property(passes.IRProperty.ScopeExitsStamped, reparsed) == []
    stale = pl.parse_program(src.replace('exit_values=["src_3", "steps_3"]', 'exit_values=["src_3"]'), "stale.py")
    problems = passes.verify_property(passes.IRProperty.ScopeExitsStamped, stale)
    assert problems and "exit_values" in problems[0]
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(src.replace('exit_values=["src_3", "steps_3"]', 'exit_values=["nope"]'), "bad.py")
    assert "exit_values=: 'nope' is not an assignment, loop or if result the scope body defines" in ei.value.message
    assert ei.value.file == "bad.py" and ei.value.line > 0


def _golden(name):
    import os
    from codegen_test_util import GOLDEN_DIR
    return os.path.join(GOLDEN_DIR, name, "program.py")


def _scopes(stmt):
    out = []
    for s in ir.flatten_stmts(stmt):
        if isinstance(s, ir.RuntimeScopeStmt):
            out.append(s)
            out += _scopes(s.body)
        elif isinstance(s, ir.ForStmt):
            out += _scopes(s.body)
        elif isinstance(s, ir.IfStmt):
            out += _scopes(s.then_body) + (_scopes(s.else_body) if s.else_body else [])
    return out


def test_a_nested_blocks_exit_values_are_stamped_on_the_outer_block_too():
    printed = ir.python_print(codegen.run_pipeline(pl.parse_program(open(_golden("nested_scope_exit")).read(),
                                                                    "program.py")))
    outer = printed.index('with pl.scope(exit_values=["src_3", "steps_3"]):')
    inner = printed.index('with pl.manual_scope(exit_values=["src_3", "steps_3"]):')
    assert outer < inner


def test_an_if_result_is_stamped_when_a_value_naming_its_tensor_is_read_after_the_block():
    """`res` itself is read only inside the block; `w` (tensor.write's result: the same C++ Tensor)
    and `r` (a kernel's write-back of it) are read after it, so `res` leaves (AliasRoots)."""
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)
        def main(self, a: pl.InOut[pl.Tensor[[16, 16], pl.FP32]], b: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.scope():
                with pl.scope():
                    if n > 0:
                        res = pl.yield_(a)
                    else:
                        res = pl.yield_(b)
                    w = pl.tensor.write(res, [0, 0], 1.0)
                    r = self.k(a, w)
                out_1 = self.k(r, out)
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)
        def main(self, a: pl.InOut[pl.Tensor[[16, 16], pl.FP32]], b: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.scope():
                with pl.scope(exit_values=["res"]):
                    if n > 0:
                        res = pl.yield_(a)
                    else:
                        res = pl.yield_(b)
                    w = pl.tensor.write(res, [0, 0], 1.0)
                    r = self.k(a, w)
                out_1 = self.k(r, out)
            return out

    assert_pass(passes.StampScopeExits(), Before, Expected)
    # After the block the slot's Tensor takes the name `r` prints inside it.
    code = codegen.generate_orchestration(codegen.run_pipeline(Before), "main").code
    after = code.split("Tensor res = *res_exit;", 1)
    assert len(after) == 2 and "params_t1.add_input(res);" in after[1], code
