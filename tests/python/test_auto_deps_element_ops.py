"""analyze_auto_scopes_for_deps=True on regions with `pl.assemble` and `pl.tensor.write` in the
orchestration function. Both used to make the whole function fall back to runtime tracking.

- An assemble is in place by then (LowerTensorAssemble copies a source that is not the target's
  view into that view with a task): its result names the target, so the analysis follows it like
  a view and orders the copy tasks like any other.
- A tensor.write is the orchestrator's own synchronous write: it waits for the element's tracked
  producers and readers and for every live task with an untracked write, and the tasks after it
  are submitted after it. A task that writes no tensor is not waited for once its reads go
  untracked, so a region where such a task reads a tensor a tensor.write writes falls back.
"""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import codegen

ON = {"analyze_auto_scopes_for_deps": True}


@pl.program
class AssembleRows:
    """Each iteration computes rows [16 i, 16 i + 16) of `out` into a temporary and assembles them
    in; then the whole of `out` is scaled (it must wait for every row's copy)."""

    @pl.function(type=pl.FunctionType.InCore)
    def add1(self, a: pl.Tensor[[16, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.adds(pl.load(a, [0, 0], [16, 16]), 1.0), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def double(self, c: pl.InOut[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
        v = pl.load(c, [0, 0], [64, 16])
        c = pl.store(pl.add(v, v), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 16], pl.FP32],
             out: pl.InOut[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
        for i in pl.range(4):
            part = pl.create_tensor([16, 16], dtype=pl.FP32)
            part = self.add1(pl.slice(x, [16, 16], [i * 16, 0]), part)
            out = pl.assemble(out, part, [i * 16, 0])
        out = self.double(out)
        return out


@pl.program
class WriteBetweenTasks:
    """A task writes `out`, the orchestrator reads one element and writes another, and a second
    task reads and rewrites `out`."""

    @pl.function(type=pl.FunctionType.InCore)
    def add1(self, a: pl.Tensor[[16, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.adds(pl.load(a, [0, 0], [16, 16]), 1.0), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def double(self, c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        v = pl.load(c, [0, 0], [16, 16])
        c = pl.store(pl.add(v, v), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX],
             out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        for i in pl.range(n):
            out = self.add1(x, out)
            v = pl.tensor.read(out, [0, 0])
            out = pl.tensor.write(out, [1, 1], v * 10.0)
            out = self.double(out)
        return out


@pl.program
class WriteWithAReadOnlyTask:
    """`peek` reads `x` and writes no tensor: the write to `x` after it would not wait for it."""

    @pl.function(type=pl.FunctionType.InCore)
    def peek(self, a: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32]):
        t = pl.load(a, [0, 0], [16, 16])

    @pl.function(type=pl.FunctionType.InCore)
    def add1(self, a: pl.Tensor[[16, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.adds(pl.load(a, [0, 0], [16, 16]), 1.0), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        self.peek(x, 1.0)
        x = pl.tensor.write(x, [0, 0], 3.0)
        out = self.add1(x, out)
        return out


def _verdict(program):
    return codegen.run_pipeline(program, **ON).get("main").attrs["auto_deps"]


def test_assembled_rows_are_derived_and_match_numpy_race_checked(monkeypatch):
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    verdict = _verdict(AssembleRows)
    assert verdict.startswith("manual per loop iteration"), verdict
    prog = pypto.compile(AssembleRows, **ON)
    x = np.random.default_rng(3).random((64, 16), dtype=np.float32)
    out = np.full((64, 16), -7, np.float32)
    stats = prog(x, out, race_check="error", aiv_workers=2)
    assert stats.races == 0
    np.testing.assert_allclose(out, 2 * (x + 1), rtol=1e-6)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_element_writes_between_tasks_are_derived_and_match_numpy_race_checked(monkeypatch, n):
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    verdict = _verdict(WriteBetweenTasks)
    assert verdict.startswith("manual: "), verdict
    prog = pypto.compile(WriteBetweenTasks, **ON)
    x = np.random.default_rng(4).random((16, 16), dtype=np.float32)
    out = np.zeros((16, 16), np.float32)
    stats = prog(x, n, out, race_check="error", aiv_workers=2)
    assert stats.races == 0
    want = np.zeros((16, 16), np.float32)
    for _ in range(n):
        want = x + 1
        want[1, 1] = want[0, 0] * 10
        want = 2 * want
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_an_element_write_to_what_a_task_writing_no_tensor_reads_falls_back():
    verdict = _verdict(WriteWithAReadOnlyTask)
    assert verdict.startswith("fallback: a tensor.write of a tensor that a task writing no tensor reads ('peek', line "), \
        verdict
    prog = pypto.compile(WriteWithAReadOnlyTask, **ON)
    x = np.ones((16, 16), np.float32)
    out = np.zeros((16, 16), np.float32)
    stats = prog(x, out, race_check="error", aiv_workers=2)
    assert stats.races == 0
    want = np.full((16, 16), 2, np.float32)
    want[0, 0] = 4
    np.testing.assert_array_equal(out, want)


@pl.program
class WriteBesideAReadOnlyTask:
    """`peek` writes no tensor but reads `y`, which no tensor.write touches: derived."""

    @pl.function(type=pl.FunctionType.InCore)
    def peek(self, a: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32]):
        t = pl.load(a, [0, 0], [16, 16])

    @pl.function(type=pl.FunctionType.InCore)
    def add1(self, a: pl.Tensor[[16, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.adds(pl.load(a, [0, 0], [16, 16]), 1.0), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.InOut[pl.Tensor[[16, 16], pl.FP32]], y: pl.Tensor[[16, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        self.peek(y, 1.0)
        x = pl.tensor.write(x, [0, 0], 3.0)
        out = self.add1(x, out)
        return out


def test_an_element_write_beside_a_task_writing_no_tensor_on_another_tensor_is_derived():
    verdict = _verdict(WriteBesideAReadOnlyTask)
    assert verdict.startswith("manual: "), verdict
    prog = pypto.compile(WriteBesideAReadOnlyTask, **ON)
    x = np.ones((16, 16), np.float32)
    y = np.ones((16, 16), np.float32)
    out = np.zeros((16, 16), np.float32)
    stats = prog(x, y, out, race_check="error", aiv_workers=2)
    assert stats.races == 0
    want = np.full((16, 16), 2, np.float32)
    want[0, 0] = 4
    np.testing.assert_array_equal(out, want)


@pl.program
class AssertOnResult:
    """An assert between two tasks whose condition reads an element the first task wrote: it
    touches no tensor itself, and its tensor.read waits for that task (used to fall back: "a
    statement with effects the analysis does not model")."""

    @pl.function(type=pl.FunctionType.InCore)
    def add1(self, a: pl.Tensor[[16, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.adds(pl.load(a, [0, 0], [16, 16]), 1.0), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], limit: pl.Scalar[pl.FP32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        assert limit > 0.0, "the limit must be positive"
        t = pl.create_tensor([16, 16], dtype=pl.FP32)
        t = self.add1(x, t)
        assert pl.tensor.read(t, [0, 0]) < limit, "the first element went over the limit"
        out = self.add1(t, out)
        return out


def test_an_assert_reading_a_task_result_is_derived_and_still_checks(monkeypatch):
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    assert _verdict(AssertOnResult).startswith("manual: 2 tasks, 1 edges"), _verdict(AssertOnResult)
    prog = pypto.compile(AssertOnResult, **ON)
    x = np.random.default_rng(3).random((16, 16), dtype=np.float32)
    out = np.zeros((16, 16), np.float32)
    stats = prog(x, 100.0, out, race_check="error", aiv_workers=2)
    assert stats.races == 0
    np.testing.assert_allclose(out, x + 2.0, rtol=1e-6)
    # The read sees the task's result (x[0, 0] + 1 > 1 >= limit), not the uninitialised storage.
    x[0, 0] = 0.5
    with pytest.raises(Exception, match="the first element went over the limit"):
        prog(x, 1.25, np.zeros((16, 16), np.float32), aiv_workers=2)
    with pytest.raises(Exception, match="the limit must be positive"):
        prog(x, -1.0, np.zeros((16, 16), np.float32), aiv_workers=2)
