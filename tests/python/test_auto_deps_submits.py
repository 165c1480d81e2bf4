"""analyze_auto_scopes_for_deps=True on regions with the user's own `pl.submit` (and the submits
`pl.spmd` / `with pl.at(...) as tid` make), on loops that never run, and on kernels that load an
input only sometimes.

- A pl.submit is analysed like a kernel call: it keeps its deps=, core_num and TaskId, and the
  compiler's edges are merged after deps=. Its TaskId may be named in deps= (a TaskId carried
  through a loop, an if result or an array still falls back). allow_early_resolve and
  sync_start are kept (they hold for every edge of the task, tracked or compiled).
- A task in a loop with a literal trip count of 0 never runs: no hazard, no edge (it used to ask
  for a fan-in of 0 slots: an internal error, orch_flow_fuzz seed 423).
- An In argument is demoted to NoDep (untracked) only when its kernel surely reports what it
  reads to the race checker (a top-level load): an untracked argument the kernel reported
  nothing for counts as read and written, so a load in an `if` that did not run showed as an
  unordered write (at_flow_fuzz seeds 13, 49, ...).
"""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import codegen

ON = {"analyze_auto_scopes_for_deps": True}


@pl.program
class Submits:
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
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX],
             t: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t, tid = pl.submit(self.add1, x, t)
        for i in pl.range(n):
            out, tid2 = pl.submit(self.acc, t, out, deps=[tid])
        return out


