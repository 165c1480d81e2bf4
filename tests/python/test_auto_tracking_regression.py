"""Regression: the runtime's automatic dependency tracking on a loop whose task reads a window
that overlaps the slice it writes (benchmarks/auto_deps_bench.py's `neighbour`).

Task x reads rows [16x, 16x+48) of `a` and writes rows [16x+16, 16x+32) of the same buffer,
so every task must follow its predecessor (RaW on the written tile, WaR on the window). The
result must equal a sequential NumPy model of the loop for every trip count, with the
compiler's dependency analysis off (runtime tracking) and on, and with race_check=True.
"""
import numpy as np
import pytest

import pypto
import pypto.language as pl

SRC = '''import pypto.language as pl

@pl.program
class Neighbour:
    @pl.function(type=pl.FunctionType.InCore)
    def win(self, a: pl.Tensor[[48, 16], pl.FP32],
            c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.add(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(a, [16, 0], [16, 16])), pl.load(a, [32, 0], [16, 16]))
        c2 = pl.store(pl.mul(t, 0.25), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.InOut[pl.Tensor[[{rows}, 16], pl.FP32]]) -> pl.Tensor[[{rows}, 16], pl.FP32]:
        for x in pl.range({n}):
            w = pl.tensor.slice(a, [48, 16], [x * 16, 0])
            o = pl.tensor.slice(a, [16, 16], [x * 16 + 16, 0])
            r = self.win(w, o)
        return a
'''


def reference(a, n):
    """Sequential model of the loop (the program's meaning)."""
    a = a.copy()
    for x in range(n):
        r0 = x * 16
        t = (a[r0:r0 + 16] + a[r0 + 16:r0 + 32]) + a[r0 + 32:r0 + 48]
        a[r0 + 16:r0 + 32] = t * np.float32(0.25)
    return a


_compiled = {}


def compiled(n, analyze):
    key = (n, analyze)
    if key not in _compiled:
        prog = pl.parse_program(SRC.format(rows=(n + 2) * 16, n=n), f"<neighbour{n}>")
        _compiled[key] = pypto.compile(prog, analyze_auto_scopes_for_deps=analyze)
    return _compiled[key]


@pytest.mark.parametrize("analyze", [False, True], ids=["runtime-tracking", "compiler-analysis"])
@pytest.mark.parametrize("n", [8, 31, 32, 33, 40, 100])
def test_neighbour_matches_sequential_model(n, analyze):
    prog = compiled(n, analyze)
    for seed in range(3):
        a = np.random.default_rng(seed).random(((n + 2) * 16, 16), dtype=np.float32)
        want = reference(a, n)
        prog(a, aiv_workers=2)
        np.testing.assert_allclose(a, want, rtol=1e-6, atol=1e-6, err_msg=f"n={n} seed={seed}")


@pytest.mark.parametrize("n", [33, 40])
def test_neighbour_race_check_clean_and_correct(n):
    prog = compiled(n, False)
    a = np.random.default_rng(7).random(((n + 2) * 16, 16), dtype=np.float32)
    want = reference(a, n)
    prog(a, aiv_workers=2, race_check=True)  # raises on a reported race
    np.testing.assert_allclose(a, want, rtol=1e-6, atol=1e-6)
