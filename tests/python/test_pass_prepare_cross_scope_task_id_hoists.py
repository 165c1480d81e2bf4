"""PrepareCrossScopeTaskIdHoists (DSL Before / Expected): AutoDeriveTaskDependencies' task_ref
placeholders become TaskId carries declared at the lowest common scope of producer and
consumer, with the phase fence behind a pl.parallel(N >= 4) fan-in."""

import pytest

import pypto.language as pl
from pypto import ir
from pypto.ir import passes

from pass_test_util import assert_equal, assert_pass


@pl.program
class FanInBefore:
    """AutoDeriveTaskDependencies' output for a parallel fan-in followed by an accumulating loop."""

    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, a: pl.Tensor[[16, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def acc(self, a: pl.Tensor[[16, 16], pl.FP32],
            c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c2 = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(c, [0, 0], [16, 16])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 16], pl.FP32],
             out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.manual_scope():
            tmp = pl.create_tensor([64, 16], dtype=pl.FP32)
            for i in pl.parallel(4, trip_count=4):
                xi = pl.tensor.slice(x, [16, 16], [i * 16, 0])
                ti = pl.tensor.slice(tmp, [16, 16], [i * 16, 0])
                ti2, fill_tid0 = pl.submit(self.fill, xi, ti, arg_directions=[pl.In, pl.Out])
            for j, (o,) in pl.range(4, init_values=(out,), trip_count=4):
                tj = pl.tensor.slice(tmp, [16, 16], [j * 16, 0])
                fill_ref = pl.system.task_ref(task="fill_tid0")
                acc_ref = pl.system.task_ref(j, task="acc_tid1")
                o2, acc_tid1 = pl.submit(self.acc, tj, o, arg_directions=[pl.In, pl.InOut],
                                         compiler_manual_dep_edges=[fill_ref, acc_ref])
                o3 = pl.yield_(o2)
        return out


def test_parallel_fan_in_gets_an_array_carry_and_a_fence_and_the_chain_a_loop_carry():
    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def fill(self, a: pl.Tensor[[16, 16], pl.FP32],
                 c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.InCore)
        def acc(self, a: pl.Tensor[[16, 16], pl.FP32],
                c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(c, [0, 0], [16, 16])), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[64, 16], pl.FP32],
                 out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.manual_scope():
                tmp = pl.create_tensor([64, 16], dtype=pl.FP32)
                seed = pl.system.task_invalid()
                for i, (fill_carry,) in pl.parallel(4, init_values=(seed,), trip_count=4):
                    xi = pl.tensor.slice(x, [16, 16], [i * 16, 0])
                    ti = pl.tensor.slice(tmp, [16, 16], [i * 16, 0])
                    ti2, fill_tid = pl.submit(self.fill, xi, ti, arg_directions=[pl.In, pl.Out])
                    fill_last = pl.yield_(fill_tid)
                fence = pl.system.task_dummy(deps=[fill_last])   # phase fence: 4 ids -> 1
                seed2 = pl.system.task_invalid()
                for j, (o, acc_carry) in pl.range(4, init_values=(out, seed2), trip_count=4):
                    tj = pl.tensor.slice(tmp, [16, 16], [j * 16, 0])
                    o2, acc_tid = pl.submit(self.acc, tj, o, arg_directions=[pl.In, pl.InOut],
                                            compiler_manual_dep_edges=[fence, acc_carry])
                    o3, acc_last = pl.yield_(o2, acc_tid)
            return out

    after = assert_pass(passes.PrepareCrossScopeTaskIdHoists(), FanInBefore, Expected)
    assert "task_ref" not in ir.python_print(after)


