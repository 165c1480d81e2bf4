"""ResolveTaskIds: every TaskId of an Orchestration function is stamped (Function.task_ids,
printed as ``task_ids={"t": pl.task_id(slots=N, fresh=True, read=True)}``) with how generated
code names it, and compiler edges naming a TaskId out of scope are dropped (DSL Before /
Expected). The Before programs are written in the printed form the earlier passes produce
(runtime scopes, loop carries), which is what the pass requires."""

import pypto.language as pl
from pypto import ir
from pypto.ir import passes

from pass_test_util import assert_pass


def test_submit_ids_are_fresh_and_a_slot_carry_names_an_array_after_the_loop():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32],
                 d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.scope():
                with pl.manual_scope():
                    prev = pl.system.task_invalid()
                    for i, (d_1, prev_1) in pl.parallel(0, 4, 1, init_values=(d, prev),
                                                        carries=(pl.alias, pl.slots(4)), trip_count=4):
                        d_2, t = pl.submit(self.k, a, d_1, deps=[prev_1])
                        prev_2 = t
                        d_3, prev_3 = pl.yield_(d_2, prev_2)
                    d_4, u = pl.submit(self.k, a, d_3, deps=[prev_3])
            return d

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        # prev_1 (each iteration reads the value from before the loop) has the seed's facts;
        # the loop's result prev_3 names the 4-slot array; u is never read.
        @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False,
                     task_ids={"prev": pl.task_id(read=True), "prev_1": pl.task_id(read=True),
                               "t": pl.task_id(fresh=True, read=True, at_submit=True), "prev_2": pl.task_id(fresh=True, read=True),
                               "prev_3": pl.task_id(slots=4, read=True), "u": pl.task_id(fresh=True, at_submit=True)})
        def main(self, a: pl.Tensor[[16, 16], pl.FP32],
                 d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.scope():
                with pl.manual_scope():
                    prev = pl.system.task_invalid()
                    for i, (d_1, prev_1) in pl.parallel(0, 4, 1, init_values=(d, prev),
                                                        carries=(pl.alias, pl.slots(4)), trip_count=4):
                        d_2, t = pl.submit(self.k, a, d_1, deps=[prev_1])
                        prev_2 = t
                        d_3, prev_3 = pl.yield_(d_2, prev_2)
                    d_4, u = pl.submit(self.k, a, d_3, deps=[prev_3])
            return d

    after = assert_pass(passes.ResolveTaskIds(), Before, Expected)
    assert passes.verify_property(passes.IRProperty.TaskIdsResolved, after) == []
    assert passes.verify_property(passes.IRProperty.TaskIdsResolved, Before) != []


def test_a_scalar_carry_is_guarded_and_a_sequential_carry_reads_the_current_value():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32],
                 d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.scope():
                with pl.manual_scope():
                    d_1, t0 = pl.submit(self.k, a, d)
                    for i, (d_2, prev) in pl.range(0, 3, 1, init_values=(d_1, t0),
                                                   carries=(pl.alias, pl.rebind), trip_count=3):
                        d_3, t = pl.submit(self.k, a, d_2, deps=[prev])
                        d_4, prev_1 = pl.yield_(d_3, t)
            return d

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        # The rebound carry is a variable the yield re-assigns: it may hold any TaskId, so it
        # is not fresh even though its init is.
        @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False,
                     task_ids={"t0": pl.task_id(fresh=True, read=True, at_submit=True), "prev": pl.task_id(read=True),
                               "t": pl.task_id(fresh=True, read=True, at_submit=True), "prev_1": pl.task_id()})
        def main(self, a: pl.Tensor[[16, 16], pl.FP32],
                 d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.scope():
                with pl.manual_scope():
                    d_1, t0 = pl.submit(self.k, a, d)
                    for i, (d_2, prev) in pl.range(0, 3, 1, init_values=(d_1, t0),
                                                   carries=(pl.alias, pl.rebind), trip_count=3):
                        d_3, t = pl.submit(self.k, a, d_2, deps=[prev])
                        d_4, prev_1 = pl.yield_(d_3, t)
            return d

    assert_pass(passes.ResolveTaskIds(), Before, Expected)


def test_barriers_and_task_id_arrays():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32],
                 d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.scope():
                with pl.manual_scope():
                    d_1, t = pl.submit(self.k, a, d)
                    tids = pl.array.create(2, pl.TASK_ID)
                    tids_1 = pl.array.update_element(tids, 0, t)
                    first = pl.array.get_element(tids_1, 0)
                    empty = pl.system.task_dummy(deps=[])
                    joined = pl.system.task_dummy(deps=[tids_1, empty])
                    d_2, u = pl.submit(self.k, a, d_1, deps=[joined, first])
            return d

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        # The updated array shares the array's storage (2 slots); L2 always submits a barrier
        # without edges (fresh) and guards one with edges; an array element is any TaskId.
        @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False,
                     task_ids={"t": pl.task_id(fresh=True, read=True, at_submit=True), "tids": pl.task_id(slots=2, read=True),
                               "tids_1": pl.task_id(slots=2, read=True), "first": pl.task_id(read=True),
                               "empty": pl.task_id(fresh=True, read=True), "joined": pl.task_id(read=True),
                               "u": pl.task_id(fresh=True, at_submit=True)})
        def main(self, a: pl.Tensor[[16, 16], pl.FP32],
                 d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.scope():
                with pl.manual_scope():
                    d_1, t = pl.submit(self.k, a, d)
                    tids = pl.array.create(2, pl.TASK_ID)
                    tids_1 = pl.array.update_element(tids, 0, t)
                    first = pl.array.get_element(tids_1, 0)
                    empty = pl.system.task_dummy(deps=[])
                    joined = pl.system.task_dummy(deps=[tids_1, empty])
                    d_2, u = pl.submit(self.k, a, d_1, deps=[joined, first])
            return d

    assert_pass(passes.ResolveTaskIds(), Before, Expected)


def test_a_compiler_edge_to_a_task_id_out_of_scope_is_dropped():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32],
                 d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.scope():
                with pl.manual_scope():
                    d_1, t = pl.submit(self.k, a, d)
                    d_2, v = pl.submit(self.k, a, d_1, compiler_manual_dep_edges=[t])
                d_3, u = pl.submit(self.k, a, d_2, compiler_manual_dep_edges=[t, v])
            return d

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        # t and v live in the closed manual scope: the edges after it are dropped (the one
        # inside stays). Compiler edges do not count as reads.
        @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False,
                     task_ids={"t": pl.task_id(fresh=True, at_submit=True), "v": pl.task_id(fresh=True, at_submit=True), "u": pl.task_id(fresh=True, at_submit=True)})
        def main(self, a: pl.Tensor[[16, 16], pl.FP32],
                 d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.scope():
                with pl.manual_scope():
                    d_1, t = pl.submit(self.k, a, d)
                    d_2, v = pl.submit(self.k, a, d_1, compiler_manual_dep_edges=[t])
                d_3, u = pl.submit(self.k, a, d_2)
            return d

    assert_pass(passes.ResolveTaskIds(), Before, Expected)


def test_task_ids_print_and_parse_back():
    @pl.program
    class Prog:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32],
                 d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.manual_scope():
                prev = None
                for i in pl.parallel(4):
                    d, t = pl.submit(self.k, a, d, deps=[prev])
                    prev = t
                d, u = pl.submit(self.k, a, d, deps=[prev])
            return d

    from pypto import codegen
    out = codegen.run_pipeline(Prog)
    main = out.get("main") if hasattr(out, "get") else [f for f in out.functions if f.name == "main"][0]
    facts = {e.var.name: (e.slots, e.fresh, e.read) for e in main.task_ids}
    assert facts["t"] == (0, True, True)
    assert any(v == (4, False, True) for v in facts.values())   # the loop result: 4 slots
    text = ir.python_print(out)
    assert "task_ids={" in text and "pl.task_id(slots=4, read=True)" in text
    back = pl.parse_program(text)
    ok, why = ir.structural_equal_explain(out, back)
    assert ok, why
    # A stamp that differs is a structural difference.
    changed = pl.parse_program(text.replace("pl.task_id(slots=4, read=True)", "pl.task_id(slots=4)", 1))
    assert not ir.structural_equal(out, changed)
    assert ir.structural_hash(out) == ir.structural_hash(back)


