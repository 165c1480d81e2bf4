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
                               "t": pl.task_id(fresh=True, read=True), "prev_2": pl.task_id(fresh=True, read=True),
                               "prev_3": pl.task_id(slots=4, read=True), "u": pl.task_id(fresh=True)})
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
                     task_ids={"t0": pl.task_id(fresh=True, read=True), "prev": pl.task_id(read=True),
                               "t": pl.task_id(fresh=True, read=True), "prev_1": pl.task_id()})
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
                     task_ids={"t": pl.task_id(fresh=True, read=True), "tids": pl.task_id(slots=2, read=True),
                               "tids_1": pl.task_id(slots=2, read=True), "first": pl.task_id(read=True),
                               "empty": pl.task_id(fresh=True, read=True), "joined": pl.task_id(read=True),
                               "u": pl.task_id(fresh=True)})
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
                     task_ids={"t": pl.task_id(fresh=True), "v": pl.task_id(fresh=True), "u": pl.task_id(fresh=True)})
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
