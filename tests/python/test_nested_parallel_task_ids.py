"""A TaskId carried through nested pl.parallel loops (docs/dsl.md "TaskId carries").

An outer pl.parallel(N) whose iterations end with an inner pl.parallel(M)'s array of M TaskIds
carries N*M slots: iteration i fills [i*M, (i+1)*M), so the task after the loops depends on every
inner task (fuzz28 found the generator copying M slots over N; it was then refused). Each program
runs with race_check=True: the `copy` after the loops reads every row the inner tasks wrote, and
phases of a pl.range write the same rows, so a lost dependency is a race. The generated C++ is
compiled with -Wall -Werror. HOST programs: the same lowering with TaskHandle slots, the waits of
the task after the loops read from the run's task records.
"""
import re

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import host
from pypto.errors import PyptoError

from codegen_test_util import compile_cpp

ROWS = 512
_PROGRAM = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, data: pl.Tensor[[512, 16], pl.FP32], row: pl.Scalar[pl.INDEX],
          out: pl.InOut[pl.Tensor[[512, 16], pl.FP32]]) -> pl.Tensor[[512, 16], pl.FP32]:
        s = pl.add(pl.load(out, [row, 0], [16, 16]), pl.load(data, [row, 0], [16, 16]))
        out = pl.store(s, [row, 0], out)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, out: pl.Tensor[[512, 16], pl.FP32],
             res: pl.Out[pl.Tensor[[512, 16], pl.FP32]]) -> pl.Tensor[[512, 16], pl.FP32]:
        res = pl.store(pl.load(out, [0, 0], [512, 16]), [0, 0], res)
        return res

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, data: pl.Tensor[[512, 16], pl.FP32], out: pl.InOut[pl.Tensor[[512, 16], pl.FP32]],
             res: pl.Out[pl.Tensor[[512, 16], pl.FP32]], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[512, 16], pl.FP32]:
        with pl.manual_scope():
            prev = None
BODY
            res, last = pl.submit(self.copy, out, res, deps=[prev])
        return res