def test_a_task_ids_entry_naming_no_task_id_is_a_located_error():
    import pytest
    from pypto.errors import PyptoError
    text = '''import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration, task_ids={"nope": pl.task_id(fresh=True)})
    def main(self, a: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
        return a
'''
    with pytest.raises(PyptoError, match="task_ids=: 'nope' is not a TaskId the function body defines"):
        pl.parse_program(text)


def test_task_ids_a_yield_carries_out_of_a_scope_are_stamped_on_the_scope():
    # RuntimeScopeStmt.carried_task_ids: the TaskIds the yield after a scope carries out of it
    # (a submit's TaskId, or the iter_arg of a pl.slots(N) loop in the scope), declared before
    # the PTO2_SCOPE by the generator; a scope whose yield carries nothing out is not stamped.
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32],
                 d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.scope():
                prev = pl.system.task_invalid()
                for n, (d_1, prev_1) in pl.range(0, 2, 1, init_values=(d, prev),
                                                 carries=(pl.alias, pl.rebind), trip_count=2):
                    with pl.scope():
                        with pl.manual_scope():
                            d_2, prev_2 = pl.submit(self.k, a, d_1, deps=[prev_1])
                        d_3, prev_3 = pl.yield_(d_2, prev_2)
                for m, (d_4, arr) in pl.range(0, 3, 1, init_values=(d_3, prev_3),
                                              carries=(pl.alias, pl.slots(4)), trip_count=3):
                    with pl.scope():
                        with pl.manual_scope():
                            for b, (d_5, arr_1) in pl.parallel(0, 4, 1, init_values=(d_4, arr),
                                                               carries=(pl.alias, pl.slots(4)), trip_count=4):
                                d_6, t = pl.submit(self.k, a, d_5, deps=[arr_1])
                                d_7, arr_2 = pl.yield_(d_6, t)
                        d_8, arr_3 = pl.yield_(d_7, arr_2)
            return d

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False,
                     task_ids={"prev": pl.task_id(read=True), "prev_1": pl.task_id(read=True),
                               "prev_2": pl.task_id(fresh=True, read=True, at_submit=True),
                               "prev_3": pl.task_id(read=True), "arr": pl.task_id(slots=4, read=True),
                               "arr_1": pl.task_id(slots=4, read=True), "t": pl.task_id(fresh=True, read=True, at_submit=True),
                               "arr_2": pl.task_id(slots=4, read=True), "arr_3": pl.task_id(slots=4)})
        def main(self, a: pl.Tensor[[16, 16], pl.FP32],
                 d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.scope():
                prev = pl.system.task_invalid()
                for n, (d_1, prev_1) in pl.range(0, 2, 1, init_values=(d, prev),
                                                 carries=(pl.alias, pl.rebind), trip_count=2):
                    with pl.scope():
                        with pl.manual_scope(carried_task_ids={"prev_2": 0}):
                            d_2, prev_2 = pl.submit(self.k, a, d_1, deps=[prev_1])
                        d_3, prev_3 = pl.yield_(d_2, prev_2)
                for m, (d_4, arr) in pl.range(0, 3, 1, init_values=(d_3, prev_3),
                                              carries=(pl.alias, pl.slots(4)), trip_count=3):
                    with pl.scope():
                        with pl.manual_scope(carried_task_ids={"arr_1": 4}):
                            for b, (d_5, arr_1) in pl.parallel(0, 4, 1, init_values=(d_4, arr),
                                                               carries=(pl.alias, pl.slots(4)), trip_count=4):
                                d_6, t = pl.submit(self.k, a, d_5, deps=[arr_1])
                                d_7, arr_2 = pl.yield_(d_6, t)
                        d_8, arr_3 = pl.yield_(d_7, arr_2)
            return d

    after = assert_pass(passes.ResolveTaskIds(), Before, Expected)
    assert passes.verify_property(passes.IRProperty.TaskIdsResolved, after) == []
    # Without the scope stamps (function stamps alone) the property does not hold.
    unstamped = Before.with_function(Before.get("main").with_task_ids_named(
        [(e.var.name, [e.slots, int(e.fresh), int(e.read), int(e.submit is not None)]) for e in after.get("main").task_ids]))
    problems = passes.verify_property(passes.IRProperty.TaskIdsResolved, unstamped)
    assert problems and all("carried_task_ids" in p for p in problems), problems


def test_carried_task_ids_print_parse_back_and_drive_the_declaration_before_the_scope():
    @pl.program
    class Prog:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32],
                 d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            prev = None
            for n in pl.range(2):
                with pl.manual_scope():
                    d, prev = pl.submit(self.k, a, d, deps=[prev])
            d, last = pl.submit(self.k, a, d, deps=[prev])
            return d

    from pypto import codegen
    out = codegen.run_pipeline(Prog)
    text = ir.python_print(out)
    assert 'with pl.manual_scope(carried_task_ids={"prev_2": 0}):' in text, text
    back = pl.parse_program(text)
    ok, why = ir.structural_equal_explain(out, back)
    assert ok, why
    assert ir.structural_hash(out) == ir.structural_hash(back)
    # Another slot count, or no stamp, is a structural difference.
    assert not ir.structural_equal(out, pl.parse_program(text.replace('{"prev_2": 0}', '{"prev_2": 2}')))
    assert not ir.structural_equal(out, pl.parse_program(text.replace('(carried_task_ids={"prev_2": 0})', "()")))
    # The generator declares exactly the stamped TaskId before the MANUAL block.
    code = codegen.generate_orchestration(out, "main", run_passes=False).code
    before_scope = code.split("PTO2_SCOPE(PTO2ScopeMode::MANUAL) {", 1)[0]
    assert before_scope.rstrip().endswith("PTO2TaskId prev_2 = PTO2TaskId::invalid();"), code


