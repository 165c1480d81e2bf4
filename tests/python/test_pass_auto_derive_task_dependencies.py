"""AutoDeriveTaskDependencies (DSL Before / Expected): compiler edges on the tasks of an AUTO
region, a compiler-owned MANUAL scope when every hazard is covered, demoted arguments when
not, and a recorded fallback reason otherwise."""

import pytest

import pypto.language as pl
from pypto import codegen, ir
from pypto.ir import passes

from pass_test_util import assert_equal, assert_pass


def test_chain_becomes_a_manual_scope_with_one_edge():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
                 d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = self.k(a, c, arg_directions=[pl.In, pl.Out])
            d2 = self.k(c2, d, arg_directions=[pl.In, pl.Out])
            return d

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration, attrs={"auto_deps": "manual: 2 tasks, 1 edges"})
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
                 d: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.manual_scope():
                c2, k_tid = pl.submit(self.k, a, c, arg_directions=[pl.In, pl.Out])
                d2 = self.k(c2, d, arg_directions=[pl.In, pl.Out], compiler_manual_dep_edges=[k_tid])
            return d

    assert_pass(passes.AutoDeriveTaskDependencies(), Before, Expected)


def test_disjoint_parallel_tiles_fan_in_and_a_loop_carried_chain_as_task_refs():
    @pl.program
    class Before:
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
            tmp = pl.create_tensor([64, 16], dtype=pl.FP32)
            for i in pl.parallel(4, trip_count=4):
                xi = pl.tensor.slice(x, [16, 16], [i * 16, 0])
                ti = pl.tensor.slice(tmp, [16, 16], [i * 16, 0])
                ti2 = self.fill(xi, ti, arg_directions=[pl.In, pl.Out])
            for j, (o,) in pl.range(4, init_values=(out,), trip_count=4):
                tj = pl.tensor.slice(tmp, [16, 16], [j * 16, 0])
                o2 = self.acc(tj, o, arg_directions=[pl.In, pl.InOut])
                o3 = pl.yield_(o2)
            return out

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

        @pl.function(type=pl.FunctionType.Orchestration, attrs={"auto_deps": "manual: 2 tasks, 2 edges"})
        def main(self, x: pl.Tensor[[64, 16], pl.FP32],
                 out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            # The edges are decided here; where the TaskIds live (carries, the fence) is
            # PrepareCrossScopeTaskIdHoists' job (test_pass_prepare_cross_scope_task_id_hoists.py).
            with pl.manual_scope():
                tmp = pl.create_tensor([64, 16], dtype=pl.FP32)
                for i in pl.parallel(4, trip_count=4):
                    xi = pl.tensor.slice(x, [16, 16], [i * 16, 0])
                    ti = pl.tensor.slice(tmp, [16, 16], [i * 16, 0])
                    ti2, fill_tid0 = pl.submit(self.fill, xi, ti, arg_directions=[pl.In, pl.Out])
                for j, (o,) in pl.range(4, init_values=(out,), trip_count=4):
                    tj = pl.tensor.slice(tmp, [16, 16], [j * 16, 0])
                    fill_ref = pl.system.task_ref(task="fill_tid0")    # all 4 fill tasks
                    acc_ref = pl.system.task_ref(j, task="acc_tid1")   # acc of iteration j - 1
                    o2, acc_tid1 = pl.submit(self.acc, tj, o, arg_directions=[pl.In, pl.InOut],
                                             compiler_manual_dep_edges=[fill_ref, acc_ref])
                    o3 = pl.yield_(o2)
            return out

    assert_pass(passes.AutoDeriveTaskDependencies(), Before, Expected)


def test_unrepresentable_hazard_keeps_auto_and_demotes_only_covered_arguments():
    # acc reads tile 0 of `y`, which the copies of a pl.parallel(n) write: a fan-in from a
    # pl.parallel of dynamic trip count cannot name every iteration's TaskId (an array of them
    # needs a literal count), so the region stays AUTO; `a` is only ever read (NoDep) and
    # nothing else touches `out` (InOut -> Out: its write stays tracked).
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def copy(self, a: pl.Tensor[[16, 16], pl.FP32],
                 c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.InCore)
        def acc(self, a: pl.Tensor[[16, 16], pl.FP32],
                c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(c, [0, 0], [16, 16])), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX],
                 y: pl.InOut[pl.Tensor[[64, 16], pl.FP32]],
                 out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            for i in pl.parallel(n):
                ys = pl.tensor.slice(y, [16, 16], [i * 16, 0])
                ys2 = self.copy(a, ys, arg_directions=[pl.In, pl.Out])
            y0 = pl.tensor.slice(y, [16, 16], [0, 0])
            out2 = self.acc(y0, out, arg_directions=[pl.In, pl.InOut])
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def copy(self, a: pl.Tensor[[16, 16], pl.FP32],
                 c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.InCore)
        def acc(self, a: pl.Tensor[[16, 16], pl.FP32],
                c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(c, [0, 0], [16, 16])), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX],
                 y: pl.InOut[pl.Tensor[[64, 16], pl.FP32]],
                 out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            for i in pl.parallel(n):
                ys = pl.tensor.slice(y, [16, 16], [i * 16, 0])
                ys2 = self.copy(a, ys, arg_directions=[pl.NoDep, pl.Out])
            y0 = pl.tensor.slice(y, [16, 16], [0, 0])
            out2 = self.acc(y0, out, arg_directions=[pl.In, pl.Out])
            return out

    after = passes.AutoDeriveTaskDependencies()(Before, verify_well_formed=True)
    verdict = after.get("main").attrs["auto_deps"]
    assert verdict.startswith("auto: 1 hazards not representable (first: 'copy' (line ") and \
        verdict.endswith("); 0 edges, 2 args demoted"), verdict
    # The rest of the function is exactly Expected (the verdict names source lines).
    e = Expected.get("main")
    e = ir.Function.make(e.name, e.type, list(e.params), list(e.param_directions), list(e.return_types), e.body,
                         e.level, e.role, {"auto_deps": verdict}, e.span)
    assert_equal(after, ir.Program.make("Expected", [Expected.get("copy"), Expected.get("acc"), e]))


