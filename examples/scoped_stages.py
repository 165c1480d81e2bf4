"""Runtime scopes bound what a stage allocates; the values a stage computes still flow on.

    for i in 0..STAGES-1:
        with pl.scope():                       (sq_i: allocated in the scope, reclaimed at its end)
            x ──► square ──► sq_i ──► w_i = sq_i[i, i]      (pl.tensor.read: waits for square)
        x, w_i ──► scale_add ──► acc                        (after the scope: w_i left it)
    with pl.scope():
        x ──► scale_add(0.5) ──► acc ;  return acc           (a return may end the final scope)

A `with pl.scope():` block is a scheduling region, not a Python name scope: a number, a tensor
view or a pl.Array assigned in it can be read after it (it leaves through an exit slot in the
generated C++). Only what the runtime allocated in the scope (here `sq`) cannot leave: its
memory is reused once the scope has ended.
Run it: ``python examples/scoped_stages.py``.
"""
import numpy as np

import pypto
import pypto.language as pl

S = 16
STAGES = 4
SQ_BYTES = S * S * 4
MEMORY_LIMIT = 2 * SQ_BYTES   # the orchestration waits for a reclaimed sq rather than growing


@pl.program
class ScopedStages:
    @pl.function(type=pl.FunctionType.InCore)
    def square(self, x: pl.Tensor[[S, S], pl.FP32],
               sq: pl.Out[pl.Tensor[[S, S], pl.FP32]]) -> pl.Tensor[[S, S], pl.FP32]:
        t = pl.load(x, [0, 0], [S, S])
        sq = pl.store(pl.mul(t, t), [0, 0], sq)
        return sq

    @pl.function(type=pl.FunctionType.InCore)
    def scale_add(self, x: pl.Tensor[[S, S], pl.FP32], w: pl.Scalar[pl.FP32],
                  acc: pl.InOut[pl.Tensor[[S, S], pl.FP32]]) -> pl.Tensor[[S, S], pl.FP32]:
        acc = pl.store(pl.add(pl.load(acc, [0, 0], [S, S]), pl.mul(pl.load(x, [0, 0], [S, S]), w)), [0, 0], acc)
        return acc

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[S, S], pl.FP32],
             acc: pl.InOut[pl.Tensor[[S, S], pl.FP32]]) -> pl.Tensor[[S, S], pl.FP32]:
        for i in pl.range(STAGES):
            with pl.scope():
                sq = pl.create_tensor([S, S], dtype=pl.FP32)
                sq = self.square(x, sq)
                w = pl.tensor.read(sq, [i, i])
            acc = self.scale_add(x, w, acc)
        with pl.scope():
            acc = self.scale_add(x, 0.5, acc)
            return acc


def run(aic_workers=1, aiv_workers=2, seed=0, trace=None):
    """Checks acc = acc0 + x * (sum_i x[i, i]^2 + 0.5) (FP32 elementwise: rtol = atol = 1e-5) and that
    the stages' sq tensors shared memory (peak within MEMORY_LIMIT, 2 of the STAGES tensors)."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, (S, S)).astype(np.float32)
    acc = rng.uniform(-1, 1, (S, S)).astype(np.float32)
    expect = acc.copy()
    for i in range(STAGES):
        expect = expect + x * (x[i, i] * x[i, i])
    expect = expect + x * np.float32(0.5)
    stats = pypto.compile(ScopedStages)(x, acc, aic_workers=aic_workers, aiv_workers=aiv_workers, trace=trace,
                                        memory_limit=MEMORY_LIMIT)
    np.testing.assert_allclose(acc, expect, rtol=1e-5, atol=1e-5)
    assert stats.tasks == 2 * STAGES + 1
    assert 0 < stats.peak_bytes <= MEMORY_LIMIT, stats.peak_bytes   # not STAGES * SQ_BYTES
    return stats


if __name__ == "__main__":
    print("scoped_stages: OK, %s" % run())