'''
_BODY_LINE = 24   # the first line of BODY in _PROGRAM (the outer loop)
_SUBMIT = "out, prev = pl.submit(self.k, data, ({}) * 16, out, deps=[prev])"

# name -> (loops, the 16-row block of each inner task as a function of the loop variables, the
# blocks the tasks add data to for a given n: a block listed twice holds 2 * data).
_CASES = {
    "equal_4x4": (["o in pl.parallel(4)", "b in pl.parallel(4)"], "o * 4 + b",
                  lambda n: [o * 4 + b for o in range(4) for b in range(4)]),
    "unequal_3x5": (["o in pl.parallel(3)", "b in pl.parallel(5)"], "o * 5 + b",
                    lambda n: [o * 5 + b for o in range(3) for b in range(5)]),
    "unequal_5x2": (["o in pl.parallel(5)", "b in pl.parallel(2)"], "o * 2 + b",
                    lambda n: [o * 2 + b for o in range(5) for b in range(2)]),
    "strided_outer": (["o in pl.parallel(1, 9, 2)", "b in pl.parallel(3)"], "(o - 1) // 2 * 3 + b",
                      lambda n: [o * 3 + b for o in range(4) for b in range(3)]),
    # fuzz28, seed 2802 mutant 405 (rows made disjoint): an inner pl.range's phases of 3.
    "range_then_parallel": (["o in pl.parallel(4)", "p in pl.range(2)", "b in pl.parallel(3)"], "o * 3 + b",
                            lambda n: [o * 3 + b for o in range(4) for b in range(3)] * 2),
    # a run-time trip count: n phases of 2 per outer iteration (n = 0: the carry's seed).
    "symbolic_inner_range": (["o in pl.parallel(3)", "p in pl.range(n)", "b in pl.parallel(2)"], "o * 2 + b",
                             lambda n: [o * 2 + b for o in range(3) for b in range(2)] * n),
    "three_levels": (["o in pl.parallel(2)", "m in pl.parallel(3)", "b in pl.parallel(2)"], "(o * 3 + m) * 2 + b",
                     lambda n: list(range(12))),
    # no iteration: the carry keeps its seed (3 slots, all invalid); the copy waits on nothing.
    "zero_trip_outer": (["o in pl.parallel(0)", "b in pl.parallel(3)"], "o * 3 + b", lambda n: []),
    # phases of 2 x 3 tasks writing the same rows: each phase waits on all 6 of the one before.
    "inside_range": (["r in pl.range(3)", "o in pl.parallel(2)", "b in pl.parallel(3)"], "o * 3 + b",
                     lambda n: list(range(6)) * 3),
}


def _body(loops, block, branch=None):
    """The loops, one inside the other, around the submission; branch = (i, cond) puts
    `if cond:` before loop i (i == len(loops): around the submission)."""
    lines, ind = [], 12
    for i, loop in enumerate(loops + [None]):
        if branch is not None and i == branch[0]:
            lines.append(" " * ind + "if " + branch[1] + ":")
            ind += 4
        if loop is None:
            break
        lines.append(" " * ind + "for " + loop + ":")
        ind += 4
    lines.append(" " * ind + _SUBMIT.format(block))
    return "\n".join(lines)


def _compile(body):
    c = pypto.compile(pl.parse_program(_PROGRAM.replace("BODY", body), "nested.py"))
    orch = [v for k, v in c.files.items() if k.startswith("orchestration/")]
    assert len(orch) == 1, sorted(c.files)
    ok, log = compile_cpp(orch[0], "nested_orch")
    assert ok, log
    return c, orch[0]


def _run(c, blocks, n=0):
    rng = np.random.default_rng(len(blocks))
    data = rng.standard_normal((ROWS, 16)).astype(np.float32)
    out, res = np.zeros_like(data), np.zeros_like(data)
    stats = c(data, out, res, n, race_check=True)
    assert stats.races == 0
    want = np.zeros_like(data)
    for blk in blocks:
        want[blk * 16:(blk + 1) * 16] += data[blk * 16:(blk + 1) * 16]
    np.testing.assert_allclose(out, want, rtol=1e-6)
    np.testing.assert_array_equal(res, out)   # the copy ran after every inner task
    return stats


def _executed_graph(c, n):
    """The DOT of a traced run: every dependency the run found, linked or not (a producer that
    finished before its consumer was submitted included), so the count is the program's."""
    z = np.zeros((ROWS, 16), np.float32)
    return c.task_graph(z, z.copy(), z.copy(), n)


def _edges_into_last_task(c, n):
    g = _executed_graph(c, n)
    last = max(int(t) for t in re.findall(r"^  t(\d+) \[", g, re.M))
    return len(re.findall(r"-> t%d\b" % last, g))


@pytest.mark.parametrize("case", sorted(_CASES))
def test_nested_parallel_carry_runs_race_free(case):
    loops, block, blocks = _CASES[case]
    c, code = _compile(_body(loops, block))
    for n in ([0, 1, 3] if "(n)" in " ".join(loops) else [0]):
        stats = _run(c, blocks(n), n)
        inner = len(blocks(n))
        assert stats.tasks - stats.tasks_dummy == inner + 1
        # the copy waits on every slot that holds a task: all inner tasks of the last phase
        last_phase = inner if case != "inside_range" else 6
        if case == "range_then_parallel":
            last_phase = 12
        elif case == "symbolic_inner_range":
            last_phase = 6 if n else 0
        # (from the traced graph, which lists every dependency found: stats.explicit_edges counts
        # only the producers still running at submission, which depends on timing)
        assert _edges_into_last_task(c, n) == last_phase


def test_nested_slots_are_filled_per_outer_iteration():
    """The lowering: one N*M array; each outer iteration copies its inner array into its M slots."""
    _, code = _compile(_body(["o in pl.parallel(4)", "b in pl.parallel(3)"], "o * 3 + b"))
    assert re.search(r"PTO2TaskId prev_\d+\[12\];", code), code
    assert re.search(r"prev_\d+\[o \* 3 \+ (k\w*)\] = prev_\d+\[\1\];", code), code
    assert re.search(r"for \(int64_t (k\w*) = 0; \1 < 12; \+\+\1\) \{\n\s*if \(prev_\d+\[\1\]\.is_valid\(\)\) "
                     r"params_t1_deps", code), code


def test_nested_carry_inside_a_range_waits_on_every_task_of_the_phase_before():
    c, code = _compile(_body(["r in pl.range(3)", "o in pl.parallel(2)", "b in pl.parallel(3)"], "o * 3 + b"))
    # every inner task of phases 1 and 2 waits on the 6 of the phase before (through one barrier
    # per phase: 6 in, 6 out), the copy on the last 6
    _run(c, list(range(6)) * 3)
    assert _executed_graph(c, 0).count("->") == 2 * 6 * 2 + 6
    assert c.task_graph(static=True).count("->") == 2 * 6 * 2 + 6   # the static graph agrees
    # the outer pl.parallel starts from the pl.range's 6 slots: not copied into its own 6
    assert "// every iteration fills its slots" in code, code


_FAN_FIRST = '''            for f in pl.parallel(4):
                out, prev = pl.submit(self.k, data, f * 16, out, deps=[prev])
