"""Dynamic shapes: the row count M is a pl.dynamic symbol, bound by the arrays at call time.

    x[M, 64] ──► gelu-ish(rows 0..15)   ──► y[0:16]
             ──► gelu-ish(rows 16..31)  ──► y[16:32]     M / 16 independent tasks,
             ──► ...                                     M known only at run time

The same compiled program runs for any M that is a multiple of 16 (y = relu(x) * alpha + x).
Run it: ``python examples/dynamic_shape.py``.
"""
import numpy as np

import pypto
import pypto.language as pl

M = pl.dynamic("M")
COLS, BLOCK = 64, 16


@pl.program
class DynamicRows:
    @pl.function(type=pl.FunctionType.InCore)
    def rows(self, x: pl.Tensor[[BLOCK, COLS], pl.FP32], y: pl.Out[pl.Tensor[[BLOCK, COLS], pl.FP32]],
             alpha: pl.Scalar[pl.FP32]) -> pl.Tensor[[BLOCK, COLS], pl.FP32]:
        t = pl.load(x, [0, 0], [BLOCK, COLS])
        y = pl.store(pl.add(pl.mul(pl.relu(t), alpha), t), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[M, COLS], pl.FP32], y: pl.Out[pl.Tensor[[M, COLS], pl.FP32]],
             alpha: pl.Scalar[pl.FP32]) -> pl.Tensor[[M, COLS], pl.FP32]:
        assert x.shape[0] % BLOCK == 0, "the row count must be a multiple of 16"   # else rows were left out
        for i in pl.range(x.shape[0] // BLOCK):
            xb = pl.tensor.slice(x, [BLOCK, COLS], [i * BLOCK, 0])
            yb = pl.tensor.slice(y, [BLOCK, COLS], [i * BLOCK, 0])
            yb = self.rows(xb, yb, alpha)
        return y


def run(aic_workers=1, aiv_workers=2, seed=0, trace=None, sizes=(16, 48, 256)):
    """Runs one compiled program for several M; checks each (FP32: rtol = atol = 1e-5)."""
    compiled = pypto.compile(DynamicRows)
    rng = np.random.default_rng(seed)
    stats = None
    for m in sizes:
        x = rng.standard_normal((m, COLS)).astype(np.float32)
        y = np.zeros_like(x)
        stats = compiled(x, y, 0.5, aic_workers=aic_workers, aiv_workers=aiv_workers, trace=trace)
        np.testing.assert_allclose(y, np.maximum(x, 0) * 0.5 + x, rtol=1e-5, atol=1e-5)
        assert stats.tasks == m // BLOCK
    return stats


if __name__ == "__main__":
    print("dynamic_shape: OK,", run())