@pl.program
class ZeroTripFanIn:
    @pl.function(type=pl.FunctionType.InCore)
    def add1(self, a: pl.Tensor[[16, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.adds(pl.load(a, [0, 0], [16, 16]), 1.0), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], t: pl.InOut[pl.Tensor[[64, 16], pl.FP32]],
             y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        for i in pl.range(0):
            ti = pl.slice(t, [16, 16], [i * 16, 0])
            ti = self.add1(x, ti)
        y = self.add1(pl.slice(t, [16, 16], [16, 0]), y)
        return y


@pl.program
class SometimesLoads:
    """`pick` loads `b` only when s > 0; `a` always. The hazards on both are edges, but only `a`
    may go untracked."""

    @pl.function(type=pl.FunctionType.InCore)
    def pick(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.INDEX],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        v = pl.load(a, [0, 0], [16, 16])
        if s > 0:
            w = pl.add(v, pl.load(b, [0, 0], [16, 16]))
        else:
            w = v
        c = pl.store(w, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def add1(self, a: pl.Tensor[[16, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.adds(pl.load(a, [0, 0], [16, 16]), 1.0), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.INDEX],
             a: pl.Out[pl.Tensor[[16, 16], pl.FP32]], b: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]], d: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             e: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.scope():   # keeps the region AUTO, so covered arguments are demoted
            a = self.add1(x, a)
            b = self.add1(x, b)
            c = self.pick(a, b, s, c)
            e = self.add1(b, e)   # another reader of b: nothing orders it with pick's read
            b = self.add1(a, b)
        d = self.add1(c, d)
        return d


def _prepared(program):
    return codegen.run_pipeline(program, **ON)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_user_submits_are_derived_and_keep_their_deps(monkeypatch, n):
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    prepared = _prepared(Submits)
    verdict = prepared.get("main").attrs["auto_deps"]
    assert verdict.startswith("manual: 2 tasks"), verdict
    code = codegen.generate_orchestration(prepared, "main", run_passes=False).code
    assert "PTO2ScopeMode::MANUAL" in code and "= tid;" in code, code   # the user's deps=[tid] is kept
    prog = pypto.compile(Submits, **ON)
    x = np.random.default_rng(8).random((16, 16), dtype=np.float32)
    t = np.zeros((16, 16), np.float32)
    out = np.ones((16, 16), np.float32)
    stats = prog(x, n, t, out, race_check="error", aiv_workers=2)
    assert stats.races == 0
    np.testing.assert_allclose(out, 1 + n * (x + 1.0), rtol=1e-5)


def test_a_task_in_a_loop_that_never_runs_has_no_hazards():
    verdict = _prepared(ZeroTripFanIn).get("main").attrs["auto_deps"]
    assert verdict == "manual: 2 tasks, 0 edges", verdict
    prog = pypto.compile(ZeroTripFanIn, **ON)
    x = np.ones((16, 16), np.float32)
    t = np.full((64, 16), 5, np.float32)
    y = np.zeros((16, 16), np.float32)
    stats = prog(x, t, y, race_check="error", aiv_workers=2)
    assert stats.races == 0
    np.testing.assert_array_equal(y, np.full((16, 16), 6, np.float32))
    np.testing.assert_array_equal(t, np.full((64, 16), 5, np.float32))


def test_an_input_loaded_only_sometimes_stays_tracked():
    code = codegen.generate_orchestration(_prepared(SometimesLoads), "main", run_passes=False).code
    pick = code[code.index("// Task 2: pick"):code.index("// Task 3")]
    assert "add_no_dep(ext_a)" in pick and "add_input(ext_b)" in pick, pick


@pytest.mark.parametrize("s", [0, 1])
def test_an_input_loaded_only_sometimes_is_race_free(monkeypatch, s):
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    prog = pypto.compile(SometimesLoads, **ON)
    x = np.random.default_rng(9).random((16, 16), dtype=np.float32)
    a, b, c, d, e = (np.zeros((16, 16), np.float32) for _ in range(5))
    stats = prog(x, s, a, b, c, d, e, race_check="error", aiv_workers=2)
    assert stats.races == 0
    want_c = (x + 1) + (x + 1 if s > 0 else 0)
    np.testing.assert_allclose(d, want_c + 1, rtol=1e-5)
    np.testing.assert_allclose(b, x + 2, rtol=1e-5)
    np.testing.assert_allclose(e, x + 2, rtol=1e-5)


@pl.program
class RuntimeOutputs:
    """pl.submit with its Out argument omitted: the runtime allocates it at submission. The
    analysis takes it as new storage there, like a pl.create_tensor (it used to fall back: "a
    tuple element the analysis cannot trace to a tensor argument"): `y` of each iteration is
    read by `acc` (an edge nobody wrote), `b` is handed to the next iteration by a carry."""

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
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX],
             out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        tmp, t0 = pl.submit(self.add1, x)
        a = tmp
        for i in pl.range(n):
            y, t1 = pl.submit(self.add1, tmp)
            out, t2 = pl.submit(self.acc, y, out)
            b, t3 = pl.submit(self.add1, a)
            a = b
        out, t4 = pl.submit(self.acc, a, out)
        return out


@pl.program
class RuntimeOutputWithDeps:
    """manual_dependencies.zh.txt example 2: the consumer already names its producer in deps=;
    the compiler adds no second edge to the same task."""

    @pl.function(type=pl.FunctionType.InCore)
    def add1(self, a: pl.Tensor[[16, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.adds(pl.load(a, [0, 0], [16, 16]), 1.0), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        tmp, prep = pl.submit(self.add1, x)
        out, _ = pl.submit(self.add1, tmp, out, deps=[prep])
        return out


@pytest.mark.parametrize("n", [0, 1, 4])
def test_runtime_allocated_outputs_are_derived_and_match_numpy_race_checked(monkeypatch, n):
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    verdict = _prepared(RuntimeOutputs).get("main").attrs["auto_deps"]
    assert verdict.startswith("manual per loop iteration"), verdict
    prog = pypto.compile(RuntimeOutputs, **ON)
    x = np.random.default_rng(10).random((16, 16), dtype=np.float32)
    out = np.ones((16, 16), np.float32)
    stats = prog(x, n, out, race_check="error", aiv_workers=2)
    assert stats.races == 0
    # n times y = x + 2, then a = x + 1 + n
    np.testing.assert_allclose(out, 1 + n * (x + 2) + (x + 1 + n), rtol=1e-5)


def test_a_deps_entry_naming_the_producer_is_not_repeated_by_a_compiler_edge(monkeypatch):
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    prepared = _prepared(RuntimeOutputWithDeps)
    assert prepared.get("main").attrs["auto_deps"] == "manual: 2 tasks, 0 edges"
    code = codegen.generate_orchestration(prepared, "main", run_passes=False).code
    consumer = code[code.index("// Task 1"):]
    assert consumer.count("_deps_count++]") == 1 and "= prep;" in consumer, consumer
    x = np.random.default_rng(11).random((16, 16), dtype=np.float32)
    out = np.zeros((16, 16), np.float32)
    stats = pypto.compile(RuntimeOutputWithDeps, **ON)(x, out, race_check="error", aiv_workers=2)
    assert stats.races == 0
    np.testing.assert_allclose(out, x + 2, rtol=1e-6)
