"""A long loop whose per-iteration intermediate tensors are reclaimed: memory stays bounded.

    for i in 0..ITERS-1:
        tmp_i = create_tensor(64 x 64)           (16 KB, lives in the loop body's scope)
        x ──► produce ──► tmp_i ──► accumulate ──► acc     (acc: InOut, a chain over i)

Each loop body is a runtime scope: when it has ended and the tasks using tmp_i finished, the
runtime reuses tmp_i's memory. ITERS * 16 KB = 32 MB are allocated in total; with a memory
limit of 512 KB the orchestration waits for reclamation (back-pressure) instead of growing,
and the run's peak stays under the limit.
Run it: ``python examples/long_loop.py``.
"""
import numpy as np

import pypto
import pypto.language as pl

ITERS = 2000
S = 64
TMP_BYTES = S * S * 4
MEMORY_LIMIT = 32 * TMP_BYTES


@pl.program
class LongLoop:
    @pl.function(type=pl.FunctionType.InCore)
    def produce(self, x: pl.Tensor[[S, S], pl.FP32], tmp: pl.Out[pl.Tensor[[S, S], pl.FP32]],
                i: pl.Scalar[pl.INDEX]) -> pl.Tensor[[S, S], pl.FP32]:
        tmp = pl.store(pl.add(pl.load(x, [0, 0], [S, S]), pl.cast(pl.tile.full([S, S], pl.INT32, i % 3), pl.FP32)),
                       [0, 0], tmp)
        return tmp

    @pl.function(type=pl.FunctionType.InCore)
    def accumulate(self, tmp: pl.Tensor[[S, S], pl.FP32],
                   acc: pl.InOut[pl.Tensor[[S, S], pl.FP32]]) -> pl.Tensor[[S, S], pl.FP32]:
        acc = pl.store(pl.add(pl.load(acc, [0, 0], [S, S]), pl.load(tmp, [0, 0], [S, S])), [0, 0], acc)
        return acc

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[S, S], pl.FP32],
             acc: pl.InOut[pl.Tensor[[S, S], pl.FP32]]) -> pl.Tensor[[S, S], pl.FP32]:
        for i in pl.range(ITERS):
            tmp = pl.create_tensor([S, S], dtype=pl.FP32)
            tmp = self.produce(x, tmp, i)
            acc = self.accumulate(tmp, acc)
        return acc


def run(aic_workers=1, aiv_workers=2, seed=0, trace=None):
    """Checks acc = acc0 + sum_i (x + i % 3) (FP32 sum of 2000 terms: rtol 1e-4) and peak memory."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, (S, S)).astype(np.float32)
    acc = rng.uniform(-1, 1, (S, S)).astype(np.float32)
    expect = acc.astype(np.float64) + ITERS * x.astype(np.float64) + sum(i % 3 for i in range(ITERS))
    stats = pypto.compile(LongLoop)(x, acc, aic_workers=aic_workers, aiv_workers=aiv_workers, trace=trace,
                                    memory_limit=MEMORY_LIMIT)
    np.testing.assert_allclose(acc, expect, rtol=1e-4, atol=1e-3)
    assert stats.tasks == 2 * ITERS
    assert 0 < stats.peak_bytes <= MEMORY_LIMIT, stats.peak_bytes   # bounded, not ITERS * 16 KB
    return stats


if __name__ == "__main__":
    s = run()
    print("long_loop: OK, %s; allocated %d KB in total, peak %d KB" % (s, ITERS * TMP_BYTES // 1024,
                                                                       s.peak_bytes // 1024))