def test_a_range_fan_in_carries_the_last_id_and_one_consumer_names_it_once():
    # A chain inside a pl.range(2) read twice after the loop: the carry holds the last id (the
    # chain orders the earlier ones), both placeholders resolve to it, deduplicated.
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def acc(self, a: pl.Tensor[[16, 16], pl.FP32],
                c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(c, [0, 0], [16, 16])), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
                 d: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.manual_scope():
                for i in pl.range(2, trip_count=2):
                    r0 = pl.system.task_ref(i, task="acc_tid0")
                    c2, acc_tid0 = pl.submit(self.acc, a, c, arg_directions=[pl.In, pl.InOut],
                                             compiler_manual_dep_edges=[r0])
                r1 = pl.system.task_ref(task="acc_tid0")
                r2 = pl.system.task_ref(task="acc_tid0")
                d2 = self.acc(c, d, arg_directions=[pl.In, pl.InOut], compiler_manual_dep_edges=[r1, r2])
            return d

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def acc(self, a: pl.Tensor[[16, 16], pl.FP32],
                c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(c, [0, 0], [16, 16])), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
                 d: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.manual_scope():
                seed = pl.system.task_invalid()
                for i, (acc_carry,) in pl.range(2, init_values=(seed,), trip_count=2):
                    c2, acc_tid0 = pl.submit(self.acc, a, c, arg_directions=[pl.In, pl.InOut],
                                             compiler_manual_dep_edges=[acc_carry])
                    acc_last = pl.yield_(acc_tid0)
                d2 = self.acc(c, d, arg_directions=[pl.In, pl.InOut], compiler_manual_dep_edges=[acc_last])
            return d

    assert_pass(passes.PrepareCrossScopeTaskIdHoists(), Before, Expected)


def test_a_program_without_placeholders_is_unchanged():
    plain = _plain()
    after = passes.PrepareCrossScopeTaskIdHoists()(plain, verify_well_formed=True)
    assert_equal(after, plain)


def _plain():
    @pl.program
    class Plain:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
                 d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.manual_scope():
                c2, k_tid = pl.submit(self.k, a, c, arg_directions=[pl.In, pl.Out])
                d2 = self.k(c2, d, arg_directions=[pl.In, pl.Out], compiler_manual_dep_edges=[k_tid])
            return d
    return Plain


def test_property_verifier_rejects_a_left_placeholder():
    problems = passes.verify_property(passes.IRProperty.CrossScopeTaskIdsHoisted, FanInBefore)
    assert any("system.task_ref placeholder left" in p for p in problems)
    assert passes.verify_property(passes.IRProperty.CrossScopeTaskIdsHoisted, _plain()) == []


def test_a_placeholder_naming_no_task_id_is_an_internal_error():
    @pl.program
    class Bad:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) \
                -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.manual_scope():
                r = pl.system.task_ref(task="nobody_tid7")
                c2 = self.k(a, c, arg_directions=[pl.In, pl.Out], compiler_manual_dep_edges=[r])
            return c

    with pytest.raises(Exception, match="nobody_tid7"):
        passes.PrepareCrossScopeTaskIdHoists()(Bad)