'''


def test_nested_carry_after_a_fan_waits_on_the_fan():
    """The nested loops start from a 4-slot fan (rows the inner tasks write again): every inner
    task waits on the 4, the copy on the 6 inner tasks only."""
    c, code = _compile(_FAN_FIRST + _body(["o in pl.parallel(2)", "b in pl.parallel(3)"], "o * 3 + b"))
    _run(c, [0, 1, 2, 3] + list(range(6)))
    assert _executed_graph(c, 0).count("->") == 6 * 4 + 6


def test_zero_trip_nested_carry_after_a_fan_is_located():
    """A pl.parallel(0) keeps the 4 TaskIds from before it, which its 3 slots cannot hold."""
    body = _FAN_FIRST + _body(["o in pl.parallel(0)", "b in pl.parallel(3)"], "b")
    with pytest.raises(PyptoError) as ei:
        pypto.compile(pl.parse_program(_PROGRAM.replace("BODY", body), "nested.py"))
    e = ei.value
    assert e.line == _BODY_LINE + 2 and "runs no iteration, so TaskId 'prev' keeps its 4 TaskIds from before the " \
        "loop, but its iterations end with 3" in e.message, str(e)


def test_branch_around_an_inner_parallel_runs_race_free():
    """fuzz28's third form: an iteration runs the inner loop or yields the value from before it."""
    c, _ = _compile(_body(["o in pl.parallel(4)", "b in pl.parallel(2)"], "o * 2 + b", branch=(1, "o > 1")))
    _run(c, [o * 2 + b for o in (2, 3) for b in range(2)])
    assert _executed_graph(c, 0).count("->") == 4


def test_too_many_nested_slots_are_located():
    body = _body(["o in pl.parallel(64)", "b in pl.parallel(65)"], "b")
    with pytest.raises(PyptoError) as ei:
        pypto.compile(pl.parse_program(_PROGRAM.replace("BODY", body), "nested.py"))
    e = ei.value
    assert e.line == _BODY_LINE and "would keep 64 x 65 TaskIds" in e.message and "keeps at most 4096" in e.message, \
        str(e)
    assert "pl.system.task_dummy(deps=[prev])" in e.help


def test_three_levels_count_against_the_limit():
    body = _body(["o in pl.parallel(16)", "m in pl.parallel(16)", "b in pl.parallel(17)"], "b")
    with pytest.raises(PyptoError) as ei:
        pypto.compile(pl.parse_program(_PROGRAM.replace("BODY", body), "nested.py"))
    assert ei.value.line == _BODY_LINE and "would keep 16 x 272 TaskIds" in ei.value.message, str(ei.value)


def test_a_phase_kept_whole_by_one_iteration_goes_through_a_barrier():
    """Inside a pl.range carrying N slots, an iteration that yields the value from before the
    pl.parallel keeps all N of the previous phase, which its one slot cannot hold (refused
    before): the phase goes through a barrier and the iteration keeps the barrier."""
    body = '''            for r in pl.range(3):
                for o in pl.parallel(2):
                    if o > 0:
                        out, prev = pl.submit(self.k, data, o * 16, out, deps=[prev])'''
    c, code = _compile(body)
    assert "rt_submit_dummy_task" in code, code
    _run(c, [1, 1, 1])
    # phase 1: the barrier waits on phase 0's task, the task on the barrier; phase 2: the
    # barrier on phase 1's task and barrier, the task on it; the copy on phase 2's task and barrier
    assert _check_phase_groups(_executed_graph(c, 0), [1, 1, 1]) == 1 + 1 + 2 + 1 + 2


# ---- phases of nested pl.parallel grids: one barrier per phase ------------------------------
# `pl.range(P) > pl.parallel(N) > pl.parallel(M)`: every inner task of phase p+1 must wait on all
# N*M tasks of phase p. Linked directly that is (N*M)^2 edges per phase; ExpandManualPhaseFence
# puts one barrier before the outer pl.parallel: N*M edges in, N*M out.

def _graph(dot, kinds=None):
    """(tasks in submission order as (id, kind, label), edges as (from, to)) of a task-graph DOT
    (edges of `kinds` only, when given)."""
    nodes = [(int(i), k, lbl.split("\\n")[0]) for i, lbl, k in
             re.findall(r'^  t(\d+) \[label="([^"]*)", kind="(\w+)"', dot, re.M)]
    edges = [(int(a), int(b)) for a, b, k in re.findall(r'^  t(\d+) -> t(\d+) \[kind="(\w+)"', dot, re.M)
             if k != "chain" and (kinds is None or k in kinds)]   # (HOST: the per-target order is not a dependency)
    return sorted(nodes), edges


def _ancestors(edges):
    preds = {}
    for a, b in edges:
        preds.setdefault(b, set()).add(a)
    memo = {}

    def anc(t):
        if t not in memo:
            memo[t] = set()
            for p in preds.get(t, ()):
                memo[t] |= {p} | anc(p)
        return memo[t]
    return anc


def _check_phases(dot, phases, grid, task="k", last="copy"):
    """The executed graph of `phases` phases of `grid` inner tasks then the copy: every task of a
    phase reaches every task of the phase before, none reaches a task of its own phase, the copy
    reaches the last phase; returns the edge count."""
    return _check_phase_groups(dot, [grid] * phases, task, last)


def _check_phase_groups(dot, sizes, task="k", last="copy", kinds=None):
    """_check_phases with phases of `sizes` tasks each (in submission order), through edges of
    `kinds` only when given."""
    nodes, edges = _graph(dot, kinds)
    inner = [i for i, kind, lbl in nodes if kind == "task" and lbl == task]
    copy = [i for i, kind, lbl in nodes if kind == "task" and lbl == last]
    assert len(inner) == sum(sizes) and len(copy) == 1, nodes
    anc = _ancestors(edges)
    starts = [sum(sizes[:p]) for p in range(len(sizes) + 1)]
    groups = [g for g in (inner[starts[p]:starts[p + 1]] for p in range(len(sizes))) if g]   # phases that ran
    for p, group in enumerate(groups):
        for t in group:
            assert not set(group) & anc(t), (p, t)                    # nothing stronger inside a phase
            if p:
                assert set(groups[p - 1]) <= anc(t), (p, t)           # after all of the phase before
    if groups:
        assert set(groups[-1]) <= anc(copy[0])
    return len(edges)


def _fenced(phases, grid):
    """Edges of `phases` fenced phases of `grid` tasks and the copy: the first phase's barrier
    waits on nothing (the None seed) and is not submitted; each later one has grid in and grid out."""
    return (2 * grid * (phases - 1) + grid) if phases else 0


# name -> (loops, the block of an inner task, tasks per phase, phases for n, the phases that run)
_PHASE_CASES = {
    "grid_2x3": (["r in pl.range(3)", "o in pl.parallel(2)", "b in pl.parallel(3)"], "o * 3 + b", 6,
                 lambda n: [0, 1, 2]),
    "grid_4x4": (["r in pl.range(4)", "o in pl.parallel(4)", "b in pl.parallel(4)"], "o * 4 + b", 16,
                 lambda n: [0, 1, 2, 3]),
    "three_levels": (["r in pl.range(3)", "o in pl.parallel(2)", "m in pl.parallel(3)", "b in pl.parallel(2)"],
                     "(o * 3 + m) * 2 + b", 12, lambda n: [0, 1, 2]),
    "runtime_phases": (["r in pl.range(n)", "o in pl.parallel(2)", "b in pl.parallel(3)"], "o * 3 + b", 6,
                       lambda n: list(range(n))),
    "outer_parallel_1": (["r in pl.range(3)", "o in pl.parallel(1)", "b in pl.parallel(4)"], "o * 4 + b", 4,
                         lambda n: [0, 1, 2]),
    "inner_parallel_1": (["r in pl.range(3)", "o in pl.parallel(4)", "b in pl.parallel(1)"], "o + b", 4,
                         lambda n: [0, 1, 2]),
    # a phase that skips the grid keeps the carry: the next phase waits on the last grid that ran
    "phase_skips_grid": (["r in pl.range(n)", "o in pl.parallel(2)", "b in pl.parallel(3)"], "o * 3 + b", 6,
                         lambda n: [r for r in range(n) if r % 2 == 0], (1, "r % 2 == 0")),
}


@pytest.mark.parametrize("case", sorted(_PHASE_CASES))
def test_nested_grid_phases_link_through_one_barrier(case):
    loops, block, grid, ran, *branch = _PHASE_CASES[case]
    c, code = _compile(_body(loops, block, branch=branch[0] if branch else None))
    assert "rt_submit_dummy_task" in code, code
    for n in ([0, 1, 2, 5] if "(n)" in " ".join(loops) else [0]):
        phases = len(ran(n))
        stats = _run(c, list(range(grid)) * phases, n)
        assert stats.tasks - stats.tasks_dummy == phases * grid + 1
        assert _check_phases(_executed_graph(c, n), phases, grid) == _fenced(phases, grid), n


# The static graph (read from the IR) must be the traced one: with three levels it linked the
# copy to every phase's tasks (an inner array's ids went into one slot of the outer carry, its
# other slots kept the phase before).
_STATIC_CASES = {
    "one_level": (["r in pl.range(3)", "o in pl.parallel(4)"], "o", None),
    "two_levels": (["r in pl.range(3)", "o in pl.parallel(2)", "b in pl.parallel(3)"], "o * 3 + b", None),
    "three_levels": (["r in pl.range(3)", "o in pl.parallel(2)", "m in pl.parallel(3)", "b in pl.parallel(2)"],
                     "(o * 3 + m) * 2 + b", None),
    "three_levels_no_range": (["o in pl.parallel(2)", "m in pl.parallel(3)", "b in pl.parallel(2)"],
                              "(o * 3 + m) * 2 + b", None),
    "three_levels_under_if": (["r in pl.range(n)", "o in pl.parallel(2)", "m in pl.parallel(2)", "b in pl.parallel(2)"],
                              "(o * 2 + m) * 2 + b", (1, "r % 2 == 0")),
    "if_around_inner_levels": (["o in pl.parallel(3)", "m in pl.parallel(2)", "b in pl.parallel(2)"],
                               "(o * 2 + m) * 2 + b", (1, "o > 0")),
}


@pytest.mark.parametrize("case", sorted(_STATIC_CASES))
def test_static_graph_is_the_traced_graph(case):
    loops, block, branch = _STATIC_CASES[case]
    c = pypto.compile(pl.parse_program(_PROGRAM.replace("BODY", _body(loops, block, branch)), "nested.py"))
    for n in ([0, 1, 4] if "(n)" in " ".join(loops) else [0]):
        static, traced = _graph(c.task_graph(static=True, n=n)), _graph(_executed_graph(c, n))
        assert static[1] or n == 0, n
        assert sorted(static[1]) == sorted(traced[1]), (n, sorted(set(static[1]) ^ set(traced[1])))
        assert [k for _, k, _ in static[0]] == [k for _, k, _ in traced[0]], n


def test_nested_grid_with_an_empty_outer_parallel_links_nothing():
    """pl.parallel(0) inside the phases: no task, no barrier, the copy waits on nothing."""
    c, code = _compile(_body(["r in pl.range(3)", "o in pl.parallel(0)", "b in pl.parallel(3)"], "o * 3 + b"))
    stats = _run(c, [])
    assert stats.tasks == 1
    assert _check_phases(_executed_graph(c, 0), 0, 3) == 0


def test_64x64_grid_phases_stay_linear():
    """The cliff: a 64 x 64 grid is 4096 tasks a phase, 16.7 million direct edges a phase before;
    through the barrier 2 * 4096 (the static graph, for the size; nothing runs)."""
    body = _body(["r in pl.range(3)", "o in pl.parallel(64)", "b in pl.parallel(64)"], "o * 64 + b")
    c = pypto.compile(pl.parse_program(_PROGRAM.replace("BODY", body), "nested.py"))
    assert c.task_graph(static=True).count("->") == _fenced(3, 4096)


# ---- phases in which an iteration keeps the phase before -------------------------------------
# `range > parallel > if: parallel`, `range > parallel > parallel > if: submit` (and
# `range > parallel > if: submit`): an iteration that skips yields `prev` unchanged, the value from
# before the pl.parallel — the whole phase before, N*M slots, which its own slots cannot hold (it
# was refused). ExpandManualPhaseFence puts the phase behind one barrier and the iteration keeps
# the barrier: the same order (the barrier waits on exactly that phase), one TaskId.

def _kept_edges(phases):
    """Edges of fenced phases, each (tasks, whether an iteration keeps), then the copy: a phase's
    barrier waits on the distinct valid TaskIds the phase before left (its tasks, and its
    barrier when an iteration kept it) and is submitted when there is one; every task of the
    phase waits on the barrier; the copy on what the last phase left."""
    edges, left = 0, 0
    for tasks, keeps in phases:
        fence = left > 0
        edges += left + (tasks if fence else 0)
        left = tasks + (1 if keeps and fence else 0)
    return edges + left


# name -> (loops, the block of an inner task, the branch, the blocks of each phase for n)
_KEPT_CASES = {
    "if_around_inner_parallel": (["r in pl.range(n)", "o in pl.parallel(2)", "b in pl.parallel(3)"], "o * 3 + b",
                                 (2, "o > 0"), lambda n: [[3, 4, 5]] * n),
    "if_around_inner_parallel_by_phase": (["r in pl.range(n)", "o in pl.parallel(2)", "b in pl.parallel(3)"],
                                          "o * 3 + b", (2, "r % 2 + o == 1"),
                                          lambda n: [[3, 4, 5] if r % 2 == 0 else [0, 1, 2] for r in range(n)]),
    "if_around_submit": (["r in pl.range(n)", "o in pl.parallel(2)", "b in pl.parallel(3)"], "o * 3 + b",
                         (3, "b > 0"), lambda n: [[1, 2, 4, 5]] * n),
    "if_around_submit_one_level": (["r in pl.range(n)", "o in pl.parallel(4)"], "o", (2, "o > 0"),
                                   lambda n: [[1, 2, 3]] * n),
    "three_levels_if_around_inner": (["r in pl.range(n)", "o in pl.parallel(2)", "m in pl.parallel(2)",
                                      "b in pl.parallel(2)"], "(o * 2 + m) * 2 + b", (3, "m == o"),
                                     lambda n: [[0, 1, 6, 7]] * n),
    "three_levels_if_around_submit": (["r in pl.range(n)", "o in pl.parallel(2)", "m in pl.parallel(2)",
                                       "b in pl.parallel(2)"], "(o * 2 + m) * 2 + b", (4, "b + m != 1"),
                                      lambda n: [[0, 3, 4, 7]] * n),
    # every iteration keeps in the odd phases: the next phase waits on the barrier alone
    "outer_parallel_1": (["r in pl.range(n)", "o in pl.parallel(1)", "b in pl.parallel(3)"], "o * 3 + b",
                         (2, "r % 2 == 0"), lambda n: [[0, 1, 2] if r % 2 == 0 else [] for r in range(n)]),
    "inner_parallel_1": (["r in pl.range(n)", "o in pl.parallel(2)", "b in pl.parallel(1)"], "o + b",
                         (3, "o > 0"), lambda n: [[1]] * n),
    "constant_phases": (["r in pl.range(3)", "o in pl.parallel(2)", "b in pl.parallel(3)"], "o * 3 + b",
                        (3, "b != o"), lambda n: [[1, 2, 3, 5]] * 3),
}


@pytest.mark.parametrize("case", sorted(_KEPT_CASES))
def test_phases_an_iteration_keeps_go_through_one_barrier(case):
    loops, block, branch, phases = _KEPT_CASES[case]
    c, code = _compile(_body(loops, block, branch))
    assert "rt_submit_dummy_task" in code, code
    grid = int(np.prod([int(re.search(r"\((\d+)\)", lp).group(1)) for lp in loops[1:]]))
    for n in ([0, 1, 2, 5] if "(n)" in loops[0] else [0]):
        ran = phases(n)
        stats = _run(c, [b for p in ran for b in p], n)
        assert stats.tasks - stats.tasks_dummy == sum(map(len, ran)) + 1
        dot = _executed_graph(c, n)
        edges = _check_phase_groups(dot, [len(p) for p in ran])
        assert edges == _kept_edges([(len(p), len(p) < grid) for p in ran]), n
        assert edges <= (2 * grid + 1) * len(ran) + grid + 1                     # O(N*M) a phase
        assert sorted(_graph(c.task_graph(static=True, n=n))[1]) == sorted(_graph(dot)[1]), n


def test_a_kept_phase_read_otherwise_is_still_located():
    """An iteration keeps the phase before, but the carry is also read by something the barrier
    does not stand in for (here a barrier of the user's): the kept value stays the whole phase
    before, which one slot cannot hold."""
    body = '''            for r in pl.range(2):
                for o in pl.parallel(2):
                    if o > 0:
                        j = pl.system.task_dummy(deps=[prev])
                        out, prev = pl.submit(self.k, data, o * 16, out, deps=[j])'''
    with pytest.raises(PyptoError) as ei:
        pypto.compile(pl.parse_program(_PROGRAM.replace("BODY", body), "nested.py"))
    e = ei.value
    assert e.line == _BODY_LINE + 1 and "carried through this pl.parallel loop as one TaskId per iteration, but an " \
        "iteration ends with an array of 2 TaskIds" in e.message, str(e)
    assert "pl.system.task_dummy(deps=[prev])" in e.help


# ---- AUTO scopes ------------------------------------------------------------------------------
# The same phases outside a manual scope (the default AUTO scope, or a hand-placed pl.scope()):
# deps= edges are linked on top of the automatic ones, and they go through the same barrier
# (they were linked directly: (N*M)^2 explicit edges a phase). The automatic edges stay (each
# task rewrites the rows its counterpart of the phase before wrote).
_AUTO_PROGRAM = _PROGRAM.replace("        with pl.manual_scope():\n", "").replace("            prev = None\nBODY\n            res, last", "        prev = None\nBODY\n        res, last")


def _auto_source(body, scope):
    if scope == "pl.scope()":
        return _PROGRAM.replace("pl.manual_scope()", "pl.scope()").replace("BODY", body)
    return _AUTO_PROGRAM.replace("BODY", "\n".join(line[4:] for line in body.split("\n")))


_AUTO_CASES = {
    "one_level": (["r in pl.range(n)", "o in pl.parallel(4)"], "o", None, lambda n: [[0, 1, 2, 3]] * n),
    "grid_2x3": (["r in pl.range(n)", "o in pl.parallel(2)", "b in pl.parallel(3)"], "o * 3 + b", None,
                 lambda n: [list(range(6))] * n),
    "three_levels": (["r in pl.range(n)", "o in pl.parallel(2)", "m in pl.parallel(3)", "b in pl.parallel(2)"],
                     "(o * 3 + m) * 2 + b", None, lambda n: [list(range(12))] * n),
    "if_around_inner_parallel": (["r in pl.range(n)", "o in pl.parallel(2)", "b in pl.parallel(3)"], "o * 3 + b",
                                 (2, "o > 0"), lambda n: [[3, 4, 5]] * n),
    "if_around_submit": (["r in pl.range(n)", "o in pl.parallel(2)", "b in pl.parallel(3)"], "o * 3 + b",
                         (3, "b > 0"), lambda n: [[1, 2, 4, 5]] * n),
}


@pytest.mark.parametrize("scope", ["default", "pl.scope()"])
@pytest.mark.parametrize("case", sorted(_AUTO_CASES))
def test_auto_scope_phases_go_through_one_barrier(case, scope):
    loops, block, branch, phases = _AUTO_CASES[case]
    c = pypto.compile(pl.parse_program(_auto_source(_body(loops, block, branch), scope), "nested_auto.py"))
    code = next(v for k, v in c.files.items() if k.startswith("orchestration/"))
    assert "PTO2ScopeMode::MANUAL" not in code and "rt_submit_dummy_task" in code, code
    ok, log = compile_cpp(code, "nested_auto_orch")
    assert ok, log
    grid = len(phases(1)[0]) if branch is None else int(np.prod([int(re.search(r"\((\d+)\)", lp).group(1))
                                                                  for lp in loops[1:]]))
    for n in [0, 1, 2, 5]:
        ran = phases(n)
        stats = _run(c, [b for p in ran for b in p], n)
        assert stats.tasks - stats.tasks_dummy == sum(map(len, ran)) + 1
        dot = _executed_graph(c, n)
        # the explicit order is the manual scope's (the automatic edges order more: every task
        # writes `out`, which the tracker sees whole)
        explicit = _check_phase_groups(dot, [len(p) for p in ran], kinds=("explicit",))
        assert explicit == _kept_edges([(len(p), len(p) < grid) for p in ran]), n
        assert sorted(_graph(c.task_graph(static=True, n=n))[1]) == sorted(_graph(dot)[1]), n


# ---- HOST -------------------------------------------------------------------------------------
_T = "pl.Tensor[[16], pl.FP32]"
_HOST = f'''import pypto.language as pl

