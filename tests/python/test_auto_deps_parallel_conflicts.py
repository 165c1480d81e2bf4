"""analyze_auto_scopes_for_deps=True on pl.parallel loops whose iterations conflict (a
reduction into one tensor, a tile two iterations write). The runtime's tracking orders such
iterations in submission order, as for a pl.range: the orchestration runs either loop in order.
The analysis turns such a loop into a pl.range so its carried hazards become edges (a TaskId
carried through a pl.parallel is one id per iteration and cannot name the previous iteration's);
the iterations' other tasks stay unordered. A loop through which the user carries a TaskId keeps
its kind (the carry's per-iteration meaning would change) and its hazards stay tracked.
"""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import codegen

ON = {"analyze_auto_scopes_for_deps": True}


@pl.program
class ParallelReduce:
    """Each iteration makes its own tile (independent) and accumulates it into `out` (conflicts
    with every other iteration)."""

    @pl.function(type=pl.FunctionType.InCore)
    def add1(self, a: pl.Tensor[[16, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.adds(pl.load(a, [0, 0], [16, 16]), 1.0), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def acc(self, a: pl.Tensor[[16, 16], pl.FP32],
            c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(c, [0, 0], [16, 16])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 16], pl.FP32], n: pl.Scalar[pl.INDEX],
             out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        for i in pl.parallel(n):
            xs = pl.tensor.slice(x, [16, 16], [(i % 4) * 16, 0])
            t = pl.create_tensor([16, 16], dtype=pl.FP32)
            t = self.add1(xs, t)
            out = self.acc(t, out)
        return out


@pl.program
class ParallelReduceWithUserIds:
    """The same reduction, and the user carries a TaskId through the loop."""

    @pl.function(type=pl.FunctionType.InCore)
    def acc(self, a: pl.Tensor[[16, 16], pl.FP32],
            c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(c, [0, 0], [16, 16])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 16], pl.FP32],
             out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        prev = None
        for i in pl.parallel(4):
            xs = pl.tensor.slice(x, [16, 16], [i * 16, 0])
            out, prev = pl.submit(self.acc, xs, out, deps=[None])
        x0 = pl.tensor.slice(x, [16, 16], [0, 0])
        out, _ = pl.submit(self.acc, x0, out, deps=[prev])
        return out


def _prepared(program):
    return codegen.run_pipeline(program, **ON)


def test_a_conflicting_parallel_loop_runs_in_order_with_edges():
    verdict = _prepared(ParallelReduce).get("main").attrs["auto_deps"]
    assert verdict.startswith("manual per loop iteration") and \
        verdict.endswith("(1 pl.parallel loop run in order: iterations conflict)"), verdict
    code = codegen.generate_orchestration(ParallelReduce, "main", **ON).code
    acc = code[code.index("// Task 1: acc"):]
    # The acc of iteration i names the acc of iteration i - 1 (a scalar TaskId carry).
    assert "acc_carry" in acc and "PTO2ScopeMode::MANUAL" in code, code


@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_a_conflicting_parallel_loop_matches_numpy_race_checked(monkeypatch, n):
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    x = np.random.default_rng(n).random((64, 16), dtype=np.float32)
    out = np.ones((16, 16), np.float32)
    stats = pypto.compile(ParallelReduce, **ON)(x, n, out, race_check="error", aiv_workers=2)
    assert stats.races == 0
    want = np.ones((16, 16), np.float64)
    for i in range(n):
        want += x[(i % 4) * 16:(i % 4) * 16 + 16] + 1.0
    np.testing.assert_allclose(out, want, rtol=1e-5)


def test_a_parallel_loop_carrying_a_user_task_id_keeps_its_kind(monkeypatch):
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    verdict = _prepared(ParallelReduceWithUserIds).get("main").attrs["auto_deps"]
    assert verdict.startswith("auto: ") and "run in order" not in verdict, verdict
    x = np.random.default_rng(3).random((64, 16), dtype=np.float32)
    out = np.ones((16, 16), np.float32)
    stats = pypto.compile(ParallelReduceWithUserIds, **ON)(x, out, race_check="error", aiv_workers=2)
    assert stats.races == 0
    np.testing.assert_allclose(out, 1 + x.reshape(4, 16, 16).sum(0) + x[:16], rtol=1e-5)
