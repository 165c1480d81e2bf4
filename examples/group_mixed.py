"""A Group of an AIC (cube) kernel and an AIV (vector) kernel, gang-started as one task.

    a, b ──► ┌ pair (Group) ─────────────┐
             │  AIC: mm    c = a @ b     │ ──► combine (AIV): e = c + d ──► e
    x ────►  │  AIV: act   d = relu(x)   │
             └───────────────────────────┘

The two kernels of a Group start together on one AIC and one AIV worker and see the same
arguments; the task completes when both finish. On the CPU runtime they run concurrently; where
the Group body orders their tensor accesses (a kernel reads or writes what an earlier one of
the other core type writes, or writes what it reads — here both declare c and d as Out), the
generated kernels synchronise with the runtime's group flags (docs/kernels.md, "Groups").
The consumer `combine` depends on the whole Group task.
Run it: ``python examples/group_mixed.py``.
"""
import numpy as np

import pypto
import pypto.language as pl

S = 32


@pl.program
class GroupMixed:
    @pl.function(type=pl.FunctionType.AIC)
    def mm(self, a: pl.Tensor[[S, S], pl.FP16], b: pl.Tensor[[S, S], pl.FP16], x: pl.Tensor[[S, S], pl.FP32],
           c: pl.Out[pl.Tensor[[S, S], pl.FP32]], d: pl.Out[pl.Tensor[[S, S], pl.FP32]]) -> pl.Tensor[[S, S], pl.FP32]:
        ta = pl.move(pl.load(a, [0, 0], [S, S]), target_memory=pl.MemorySpace.Left)
        tb = pl.move(pl.load(b, [0, 0], [S, S]), target_memory=pl.MemorySpace.Right)
        c = pl.store(pl.matmul(ta, tb), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.AIV)
    def act(self, a: pl.Tensor[[S, S], pl.FP16], b: pl.Tensor[[S, S], pl.FP16], x: pl.Tensor[[S, S], pl.FP32],
            c: pl.Out[pl.Tensor[[S, S], pl.FP32]], d: pl.Out[pl.Tensor[[S, S], pl.FP32]]) -> pl.Tensor[[S, S], pl.FP32]:
        d = pl.store(pl.relu(pl.load(x, [0, 0], [S, S])), [0, 0], d)
        return d

    @pl.function(type=pl.FunctionType.Group)
    def pair(self, a: pl.Tensor[[S, S], pl.FP16], b: pl.Tensor[[S, S], pl.FP16], x: pl.Tensor[[S, S], pl.FP32],
             c: pl.Out[pl.Tensor[[S, S], pl.FP32]], d: pl.Out[pl.Tensor[[S, S], pl.FP32]]) -> tuple[pl.Tensor[[S, S], pl.FP32], pl.Tensor[[S, S], pl.FP32]]:
        c = self.mm(a, b, x, c, d)
        d = self.act(a, b, x, c, d)
        return c, d

    @pl.function(type=pl.FunctionType.AIV)
    def combine(self, c: pl.Tensor[[S, S], pl.FP32], d: pl.Tensor[[S, S], pl.FP32],
                e: pl.Out[pl.Tensor[[S, S], pl.FP32]]) -> pl.Tensor[[S, S], pl.FP32]:
        e = pl.store(pl.add(pl.load(c, [0, 0], [S, S]), pl.load(d, [0, 0], [S, S])), [0, 0], e)
        return e

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[S, S], pl.FP16], b: pl.Tensor[[S, S], pl.FP16], x: pl.Tensor[[S, S], pl.FP32],
             e: pl.Out[pl.Tensor[[S, S], pl.FP32]]) -> pl.Tensor[[S, S], pl.FP32]:
        c = pl.create_tensor([S, S], dtype=pl.FP32)
        d = pl.create_tensor([S, S], dtype=pl.FP32)
        c, d = self.pair(a, b, x, c, d)
        e = self.combine(c, d, e)
        return e


def run(aic_workers=1, aiv_workers=2, seed=0, trace=None):
    """Compiles, runs and checks against NumPy: FP16 inputs, FP32 accumulation (rtol 1e-3, atol 1e-3)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((S, S)).astype(np.float16)
    b = rng.standard_normal((S, S)).astype(np.float16)
    x = rng.standard_normal((S, S)).astype(np.float32)
    e = np.zeros((S, S), np.float32)
    stats = pypto.compile(GroupMixed)(a, b, x, e, aic_workers=aic_workers, aiv_workers=aiv_workers, trace=trace)
    expect = a.astype(np.float64) @ b.astype(np.float64) + np.maximum(x, 0)
    np.testing.assert_allclose(e, expect, rtol=1e-3, atol=1e-3)
    assert stats.tasks == 2
    return stats


if __name__ == "__main__":
    print("group_mixed: OK,", run())