@pl.program
class H:
    @pl.function(type=pl.FunctionType.InCore)
    def inc(self, c: pl.InOut[{_T}]) -> {_T}:
        c = pl.store(pl.add(pl.load(c, [0], [16]), 1.0), [0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def add(self, a: {_T}, c: pl.Out[{_T}]) -> {_T}:
        c = pl.store(pl.add(pl.load(a, [0], [16]), pl.load(a, [0], [16])), [0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_inc(self, c: pl.InOut[{_T}]) -> {_T}:
        c = self.inc(c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_add(self, a: {_T}, c: pl.Out[{_T}]) -> {_T}:
        c = self.add(a, c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)
    def host_main(self, x: pl.InOut[{_T}], z: pl.Out[{_T}]) -> {_T}:
        prev = None
BODY
        z, last = pl.submit(self.chip_add, x, z, deps=[prev])
        return z
'''


@pytest.mark.parametrize("loops", [("o in pl.parallel(3)", "b in pl.parallel(4)"),
                                   ("o in pl.parallel(0)", "b in pl.parallel(4)"),
                                   ("o in pl.parallel(4)", "b in pl.parallel(2)"),
                                   ("o in pl.parallel(2)", "m in pl.parallel(2)", "b in pl.parallel(3)"),
                                   ("r in pl.range(2)", "o in pl.parallel(2)", "b in pl.parallel(3)")])
def test_host_nested_parallel_carry_waits_on_every_inner_task(loops):
    ind, lines = 8, []
    for loop in loops:
        lines.append(" " * ind + "for " + loop + ":")
        ind += 4
    lines.append(" " * ind + "x, prev = pl.submit(self.chip_inc, x, deps=[prev])")
    src = _HOST.replace("BODY", "\n".join(lines))
    code = host.generate_host_orchestration(pl.parse_program(src, "host_nested.py"), "host_main").code
    ok, log = compile_cpp(code, "host_nested")
    assert ok, log
    prog = host.compile_host(pl.parse_program(src, "host_nested.py"), "host_main", chips=2)
    x, z = np.zeros(16, np.float32), np.zeros(16, np.float32)
    stats = prog(x, z)
    tasks = int(np.prod([int(re.search(r"\((\d+)\)", lp).group(1)) for lp in loops]))
    np.testing.assert_array_equal(x, np.full(16, tasks, np.float32))
    np.testing.assert_array_equal(z, 2 * x)
    recs = stats.task_records
    assert len(recs) == tasks + 1
    last_phase = [r["index"] for r in recs[:-1]]
    if loops[0].startswith("r in pl.range"):
        last_phase = last_phase[len(last_phase) // 2:]
    assert set(recs[-1]["deps"]) >= set(last_phase), (recs[-1], last_phase)


def _host_body(loops, branch=None):
    ind, lines = 8, []
    for i, loop in enumerate(loops + [None]):
        if branch is not None and i == branch[0]:
            lines.append(" " * ind + "if " + branch[1] + ":")
            ind += 4
        if loop is None:
            break
        lines.append(" " * ind + "for " + loop + ":")
        ind += 4
    lines.append(" " * ind + "x, prev = pl.submit(self.chip_inc, x, deps=[prev])")
    return "\n".join(lines)


# (loops, tasks per phase, phases that run, branch)
_HOST_PHASES = {
    "grid_2x3": (["r in pl.range(3)", "o in pl.parallel(2)", "b in pl.parallel(3)"], 6, 3, None),
    "three_levels": (["r in pl.range(2)", "o in pl.parallel(2)", "m in pl.parallel(2)", "b in pl.parallel(3)"], 12, 2,
                     None),
    "outer_parallel_1": (["r in pl.range(3)", "o in pl.parallel(1)", "b in pl.parallel(4)"], 4, 3, None),
    "phase_skips_grid": (["r in pl.range(3)", "o in pl.parallel(2)", "b in pl.parallel(3)"], 6, 2, (1, "r != 1")),
    "one_level": (["r in pl.range(3)", "o in pl.parallel(4)"], 4, 3, None),
}


@pytest.mark.parametrize("case", sorted(_HOST_PHASES))
def test_host_grid_phases_link_through_one_barrier(case):
    """HOST: the same barrier per phase (submit_barrier); wait_edges counts every valid wait of
    the run (not timing-dependent at L3), the static graph shows the phase structure."""
    loops, grid, phases, branch = _HOST_PHASES[case]
    src = _HOST.replace("BODY", _host_body(loops, branch))
    code = host.generate_host_orchestration(pl.parse_program(src, "host_phases.py"), "host_main").code
    assert "submit_barrier" in code, code
    ok, log = compile_cpp(code, "host_phases")
    assert ok, log
    prog = host.compile_host(pl.parse_program(src, "host_phases.py"), "host_main", chips=2)
    x, z = np.zeros(16, np.float32), np.zeros(16, np.float32)
    stats = prog(x, z)
    np.testing.assert_array_equal(x, np.full(16, phases * grid, np.float32))
    np.testing.assert_array_equal(z, 2 * x)
    assert stats.tasks_executed == phases * grid + 1 and stats.barriers == phases - 1
    assert stats.wait_edges == _fenced(phases, grid)
    # the phase structure, and the static graph's waits are the run's (with three levels it
    # linked the last task to every phase's slots)
    assert _check_phases(prog.task_graph(static=True), phases, grid, task="chip_inc", last="chip_add") == \
        stats.wait_edges


# (loops, branch, tasks of each phase, tasks per phase if none skipped)
_HOST_KEPT = {
    "if_around_inner_parallel": (["r in pl.range(3)", "o in pl.parallel(2)", "b in pl.parallel(3)"], (2, "o > 0"),
                                 [3, 3, 3], 6),
    "if_around_submit": (["r in pl.range(3)", "o in pl.parallel(2)", "b in pl.parallel(3)"], (3, "b > 0"),
                         [4, 4, 4], 6),
    "if_around_submit_one_level": (["r in pl.range(3)", "o in pl.parallel(4)"], (2, "o > 0"), [3, 3, 3], 4),
    "three_levels_if_around_inner": (["r in pl.range(2)", "o in pl.parallel(2)", "m in pl.parallel(2)",
                                      "b in pl.parallel(3)"], (3, "m == o"), [6, 6], 12),
}


@pytest.mark.parametrize("case", sorted(_HOST_KEPT))
def test_host_phases_an_iteration_keeps_go_through_one_barrier(case):
    """HOST: the kept phase is the submit_barrier too; the run's waits are the model's, and the
    static graph's waits the run's."""
    loops, branch, phases, grid = _HOST_KEPT[case]
    src = _HOST.replace("BODY", _host_body(loops, branch))
    code = host.generate_host_orchestration(pl.parse_program(src, "host_kept.py"), "host_main").code
    assert "submit_barrier" in code, code
    ok, log = compile_cpp(code, "host_kept")
    assert ok, log
    prog = host.compile_host(pl.parse_program(src, "host_kept.py"), "host_main", chips=2)
    x, z = np.zeros(16, np.float32), np.zeros(16, np.float32)
    stats = prog(x, z)
    np.testing.assert_array_equal(x, np.full(16, sum(phases), np.float32))
    np.testing.assert_array_equal(z, 2 * x)
    assert stats.tasks_executed == sum(phases) + 1 and stats.barriers == len(phases) - 1
    assert stats.wait_edges == _kept_edges([(t, t < grid) for t in phases])
    assert _check_phase_groups(prog.task_graph(static=True), phases, task="chip_inc", last="chip_add") == \
        stats.wait_edges


# ---- phases of parallel chains: range > parallel(N) > range(K): submit ----------------------
# Each lane of a phase is a chain of K tasks; its first task waits on the whole phase before (the
# lanes' last tasks), which the chain's one-TaskId carry cannot start from (refused before: "is a
# scalar but starts from an array"). The chain starts from the phase's barrier instead.

def _check_lane_phases(dot, phases, lanes, chain):
    """Every task of a phase after every task of the phase before; inside a phase, each lane a
    chain (each task after the one before it in its lane) and no lane after another; the copy
    after the last phase. Returns the edge count."""
    nodes, edges = _graph(dot)
    inner = [i for i, kind, lbl in nodes if kind == "task" and lbl == "k"]
    copy = [i for i, kind, lbl in nodes if kind == "task" and lbl == "copy"]
    size = lanes * chain
    assert len(inner) == phases * size and len(copy) == 1, nodes
    anc = _ancestors(edges)
    for p in range(phases):
        group = inner[p * size:(p + 1) * size]
        for lane in range(lanes):
            mine = group[lane * chain:(lane + 1) * chain]
            others = set(group) - set(mine)
            for j, t in enumerate(mine):
                assert set(mine[:j]) <= anc(t) and not set(mine[j:]) & anc(t) and not others & anc(t), (p, lane, j)
                if p:
                    assert set(inner[(p - 1) * size:p * size]) <= anc(t), (p, lane, j)
    if phases:
        assert set(inner[(phases - 1) * size:]) <= anc(copy[0])
    return len(edges)


@pytest.mark.parametrize("lanes,chain", [(2, 3), (3, 1), (1, 4)])
def test_phases_of_parallel_chains_go_through_one_barrier(lanes, chain):
    body = _body(["r in pl.range(n)", "o in pl.parallel(%d)" % lanes, "b in pl.range(%d)" % chain],
                 "o * %d + b" % chain)
    c, code = _compile(body)
    assert "rt_submit_dummy_task" in code, code
    for n in (0, 1, 2, 5):
        _run(c, list(range(lanes * chain)) * n, n)
        dot = _executed_graph(c, n)
        edges = _check_lane_phases(dot, n, lanes, chain)
        # per phase the chains' edges; from the second on, the lanes' ends into the barrier and
        # the barrier into each lane's first task; the copy after the last phase's lane ends
        assert edges == (n * lanes * (chain - 1) + (n - 1) * 2 * lanes + lanes if n else 0), (n, edges)
        assert sorted(_graph(c.task_graph(static=True, n=n))[1]) == sorted(_graph(dot)[1]), n


def test_host_phases_of_parallel_chains_go_through_one_barrier():
    src = _HOST.replace("BODY", _host_body(["r in pl.range(3)", "o in pl.parallel(2)", "b in pl.range(3)"]))
    code = host.generate_host_orchestration(pl.parse_program(src, "host_chains.py"), "host_main").code
    assert "submit_barrier" in code, code
    ok, log = compile_cpp(code, "host_chains")
    assert ok, log
    prog = host.compile_host(pl.parse_program(src, "host_chains.py"), "host_main", chips=2)
    x, z = np.zeros(16, np.float32), np.zeros(16, np.float32)
    stats = prog(x, z)
    np.testing.assert_array_equal(x, np.full(16, 18, np.float32))
    np.testing.assert_array_equal(z, 2 * x)
    # 3 phases x 2 lanes x 2 chain edges, 2 barriers x (2 in + 2 out), the last task after 2 lane ends
    assert stats.barriers == 2 and stats.wait_edges == 12 + 8 + 2
    nodes, edges = _graph(prog.task_graph(static=True))
    assert len(edges) == stats.wait_edges


def test_a_scalar_carry_from_an_array_is_located_with_the_join_that_compiles():
    """An inner pl.parallel(0) keeps the phase before (N slots) in a one-TaskId carry: refused at
    the loop; the help's join compiles and runs."""
    loops = ["r in pl.range(n)", "o in pl.parallel(2)", "b in pl.parallel(0)"]
    with pytest.raises(PyptoError) as ei:
        _compile(_body(loops, "b"))
    assert ei.value.line == _BODY_LINE + 2 and "is a scalar but starts from an array of TaskIds" in ei.value.message
    assert "prev = pl.system.task_dummy(deps=[prev])" in ei.value.help, ei.value.help
    inner = " " * 20 + "for b in"
    joined = _body(loops, "b").replace(inner, " " * 20 + "prev = pl.system.task_dummy(deps=[prev])\n" + inner)
    c, _ = _compile(joined)
    _run(c, [], 3)
