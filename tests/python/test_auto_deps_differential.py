"""Differential test of AutoDeriveTaskDependencies: random AUTO programs (loops, branches,
affine slices, multiple outputs; tests/python/auto_deps_fuzz.py) compiled with
analyze_auto_scopes_for_deps on run clean under the race checker (mode "error") and give
bit-identical results to the switch-off build.

To keep the suite small, 12 generated programs are each compiled twice (off / on) and run on 25
seeded input sets (data and the scalar `n` that sets dynamic trip counts and branches): 300
seeded cases. `make fuzz` (scripts/fuzz_auto_deps.py) runs hundreds of distinct programs.
"""
import pytest

import auto_deps_fuzz

PROGRAMS = 12
RUNS = 25


@pytest.mark.parametrize("seed", range(PROGRAMS))
def test_random_auto_program_matches_and_is_race_free(seed):
    verdict = auto_deps_fuzz.check_program(seed, runs=RUNS)
    assert verdict.split(":")[0] in ("manual", "auto", "fallback"), verdict


def test_generator_covers_every_verdict():
    from pypto import codegen
    kinds = set()
    for seed in range(PROGRAMS):
        prepared = codegen.run_pipeline(auto_deps_fuzz.load(seed), analyze_auto_scopes_for_deps=True)
        kinds.add(prepared.get("main").attrs["auto_deps"].split(":")[0])
    assert kinds == {"manual", "auto", "fallback"}, kinds
