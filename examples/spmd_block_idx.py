"""SPMD: one task launched on 4 blocks; each block picks its rows with pl.tile.get_block_idx().

    x ──► scale_rows  [block 0] ──► y[ 0:16] = x[ 0:16] * 1
                      [block 1] ──► y[16:32] = x[16:32] * 2      one task, core_num=4
                      [block 2] ──► y[32:48] = x[32:48] * 3      (blocks run in parallel)
                      [block 3] ──► y[48:64] = x[48:64] * 4

Run it: ``python examples/spmd_block_idx.py``.
"""
import numpy as np

import pypto
import pypto.language as pl

BLOCKS, BLOCK, COLS = 4, 16, 32
ROWS = BLOCKS * BLOCK


@pl.program
class SpmdRows:
    @pl.function(type=pl.FunctionType.InCore)
    def scale_rows(self, x: pl.Tensor[[ROWS, COLS], pl.FP32],
                   y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        b = pl.tile.get_block_idx()
        t = pl.load(x, [b * BLOCK, 0], [BLOCK, COLS])
        y = pl.store(pl.mul(t, b + 1), [b * BLOCK, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[ROWS, COLS], pl.FP32],
             y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        y, tid = pl.spmd_submit(self.scale_rows, x, y, core_num=BLOCKS)
        return y


def run(aic_workers=1, aiv_workers=2, seed=0, trace=None):
    """Compiles, runs and checks against NumPy (FP32: rtol = atol = 1e-5). Returns RunStats."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((ROWS, COLS)).astype(np.float32)
    y = np.zeros_like(x)
    stats = pypto.compile(SpmdRows)(x, y, aic_workers=aic_workers, aiv_workers=aiv_workers, trace=trace)
    factor = np.repeat(np.arange(1, BLOCKS + 1, dtype=np.float32), BLOCK)[:, None]
    np.testing.assert_allclose(y, x * factor, rtol=1e-5, atol=1e-5)
    assert stats.tasks == 1
    return stats


if __name__ == "__main__":
    print("spmd_block_idx: OK,", run())
