"""Differential test of AutoDeriveTaskDependencies: random AUTO programs (loops, branches,
affine slices, multiple outputs; tests/python/auto_deps_fuzz.py) compiled with
analyze_auto_scopes_for_deps on run clean under the race checker (mode "error") and give
bit-identical results to the switch-off build.

300 distinct generated programs, each run on 2 seeded input sets (data and the scalar `n` that
sets dynamic trip counts and branches). To keep the suite cheap, programs are checked in batches
of 50: both builds of every program of a batch go into one library (one compiler run; see
auto_deps_fuzz.check_batch) and run straight on the runtime. `make fuzz` (scripts/fuzz_auto_deps.py)
runs more programs with more input sets.
"""
import collections

import pytest

import auto_deps_fuzz

PROGRAMS = 300
BATCH = 50
RUNS = 2
_verdicts: dict = {}


def _kind(verdict):
    """manual / auto / fallback: the verdict's first word ("manual per loop iteration (...)",
    "auto (...)" and "auto: ..." included)."""
    return verdict.split(" ")[0].rstrip(":")


@pytest.mark.parametrize("first", range(0, PROGRAMS, BATCH))
def test_random_auto_programs_match_and_are_race_free(first):
    verdicts = auto_deps_fuzz.check_batch(range(first, first + BATCH), runs=RUNS)
    assert len(verdicts) == BATCH
    for seed, verdict in verdicts.items():
        assert _kind(verdict) in ("manual", "auto", "fallback"), (seed, verdict)
    _verdicts.update(verdicts)


def test_generator_covers_every_verdict():
    # From the batches above when they ran in this session; else from the first batch's programs.
    if len(_verdicts) < BATCH:
        from pypto import codegen
        for seed in range(BATCH):
            prepared = codegen.run_pipeline(auto_deps_fuzz.load(seed), analyze_auto_scopes_for_deps=True)
            _verdicts[seed] = prepared.get("main").attrs["auto_deps"]
    kinds = collections.Counter(_kind(v) for v in _verdicts.values())
    # Every program is analysed (kernel calls under `if n > 3:` included); fallbacks are covered
    # by tests/golden_auto_deps/fallback and the pass tests.
    assert set(kinds) == {"manual", "auto"}, kinds
    assert len(set(auto_deps_fuzz.program_source(s) for s in range(BATCH))) == BATCH   # distinct programs


def test_a_missing_edge_in_a_batch_is_caught(monkeypatch):
    # The batch really race-checks the switch-on build: drop the compiler edges of one program
    # (as if the pass had derived none) and the run must fail with the race checker's report.
    from pypto import compiler
    from pypto.runtime.loader import RaceError

    real = compiler.generate

    def without_edges(program, entry=None, analyze_auto_scopes_for_deps=False):
        out = real(program, entry, analyze_auto_scopes_for_deps)
        if analyze_auto_scopes_for_deps:
            stripped = "\n".join(line for line in out[2].code.split("\n") if ".set_dependencies(" not in line)
            return out[0], out[1], _Code(out[2], stripped), out[3], out[4]
        return out

    monkeypatch.setattr(compiler, "generate", without_edges)
    seed = next(s for s in range(BATCH) if _manual_with_edges(s))
    with pytest.raises(RaceError):
        auto_deps_fuzz.check_batch([seed], runs=1)


class _Code:
    """An orchestration result with other code text."""

    def __init__(self, result, code):
        self._r, self.code = result, code

    def __getattr__(self, name):
        return getattr(self._r, name)


def _manual_with_edges(seed):
    from pypto import codegen
    prepared = codegen.run_pipeline(auto_deps_fuzz.load(seed), analyze_auto_scopes_for_deps=True)
    v = prepared.get("main").attrs["auto_deps"]
    return v.startswith("manual:") and not v.endswith(" 0 edges")


def test_parallel_fan_in_inside_a_loop_keeps_its_array_carry():
    # fuzz_auto_deps --seed 24024 (program 24206), minimised: a pl.parallel fan-in inside a
    # pl.range, read as a whole after it. The outer loop carried the fan-in's slots as an array
    # but yielded the phase fence (one TaskId): "loop-carried TaskId 'acc_carry0' is an array
    # here but its next value is one TaskId" at compile time, with the switch on.
    import numpy as np

    import pypto
    import pypto.language as pl
    src = '''
import pypto.language as pl

@pl.program
class FanInInLoop:
    @pl.function(type=pl.FunctionType.InCore)
    def acc(self, a: pl.Tensor[[16, 16], pl.FP32],
            c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c2 = pl.store(pl.add(pl.load(c, [0, 0], [16, 16]), pl.load(a, [0, 0], [16, 16])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def init(self, a: pl.Tensor[[128, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[128, 16], pl.FP32]]) -> pl.Tensor[[128, 16], pl.FP32]:
        c2 = pl.store(pl.load(a, [0, 0], [128, 16]), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[128, 16], pl.FP32],
             y: pl.InOut[pl.Tensor[[128, 16], pl.FP32]]) -> pl.Tensor[[128, 16], pl.FP32]:
        tmp = pl.create_tensor([128, 16], dtype=pl.FP32)
        t0 = self.init(x, tmp)
        for i1 in pl.range(3):
            for i2 in pl.parallel(4):
                v4 = pl.tensor.slice(tmp, [16, 16], [i2 * 16, 0])
                r5 = self.acc(pl.tensor.slice(x, [16, 16], [i1 * 16, 0]), v4)
            r10 = self.acc(pl.tensor.slice(tmp, [16, 16], [0, 0]), pl.tensor.slice(y, [16, 16], [i1 * 16, 0]))
        return y
'''
    program = pl.parse_program(src, "fan_in_in_loop.py")
    off = pypto.compile(program)
    on = pypto.compile(program, analyze_auto_scopes_for_deps=True)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((128, 16)).astype(np.float32)
    y = rng.standard_normal((128, 16)).astype(np.float32)
    y_off, y_on = y.copy(), y.copy()
    off(x, y_off, aiv_workers=3)
    on(x, y_on, aiv_workers=3, race_check=True)
    assert np.array_equal(y_off, y_on)
