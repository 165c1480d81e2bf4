"""A -Werror build through pypto's precompiled headers (the way a user's PYPTO_CXXFLAGS=-Werror
build compiles): GCC 12 drops `#pragma GCC diagnostic` from a precompiled header, so warnings the
headers silenced that way came back and failed the build, while every file compiled on its own
(-c, no precompiled header) was clean. Found by scripts/fuzz.py --werror:
  - `Arg::set_dependencies` with a caller's array of fewer than 8 ids (a MANUAL scope's deps):
    -Warray-bounds in SmallVec::assign_small's unrolled copy;
  - the AVX-512 row reductions (row_max / row_min / row_sum) and the 40-wide matmul block:
    GCC's own `_mm512_undefined_*` placeholders in _mm512_max_ps, _mm512_cvtps_pd,
    _mm512_reduce_add_pd and _mm512_castps512_ps256, reported as uninitialized.
Each program is built from scratch in a cache of its own with -Werror, its files taking the
precompiled headers, and run against NumPy."""
import os

import numpy as np
import pytest

import pypto

from codegen_test_util import load_module

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def _program(rel, name):
    path = os.path.join(ROOT, rel)
    mod = load_module(path, "werror_pch_" + os.path.splitext(os.path.basename(path))[0])
    return mod, getattr(mod, name)


@pytest.fixture
def werror_build(compiler_calls, monkeypatch):
    """-Werror on, precompiled headers on, a fresh cache; returns the compiler commands run."""
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    monkeypatch.delenv("PYPTO_PCH", raising=False)
    return compiler_calls


def _took_precompiled_header(calls, kind):
    """Whether a compile of a `kind/` file ran with -Werror and a precompiled header's directory."""
    return any("-Werror" in cmd and any(a.startswith("-I") and "/pch/" in a for a in cmd)
               and any(a.startswith(kind + "/") for a in cmd) for cmd in calls)


def test_manual_dependencies_of_fewer_than_eight_ids(werror_build):
    # The orchestration fills `PTO2TaskId params_t1_deps[5]` and passes it to set_dependencies.
    mod, program = _program("tests/python/spec_programs/task_dummy_barrier.py", "DummyBarrier")
    prog = pypto.compile(program)
    assert _took_precompiled_header(werror_build, "orchestration")
    with open(os.path.join(prog.output_dir, "orchestration", "main.cpp")) as f:
        assert "_deps[5];" in f.read()
    x = np.random.default_rng(0).uniform(-1, 1, (16 * mod.N, 16)).astype(np.float32)
    parts, out = np.zeros_like(x), np.zeros((16, 16), np.float32)
    prog(x, parts, out)
    np.testing.assert_allclose(parts, np.exp(x), rtol=1e-5)
    np.testing.assert_allclose(out, np.exp(x[:16]), rtol=1e-5)


@pytest.mark.parametrize("rel, name, kernel", [("examples/row_softmax.py", "RowSoftmax", "softmax_rows"),
                                               ("examples/group_mixed.py", "GroupMixed", "mm")])
def test_avx512_row_reductions_and_matmul_blocks(werror_build, rel, name, kernel):
    # run() compiles the example, runs it and checks it against NumPy (on an AVX-512 machine
    # the kernels take the SIMD paths whose intrinsics changed).
    mod, _ = _program(rel, name)
    mod.run()
    assert _took_precompiled_header(werror_build, "kernels")
    assert any(any(a == "kernels/%s.cpp" % kernel for a in cmd) for cmd in werror_build)


VIEW_IN_SCOPES = '''
import pypto.language as pl


@pl.program
class ViewInScopes:
    @pl.function(type=pl.FunctionType.InCore)
    def inc(self, c: pl.InOut[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        c = pl.store(pl.add(pl.load(c, [0, 0], [8, 16]), 1.0), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, c: pl.InOut[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        for i in pl.range(4):
            for j in pl.range(2):
                cij = pl.tensor.slice(c, [8, 16], [i * 8, j * 16])
                for _a in pl.range(1):
                    with pl.scope():
                        for _b in pl.range(1):
                            with pl.scope():
                                with pl.scope():
                                    cij = self.inc(cij)
        return c
'''


def test_rank2_view_inside_nested_scopes(werror_build, tmp_path):
    # Tensor::view's straight-line cases read a 2-entry offsets array at positions 2 and 3 only
    # for ranks 3 and 4; inlined inside nested PTO2_SCOPEs, g++ -O2 reported them (-Warray-bounds).
    path = tmp_path / "view_in_scopes.py"
    path.write_text(VIEW_IN_SCOPES)
    mod = load_module(path, "werror_pch_view_in_scopes")
    prog = pypto.compile(mod.ViewInScopes)
    assert _took_precompiled_header(werror_build, "orchestration")
    c = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    expected = c + 1.0
    prog(c)
    np.testing.assert_array_equal(c, expected)
