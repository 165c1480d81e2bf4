"""analyze_auto_scopes_for_deps=True on regions with hand-placed `with pl.scope():` blocks.

orchestration_codegen.txt: "A hand-placed pl.scope() always keeps manual=false, and has its
partial edges stripped if analysis falls back." The region stays AUTO; an edge is built where the
consumer can name the producer's TaskId (its C++ variable lives in the producer's innermost
PTO2_SCOPE block: the consumer, and any loop carrying the id, must be inside that block); every
other hazard stays with the runtime's tracking, and an argument is demoted only when every hazard
through it is an edge. Until session 50 such regions fell back whole.
"""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import codegen

ON = {"analyze_auto_scopes_for_deps": True}


@pl.program
class ScopeInLoop:
    """Each iteration's temporaries live in its own hand-placed scope; `out` is accumulated across
    iterations from inside the scope (a carried hazard the scope hides from the carry)."""

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
        for i in pl.range(n):
            with pl.scope():
                t = pl.create_tensor([16, 16], dtype=pl.FP32)
                t = self.add1(pl.slice(x, [16, 16], [(i % 4) * 16, 0]), t)
                out = self.acc(t, out)
            out = self.acc(pl.slice(x, [16, 16], [0, 0]), out)
        return out


@pl.program
class LoopInScope:
    """A loop, its fan-in and a task in a nested scope inside one hand-placed scope (edges), and a
    reader after the scope (tracked)."""

    @pl.function(type=pl.FunctionType.InCore)
    def acc(self, a: pl.Tensor[[16, 16], pl.FP32],
            c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(c, [0, 0], [16, 16])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, a: pl.Tensor[[16, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX],
             out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             z: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.scope():
            for i in pl.range(n):
                out = self.acc(x, out)
            y = self.copy(out, y)
            with pl.scope():
                out = self.acc(y, out)
        z = self.copy(out, z)
        return z


def _verdict(program):
    return codegen.run_pipeline(program, **ON).get("main").attrs["auto_deps"]


@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_a_scope_in_a_loop_body_keeps_its_hazards_tracked_and_matches_numpy(monkeypatch, n):
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    verdict = _verdict(ScopeInLoop)
    assert verdict.startswith("auto: "), verdict
    prog = pypto.compile(ScopeInLoop, **ON)
    x = np.random.default_rng(5).random((64, 16), dtype=np.float32)
    out = np.ones((16, 16), np.float32)
    stats = prog(x, n, out, race_check="error", aiv_workers=2)
    assert stats.races == 0
    want = np.ones((16, 16), np.float64)
    for i in range(n):
        want += x[(i % 4) * 16:(i % 4) * 16 + 16] + 1
        want += x[:16]
    np.testing.assert_allclose(out, want, rtol=1e-5)


def test_a_loop_in_a_scope_gets_edges_inside_it():
    prepared = codegen.run_pipeline(LoopInScope, **ON)
    verdict = prepared.get("main").attrs["auto_deps"]
    # Inside the scope everything is an edge (the loop's chain, its fan-in to the copy, and the
    # acc in the nested scope after both); the copy after the scope waits through the tracking.
    assert verdict.startswith("auto: 2 hazards not representable (first: 'acc' (line "), verdict
    code = codegen.generate_orchestration(prepared, "main", run_passes=False).code
    assert "PTO2ScopeMode::MANUAL" not in code, code
    assert code.count("set_dependencies(") == 3, code


@pytest.mark.parametrize("n", [0, 1, 4])
def test_a_loop_in_a_scope_matches_numpy_race_checked(monkeypatch, n):
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    prog = pypto.compile(LoopInScope, **ON)
    x = np.random.default_rng(6).random((16, 16), dtype=np.float32)
    out = np.ones((16, 16), np.float32)
    y = np.zeros((16, 16), np.float32)
    z = np.zeros((16, 16), np.float32)
    stats = prog(x, n, out, y, z, race_check="error", aiv_workers=2)
    assert stats.races == 0
    want_y = 1 + n * x.astype(np.float64)
    np.testing.assert_allclose(y, want_y, rtol=1e-5)
    np.testing.assert_allclose(z, 2 * want_y, rtol=1e-5)
    np.testing.assert_allclose(out, 2 * want_y, rtol=1e-5)
