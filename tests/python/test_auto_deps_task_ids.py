"""analyze_auto_scopes_for_deps=True on regions whose own TaskIds are values: a `prev = None`
carry through a loop, a TaskId an if merges, a `pl.system.task_dummy` barrier, a TaskId
carried through a `pl.parallel` (an array of ids, one per iteration), and TaskId arrays. The analysis leaves them
alone: the user's deps= stay extra edges on top of the compiler's, whatever TaskId they name.
These used to make the whole function fall back ("TaskId loop carries in the region", "op
system.task_invalid in the region", "arrays in the region", ...), TaskId arrays
(`pl.array.create`) included.
"""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import codegen

ON = {"analyze_auto_scopes_for_deps": True}


@pl.program
class CarriedIds:
    """Each acc names the previous iteration's last task through `prev` (the acc, or the add1
    of an even iteration: an if merges it); the compiler adds what deps= leaves out (add1
    reads `out`, the next acc overwrites it; add1 of iterations i and i + 4 write one slice)."""

    @pl.function(type=pl.FunctionType.InCore)
    def acc(self, a: pl.Tensor[[16, 16], pl.FP32],
            c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(c, [0, 0], [16, 16])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def add1(self, a: pl.Tensor[[16, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.adds(pl.load(a, [0, 0], [16, 16]), 1.0), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX],
             out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
             y: pl.Out[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        prev = None
        for i in pl.range(n):
            out, prev = pl.submit(self.acc, x, out, deps=[prev])
            if i % 2 == 0:
                ys = pl.tensor.slice(y, [16, 16], [(i % 4) * 16, 0])
                ys, prev = pl.submit(self.add1, out, ys)
        out = self.acc(x, out)
        return out


@pl.program
class DummyBarrier:
    """Two producers joined by a task_dummy that the consumers name; the consumers also read
    what each producer wrote (compiler edges to the same tasks)."""

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
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
             out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y0 = pl.tensor.slice(y, [16, 16], [0, 0])
        y0, a = pl.submit(self.add1, x, y0)
        y1 = pl.tensor.slice(y, [16, 16], [16, 0])
        y1, b = pl.submit(self.add1, y0, y1)
        barrier = pl.system.task_dummy(deps=[a, b])
        out, c = pl.submit(self.acc, y0, out, deps=[barrier])
        out, _ = pl.submit(self.acc, y1, out, deps=[c])
        return out


@pl.program
class ParallelIds:
    """A TaskId carried through a pl.parallel is one id per iteration (an array carry); the
    consumer after the loop names them all and reads every slice."""

    @pl.function(type=pl.FunctionType.InCore)
    def add1(self, a: pl.Tensor[[16, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.adds(pl.load(a, [0, 0], [16, 16]), 1.0), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def total(self, a: pl.Tensor[[64, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        s = pl.add(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(a, [16, 0], [16, 16])),
                   pl.add(pl.load(a, [32, 0], [16, 16]), pl.load(a, [48, 0], [16, 16])))
        c = pl.store(s, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[64, 16], pl.FP32]],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        prev = None
        for i in pl.parallel(4):
            ys = pl.tensor.slice(y, [16, 16], [i * 16, 0])
            ys, prev = pl.submit(self.add1, x, ys, deps=[prev])
        out, _ = pl.submit(self.total, y, out, deps=[prev])
        return out


def _verdict(program):
    return codegen.run_pipeline(program, **ON).get("main").attrs["auto_deps"]


def _run_both(program, *args):
    """Runs the program compiled with and without the analysis (race-checked), returns both
    runs' arrays."""
    results = []
    for opts in ({}, ON):
        arrays = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        stats = pypto.compile(program, **opts)(*arrays, race_check="error", aiv_workers=2)
        assert stats.races == 0
        results.append([a for a in arrays if isinstance(a, np.ndarray)])
    return results


@pytest.mark.parametrize("n", [0, 1, 3, 6])
def test_a_carried_and_merged_task_id_is_derived_and_matches_numpy(monkeypatch, n):
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    assert _verdict(CarriedIds).startswith("manual: 3 tasks"), _verdict(CarriedIds)
    x = np.random.default_rng(n).random((16, 16), dtype=np.float32)
    plain, derived = _run_both(CarriedIds, x, n, np.ones((16, 16), np.float32), np.zeros((64, 16), np.float32))
    o, y = np.ones((16, 16)), np.zeros((64, 16))
    for i in range(n):
        o = o + x
        if i % 2 == 0:
            y[(i % 4) * 16:(i % 4) * 16 + 16] = o + 1
    for got in (plain, derived):
        np.testing.assert_allclose(got[1], o + x, rtol=1e-5)
        np.testing.assert_allclose(got[2], y, rtol=1e-5)


def test_a_task_dummy_barrier_is_derived_and_matches_numpy(monkeypatch):
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    assert _verdict(DummyBarrier).startswith("manual: 4 tasks"), _verdict(DummyBarrier)
    x = np.random.default_rng(4).random((16, 16), dtype=np.float32)
    for got in _run_both(DummyBarrier, x, np.zeros((32, 16), np.float32), np.ones((16, 16), np.float32)):
        np.testing.assert_allclose(got[1], np.concatenate([x + 1, x + 2]), rtol=1e-6)
        np.testing.assert_allclose(got[2], 1 + (x + 1) + (x + 2), rtol=1e-5)


def test_a_task_id_carried_through_a_parallel_loop_is_derived_and_matches_numpy(monkeypatch):
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    verdict = _verdict(ParallelIds)
    assert not verdict.startswith("fallback"), verdict
    x = np.random.default_rng(5).random((16, 16), dtype=np.float32)
    for got in _run_both(ParallelIds, x, np.zeros((64, 16), np.float32), np.zeros((16, 16), np.float32)):
        np.testing.assert_allclose(got[1], np.tile(x + 1, (4, 1)), rtol=1e-6)
        np.testing.assert_allclose(got[2], 4 * (x + 1), rtol=1e-5)


@pl.program
class ArrayFanIn:
    """The spec's task_dummy example (manual_dependencies.zh.txt, mechanism B) without its
    pl.manual_scope(): TaskId arrays (create, slot write, slot read, whole-array deps=) are the
    user's values like any other TaskId."""

    @pl.function(type=pl.FunctionType.InCore)
    def part(self, x: pl.Tensor[[64, 16], pl.FP32], k: pl.Scalar[pl.INDEX],
             out: pl.InOut[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
        out = pl.store(pl.exp(pl.load(x, [k * 16, 0], [16, 16])), [k * 16, 0], out)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def first_rows(self, x: pl.Tensor[[64, 16], pl.FP32],
                   out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        out = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 16], pl.FP32], parts: pl.InOut[pl.Tensor[[64, 16], pl.FP32]],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        tids = pl.array.create(4, pl.TASK_ID)
        for k in pl.range(4):
            parts, tid = pl.submit(self.part, x, k, parts, deps=[None])
            tids[k] = tid
        first = tids[0]
        barrier = pl.system.task_dummy(deps=[tids, first])
        out, _ = pl.submit(self.first_rows, parts, out, deps=[barrier, tids[1]])
        return out


def test_task_id_arrays_are_derived_and_match_numpy(monkeypatch):
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    verdict = _verdict(ArrayFanIn)
    assert not verdict.startswith("fallback"), verdict
    x = np.random.default_rng(6).uniform(-1, 1, (64, 16)).astype(np.float32)
    for got in _run_both(ArrayFanIn, x, np.zeros((64, 16), np.float32), np.zeros((16, 16), np.float32)):
        np.testing.assert_allclose(got[1], np.exp(x), rtol=1e-5)
        np.testing.assert_allclose(got[2], np.exp(x[:16]), rtol=1e-5)