def test_a_parallel_loop_whose_iterations_conflict_becomes_a_range_with_a_carried_edge():
    # Every pl.parallel iteration updates the whole `out`. The runtime's tracking would order
    # them in submission order; the analysis makes the loop a pl.range so a carried TaskId
    # orders them: everything is covered, one MANUAL scope.
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def acc(self, a: pl.Tensor[[16, 16], pl.FP32],
                c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(c, [0, 0], [16, 16])), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            for i, (o,) in pl.parallel(4, init_values=(out,), trip_count=4):
                o2 = self.acc(a, o, arg_directions=[pl.In, pl.InOut])
                o3 = pl.yield_(o2)
            return out

    after = passes.AutoDeriveTaskDependencies()(Before, verify_well_formed=True)
    verdict = after.get("main").attrs["auto_deps"]
    assert verdict == "manual: 1 tasks, 1 edges (1 pl.parallel loop run in order: iterations conflict)", verdict
    text = ir.python_print(after)
    assert "in pl.parallel(" not in text and "in pl.range(0, 4, 1" in text and "task_ref(i, " in text, text


def test_hand_placed_scope_keeps_auto_with_edges_inside_it_and_tracking_across_it():
    # orchestration_codegen.txt: a hand-placed pl.scope() keeps manual=false; the representable
    # edges go on top of the tracking. k1 -> k2 inside the scope is an edge; k3 after the scope
    # cannot name a TaskId of the scope (its C++ variable lives in that PTO2_SCOPE block), so
    # those two hazards stay with the tracking: only the reads of `a` (never written) are demoted.
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32],
                 c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.scope():
                c2 = self.k(a, c, arg_directions=[pl.In, pl.InOut])
                c3 = self.k(a, c2, arg_directions=[pl.In, pl.InOut])
            c4 = self.k(a, c3, arg_directions=[pl.In, pl.InOut])
            return c

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32],
                 c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.scope():
                k_task = pl.submit(self.k, a, c, arg_directions=[pl.NoDep, pl.InOut])
                c2 = k_task[0]
                k_tid0 = k_task[1]
                c3 = self.k(a, c2, arg_directions=[pl.NoDep, pl.InOut], compiler_manual_dep_edges=[k_tid0])
            c4 = self.k(a, c3, arg_directions=[pl.NoDep, pl.InOut])
            return c

    after = passes.AutoDeriveTaskDependencies()(Before, verify_well_formed=True)
    verdict = after.get("main").attrs["auto_deps"]
    assert verdict.startswith("auto: 2 hazards not representable (first: 'k' (line ") and \
        verdict.endswith("); 1 edges, 3 args demoted"), verdict
    e = Expected.get("main")
    e = ir.Function.make(e.name, e.type, list(e.params), list(e.param_directions), list(e.return_types), e.body,
                         e.level, e.role, {"auto_deps": verdict}, e.span)
    assert_equal(after, ir.Program.make("Expected", [Expected.get("k"), e]))