def test_every_iteration_of_a_range_fills_an_array_of_slots():
    # task_ref(every_iteration=True): slot i of an Array[3, TASK_ID] carried through the loop
    # holds iteration i's id; the consumer names the array (all valid slots). With 4 or more
    # iterations a fence would join them (as for pl.parallel).
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def copy(self, a: pl.Tensor[[16, 16], pl.FP32],
                 c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[48, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.manual_scope():
                t = pl.create_tensor([48, 16], dtype=pl.FP32)
                for i in pl.range(0, 3, 1, trip_count=3):
                    xi = pl.tensor.slice(x, [16, 16], [i * 16, 0])
                    ti = pl.tensor.slice(t, [16, 16], [i * 16, 0])
                    ti_1, copy_tid0 = pl.submit(self.copy, xi, ti, arg_directions=[pl.In, pl.Out])
                r = pl.system.task_ref(every_iteration=True, task="copy_tid0")
                t0 = pl.tensor.slice(t, [16, 16], [0, 0])
                out_1 = self.copy(t0, out, arg_directions=[pl.In, pl.Out], compiler_manual_dep_edges=[r])
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def copy(self, a: pl.Tensor[[16, 16], pl.FP32],
                 c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[48, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.manual_scope():
                t = pl.create_tensor([48, 16], dtype=pl.FP32)
                slots = pl.array.create(3, pl.TASK_ID)
                for i, (carry,) in pl.range(0, 3, 1, init_values=(slots,), trip_count=3):
                    xi = pl.tensor.slice(x, [16, 16], [i * 16, 0])
                    ti = pl.tensor.slice(t, [16, 16], [i * 16, 0])
                    ti_1, copy_tid0 = pl.submit(self.copy, xi, ti, arg_directions=[pl.In, pl.Out])
                    filled = pl.array.update_element(carry, i, copy_tid0)
                    last = pl.yield_(filled)
                t0 = pl.tensor.slice(t, [16, 16], [0, 0])
                out_1 = self.copy(t0, out, arg_directions=[pl.In, pl.Out], compiler_manual_dep_edges=[last])
            return out

    assert_pass(passes.PrepareCrossScopeTaskIdHoists(), Before, Expected)


def test_a_slot_placeholder_reads_one_slot_of_the_parallel_array():
    # task_ref(slot=1): the consumer needs iteration 1's id only (AutoDeriveTaskDependencies
    # proved the other tiles disjoint): the pl.parallel keeps its ids in an explicit array and
    # the consumer names slot 1; no consumer names all ids, so no fence.
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def copy(self, a: pl.Tensor[[16, 16], pl.FP32],
                 c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[64, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.manual_scope():
                t = pl.create_tensor([64, 16], dtype=pl.FP32)
                for i in pl.parallel(0, 4, 1, trip_count=4):
                    xi = pl.tensor.slice(x, [16, 16], [i * 16, 0])
                    ti = pl.tensor.slice(t, [16, 16], [i * 16, 0])
                    ti_1, copy_tid0 = pl.submit(self.copy, xi, ti, arg_directions=[pl.In, pl.Out])
                t1 = pl.tensor.slice(t, [16, 16], [16, 0])
                r = pl.system.task_ref(slot=1, task="copy_tid0")
                out_1 = self.copy(t1, out, arg_directions=[pl.In, pl.Out], compiler_manual_dep_edges=[r])
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def copy(self, a: pl.Tensor[[16, 16], pl.FP32],
                 c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[64, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.manual_scope():
                t = pl.create_tensor([64, 16], dtype=pl.FP32)
                slots = pl.array.create(4, pl.TASK_ID)
                for i, (carry,) in pl.parallel(0, 4, 1, init_values=(slots,), trip_count=4):
                    xi = pl.tensor.slice(x, [16, 16], [i * 16, 0])
                    ti = pl.tensor.slice(t, [16, 16], [i * 16, 0])
                    ti_1, copy_tid0 = pl.submit(self.copy, xi, ti, arg_directions=[pl.In, pl.Out])
                    filled = pl.array.update_element(carry, i, copy_tid0)
                    last = pl.yield_(filled)
                t1 = pl.tensor.slice(t, [16, 16], [16, 0])
                r = last[1]
                out_1 = self.copy(t1, out, arg_directions=[pl.In, pl.Out], compiler_manual_dep_edges=[r])
            return out

    assert_pass(passes.PrepareCrossScopeTaskIdHoists(), Before, Expected)


def _fan_in(start, stop, step):
    """A pl.parallel(start, stop, step) fan-in of `fill` tasks read whole by one consumer, as
    AutoDeriveTaskDependencies leaves it (trip counts not stamped yet)."""
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def fill(self, a: pl.Tensor[[16, 16], pl.FP32],
                 c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.manual_scope():
                tmp = pl.create_tensor([128, 16], dtype=pl.FP32)
                for i in pl.parallel(start, stop, step):
                    ti = pl.tensor.slice(tmp, [16, 16], [i * 16, 0])
                    ti2, fill_tid0 = pl.submit(self.fill, x, ti, arg_directions=[pl.In, pl.Out])
                r = pl.system.task_ref(task="fill_tid0")
                t0 = pl.tensor.slice(tmp, [16, 16], [0, 0])
                out_1 = self.fill(t0, out, arg_directions=[pl.In, pl.Out], compiler_manual_dep_edges=[r])
            return out
    return Before


def _fence_count(program):
    stamped = passes.StampStaticTripCounts()(program)
    return ir.python_print(passes.PrepareCrossScopeTaskIdHoists()(stamped, verify_well_formed=True)).count("task_dummy")


def test_the_fence_counts_iterations_not_the_distance_from_start_to_stop():
    # pl.parallel(0, 6, 2) runs 3 tasks (stop - start is 6): below the fence threshold of 4.
    # pl.parallel(7, -1, -2) runs 4 tasks (stop - start is -8): fenced.
    assert _fence_count(_fan_in(0, 6, 2)) == 0
    assert _fence_count(_fan_in(7, -1, -2)) == 1
    assert _fence_count(_fan_in(0, 4, 1)) == 1


def test_a_program_whose_trip_counts_are_not_stamped_is_refused():
    with pytest.raises(Exception, match="requires StaticTripCountsStamped"):
        passes.PrepareCrossScopeTaskIdHoists()(_fan_in(0, 4, 1))


def _task_refs(program):
    found = []

    def walk(s):
        for st in ir.flatten_stmts(s):
            if isinstance(st, ir.AssignStmt) and isinstance(st.value, ir.Call) and st.value.callee == "system.task_ref":
                found.append(st.value)
            elif isinstance(st, (ir.ForStmt, ir.RuntimeScopeStmt)):
                walk(st.body)
    walk(program.get("main").body)
    return found


def test_a_task_ref_target_is_a_typed_call_field_printed_and_compared():
    # task= / slot= / every_iteration= are the typed Call.task_ref (not attrs) the pass reads;
    # they print as the op's keywords and re-parse into the same field.
    fill_ref, acc_ref = _task_refs(FanInBefore)
    assert (fill_ref.task_ref_task, fill_ref.task_ref_slot, fill_ref.task_ref_every_iteration) == ("fill_tid0", -1, False)
    assert acc_ref.task_ref_task == "acc_tid1" and len(acc_ref.args) == 1
    assert not any(k in c.attrs for c in (fill_ref, acc_ref) for k in ("task", "slot", "every_iteration"))
    text = ir.python_print(FanInBefore)
    assert 'pl.system.task_ref(task="fill_tid0")' in text and 'pl.system.task_ref(j, task="acc_tid1")' in text
    assert ir.structural_equal(pl.parse_program(text), FanInBefore)
    for old, new, why in [('task_ref(task="fill_tid0")', 'task_ref(slot=2, task="fill_tid0")',
                           "Call.task_ref 'fill_tid0' vs 'fill_tid0' slot=2"),
                          ('task_ref(task="fill_tid0")', 'task_ref(every_iteration=True, task="fill_tid0")',
                           "Call.task_ref 'fill_tid0' vs 'fill_tid0' every_iteration"),
                          ('task_ref(task="fill_tid0")', 'task_ref(task="acc_tid1")', "Call.task_ref 'fill_tid0' vs 'acc_tid1'")]:
        other = pl.parse_program(text.replace(old, new))
        (ref, _) = _task_refs(other)
        assert ref.task_ref_slot == (2 if "slot" in new else -1)
        assert ref.task_ref_every_iteration == ("every_iteration" in new)
        assert new in ir.python_print(other)
        ok, message = ir.structural_equal_explain(FanInBefore, other)
        assert not ok and why in message, message
        assert ir.structural_hash(FanInBefore) != ir.structural_hash(other)


def test_a_bad_task_ref_slot_is_a_located_error():
    from pypto.errors import PyptoError
    text = ir.python_print(FanInBefore).replace('task_ref(task="fill_tid0")', 'task_ref(slot=-2, task="fill_tid0")')
    with pytest.raises(PyptoError) as ei:
        pl.parse_program(text, "c.py")
    assert "system.task_ref: slot= must be an int >= 0" in ei.value.message
    assert ei.value.line == next(i + 1 for i, line in enumerate(text.splitlines()) if "slot=-2" in line)


@pl.program
class RangeInParallelInRange:
    """Each pl.parallel slot p accumulates into its own tile in a pl.range, in every iteration of an
    outer pl.range: the chain of slot p carries over from the previous outer iteration."""

    @pl.function(type=pl.FunctionType.InCore)
    def acc(self, a: pl.Tensor[[16, 16], pl.FP32],
            c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(c, [0, 0], [16, 16])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX], m: pl.Scalar[pl.INDEX],
             out: pl.InOut[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
        for i in pl.range(n):
            for p in pl.parallel(2):
                o = pl.slice(out, [16, 16], [p * 16, 0])
                for j in pl.range(m):
                    o = self.acc(x, o)
        return out


@pytest.mark.parametrize("n, m", [(0, 2), (1, 0), (3, 2), (2, 5)])
def test_a_range_inside_a_parallel_starts_its_id_carry_from_a_join_of_the_parallels_ids(n, m):
    # orch_flow_fuzz seed 145: the inner pl.range's carry (one id) started from the pl.parallel's
    # carry, which ClassifyIterArgCarry makes the array of the previous outer iteration's ids:
    # "loop-carried TaskId ... is a scalar but starts from an array of TaskIds" for a valid program.
    import numpy as np
    import pypto
    from pypto import codegen
    code = codegen.generate_orchestration(RangeInParallelInRange, "main", analyze_auto_scopes_for_deps=True).code
    assert "acc_join0 = rt_submit_dummy_task(" in code, code
    prog = pypto.compile(RangeInParallelInRange, analyze_auto_scopes_for_deps=True)
    x = np.random.default_rng(7).random((16, 16), dtype=np.float32)
    out = np.ones((32, 16), np.float32)
    stats = prog(x, n, m, out, race_check="error", aiv_workers=2)
    assert stats.races == 0
    np.testing.assert_allclose(out, 1 + n * m * np.vstack([x, x]).astype(np.float64), rtol=1e-5)


@pl.program
class IfInParallelInRange:
    """As RangeInParallelInRange, with the accumulation under an if: the branch that skips it
    names the ids from before the if."""

    @pl.function(type=pl.FunctionType.InCore)
    def acc(self, a: pl.Tensor[[16, 16], pl.FP32],
            c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(c, [0, 0], [16, 16])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX], m: pl.Scalar[pl.INDEX],
             out: pl.InOut[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
        for i in pl.range(n):
            for p in pl.parallel(2):
                o = pl.slice(out, [16, 16], [p * 16, 0])
                if m > i:
                    o = self.acc(x, o)
        return out


@pytest.mark.parametrize("n, m", [(0, 2), (3, 2), (4, 9)])
def test_an_if_inside_a_parallel_merges_a_join_of_the_parallels_ids(n, m):
    # orch_flow_fuzz seed 1251: the if result was the acc's id in one branch and the pl.parallel's
    # carry (an array of the previous outer iteration's ids) in the other: "carried through this
    # pl.parallel loop as one TaskId per iteration, but an iteration ends with an array of 2".
    import numpy as np
    import pypto
    prog = pypto.compile(IfInParallelInRange, analyze_auto_scopes_for_deps=True)
    x = np.random.default_rng(11).random((16, 16), dtype=np.float32)
    out = np.ones((32, 16), np.float32)
    stats = prog(x, n, m, out, race_check="error", aiv_workers=2)
    assert stats.races == 0
    runs = sum(1 for i in range(n) if m > i)
    np.testing.assert_allclose(out, 1 + runs * np.vstack([x, x]).astype(np.float64), rtol=1e-5)