def test_stamp_entries_naming_no_such_task_id_are_located_errors():
    import pytest
    from pypto.errors import PyptoError
    head = '''import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32],
          c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
        return c

'''
    scope = head + '''    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32],
             d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.manual_scope(carried_task_ids={"nope": 0}):
            d, t = pl.submit(self.k, a, d)
        return d
'''
    with pytest.raises(PyptoError, match="carried_task_ids=: 'nope' is not a TaskId the scope body defines") as e:
        pl.parse_program(scope)
    assert (e.value.line, e.value.col) == (15, 47)   # the dict literal
    at_submit = head + '''    @pl.function(type=pl.FunctionType.Orchestration, task_ids={"t": pl.task_id(at_submit=True)})
    def main(self, a: pl.Tensor[[16, 16], pl.FP32],
             d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.system.task_invalid()
        d, u = pl.submit(self.k, a, d, deps=[t])
        return d
'''
    with pytest.raises(PyptoError, match="at_submit=True needs a TaskId unpacked from a pl.submit"):
        pl.parse_program(at_submit)


def test_at_submit_names_the_task_id_a_submit_is_unpacked_into():
    # TaskIdInfo.submit: the result tuple of the pl.submit whose TaskId the Var unpacks; HOST code
    # declares the handle at the submission from it (`TaskHandle t = submit_next_level(...)`).
    @pl.program
    class Prog:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32],
                 d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            d, t = pl.submit(self.k, a, d)
            u = t
            d, v = pl.submit(self.k, a, d, deps=[u])
            return d

    from pypto import codegen
    out = codegen.run_pipeline(Prog)
    entries = {e.var.name: e for e in out.get("main").task_ids}
    assert entries["t"].submit is not None and entries["v"].submit is not None
    assert entries["u"].submit is None                        # a copy is named where it is copied
    assert entries["t"].submit.type.elements[-1] == entries["t"].var.type
    text = ir.python_print(out)
    assert '"t": pl.task_id(fresh=True, read=True, at_submit=True)' in text, text
    back = pl.parse_program(text)
    assert ir.structural_equal(out, back)
    # Dropping the stamp is a structural difference (and a stale stamp for the property).
    stale = pl.parse_program(text.replace('"t": pl.task_id(fresh=True, read=True, at_submit=True)',
                                          '"t": pl.task_id(fresh=True, read=True)'))
    assert not ir.structural_equal(out, stale)
    assert passes.verify_property(passes.IRProperty.TaskIdsResolved, stale) != []