def test_affine_tiles_phase_times_branch_are_disjoint_but_a_shifted_read_overlaps():
    # Writes of rows (phase * 4 + branch) * 16 never overlap each other, in any phase (no
    # edges, no carried edges), while each phase's read of rows [phase*64 + 8, phase*64 + 24)
    # overlaps two of that phase's tiles: it names the array of the phase's fills.
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def fill(self, a: pl.Tensor[[16, 16], pl.FP32],
                 c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], t: pl.InOut[pl.Tensor[[128, 16], pl.FP32]],
                 u: pl.InOut[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
            for phase in pl.range(2, trip_count=2):
                for branch in pl.parallel(4, trip_count=4):
                    ti = pl.tensor.slice(t, [16, 16], [(phase * 4 + branch) * 16, 0])
                    t2 = self.fill(a, ti, arg_directions=[pl.In, pl.Out])
                src = pl.tensor.slice(t, [16, 16], [phase * 64 + 8, 0])
                ui = pl.tensor.slice(u, [16, 16], [phase * 16, 0])
                u2 = self.fill(src, ui, arg_directions=[pl.In, pl.Out])
            return u

    after = passes.AutoDeriveTaskDependencies()(Before, verify_well_formed=True)
    text = ir.python_print(after)
    assert after.get("main").attrs["auto_deps"] == "manual: 2 tasks, 1 edges", text
    lines = [ln for ln in text.splitlines() if "pl.submit(self.fill" in ln or "self.fill(" in ln]
    assert len(lines) == 2 and "compiler_manual_dep_edges" not in lines[0], text
    assert "compiler_manual_dep_edges=[" in lines[1], text


def test_switch_is_off_by_default():
    assert "AutoDeriveTaskDependencies" not in codegen.pass_names()
    assert "AutoDeriveTaskDependencies" in codegen.pass_names(analyze_auto_scopes_for_deps=True)
    names = codegen.pass_names(analyze_auto_scopes_for_deps=True)
    assert names.index("PrepareCrossScopeTaskIdHoists") == names.index("AutoDeriveTaskDependencies") + 1
    assert "PrepareCrossScopeTaskIdHoists" not in codegen.pass_names()


def test_a_range_fan_in_of_independent_instances_names_every_iteration():
    # Each pl.range iteration writes its own tile (no iteration orders the next): the last id
    # is not enough, so the placeholder asks for every iteration's id (every_iteration=True);
    # formerly this stayed AUTO ("not representable").
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def copy(self, a: pl.Tensor[[16, 16], pl.FP32],
                 c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.InCore)
        def total(self, a: pl.Tensor[[48, 16], pl.FP32],
                  c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(c, [0, 0], [16, 16])), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[48, 16], pl.FP32],
                 out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            t = pl.create_tensor([48, 16], dtype=pl.FP32)
            for i in pl.range(3, trip_count=3):
                xi = pl.tensor.slice(x, [16, 16], [i * 16, 0])
                ti = pl.tensor.slice(t, [16, 16], [i * 16, 0])
                ti_1 = self.copy(xi, ti, arg_directions=[pl.In, pl.Out])
            out_1 = self.total(t, out, arg_directions=[pl.In, pl.InOut])
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def copy(self, a: pl.Tensor[[16, 16], pl.FP32],
                 c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.InCore)
        def total(self, a: pl.Tensor[[48, 16], pl.FP32],
                  c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(c, [0, 0], [16, 16])), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration, attrs={"auto_deps": "manual: 2 tasks, 1 edges"})
        def main(self, x: pl.Tensor[[48, 16], pl.FP32],
                 out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.manual_scope():
                t = pl.create_tensor([48, 16], dtype=pl.FP32)
                for i in pl.range(3, trip_count=3):
                    xi = pl.tensor.slice(x, [16, 16], [i * 16, 0])
                    ti = pl.tensor.slice(t, [16, 16], [i * 16, 0])
                    ti_1, copy_tid0 = pl.submit(self.copy, xi, ti, arg_directions=[pl.In, pl.Out])
                r = pl.system.task_ref(every_iteration=True, task="copy_tid0")
                out_1 = self.total(t, out, arg_directions=[pl.In, pl.InOut], compiler_manual_dep_edges=[r])
            return out

    assert_pass(passes.AutoDeriveTaskDependencies(), Before, Expected)


def test_a_program_whose_trip_counts_are_not_stamped_is_refused():
    # The pass reads ForStmt::trip_count (StampStaticTripCounts) instead of recomputing it.
    @pl.program
    class Unstamped:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32],
              c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c2 = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32],
                 c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            for i in pl.range(2):
                c2 = self.k(a, c, arg_directions=[pl.In, pl.InOut])
            return c

    with pytest.raises(Exception, match="requires StaticTripCountsStamped"):
        passes.AutoDeriveTaskDependencies()(Unstamped)
