"""Attention with an online softmax: out = softmax(Q @ K^T * scale) @ V, key block by key block.

    per query block qb (2 independent chains):

    init(m=-inf, l=0, o=0) ─► step(k-block 0) ─► step(k-block 1) ─► ... ─► step(k-block 7) ─► finalize ─► out[qb]
                                   ▲  m, l, o are loop-carried tensors (InOut): each step reads
                                   └─ and rewrites them, so the steps of one chain run in order.

A step keeps a running row max m and row sum l and rescales the partial output o:
    s = (q @ kt_j) * scale;  m' = max(m, rowmax(s));  p = exp(s - m');  a = exp(m - m')
    l' = l * a + rowsum(p);  o' = o * a + p @ v_j;    finally out = o / l
Run it: ``python examples/online_softmax.py``.
"""
import numpy as np

import pypto
import pypto.language as pl

SQ, SK, D = 64, 256, 64       # query rows, keys, head dim
BQ, BK = 32, 32               # query block, key block
NEG_INF = -1.0e30


@pl.program
class OnlineSoftmax:
    @pl.function(type=pl.FunctionType.InCore)
    def init_state(self, m: pl.Out[pl.Tensor[[BQ, 1], pl.FP32]], l: pl.Out[pl.Tensor[[BQ, 1], pl.FP32]],
                   o: pl.Out[pl.Tensor[[BQ, D], pl.FP32]]) -> tuple[pl.Tensor[[BQ, 1], pl.FP32], pl.Tensor[[BQ, 1], pl.FP32], pl.Tensor[[BQ, D], pl.FP32]]:
        m = pl.store(pl.tile.full([BQ, 1], pl.FP32, NEG_INF), [0, 0], m)
        l = pl.store(pl.tile.full([BQ, 1], pl.FP32, 0.0), [0, 0], l)
        o = pl.store(pl.tile.full([BQ, D], pl.FP32, 0.0), [0, 0], o)
        return m, l, o

    @pl.function(type=pl.FunctionType.InCore)
    def attn_step(self, q: pl.Tensor[[BQ, D], pl.FP32], kt: pl.Tensor[[D, SK], pl.FP32],
                  v: pl.Tensor[[SK, D], pl.FP32], m: pl.InOut[pl.Tensor[[BQ, 1], pl.FP32]],
                  l: pl.InOut[pl.Tensor[[BQ, 1], pl.FP32]], o: pl.InOut[pl.Tensor[[BQ, D], pl.FP32]],
                  kofs: pl.Scalar[pl.INDEX], scale: pl.Scalar[pl.FP32]) -> tuple[pl.Tensor[[BQ, 1], pl.FP32], pl.Tensor[[BQ, 1], pl.FP32], pl.Tensor[[BQ, D], pl.FP32]]:
        s = pl.mul(pl.matmul(pl.load(q, [0, 0], [BQ, D]), pl.load(kt, [0, kofs], [D, BK])), scale)
        m_old = pl.load(m, [0, 0], [BQ, 1])
        m_new = pl.maximum(m_old, pl.row_max(s))
        p = pl.exp(pl.row_expand_sub(s, m_new))
        alpha = pl.exp(pl.sub(m_old, m_new))
        l_new = pl.add(pl.mul(pl.load(l, [0, 0], [BQ, 1]), alpha), pl.row_sum(p))
        pv = pl.matmul(p, pl.load(v, [kofs, 0], [BK, D]))
        o_new = pl.add(pl.row_expand_mul(pl.load(o, [0, 0], [BQ, D]), alpha), pv)
        m = pl.store(m_new, [0, 0], m)
        l = pl.store(l_new, [0, 0], l)
        o = pl.store(o_new, [0, 0], o)
        return m, l, o

    @pl.function(type=pl.FunctionType.InCore)
    def finalize(self, o: pl.Tensor[[BQ, D], pl.FP32], l: pl.Tensor[[BQ, 1], pl.FP32],
                 out: pl.Out[pl.Tensor[[BQ, D], pl.FP32]]) -> pl.Tensor[[BQ, D], pl.FP32]:
        out = pl.store(pl.row_expand_div(pl.load(o, [0, 0], [BQ, D]), pl.load(l, [0, 0], [BQ, 1])), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, q: pl.Tensor[[SQ, D], pl.FP32], kt: pl.Tensor[[D, SK], pl.FP32], v: pl.Tensor[[SK, D], pl.FP32],
             scale: pl.Scalar[pl.FP32], out: pl.Out[pl.Tensor[[SQ, D], pl.FP32]]) -> pl.Tensor[[SQ, D], pl.FP32]:
        for qb in pl.range(SQ // BQ):
            m = pl.create_tensor([BQ, 1], dtype=pl.FP32)
            l = pl.create_tensor([BQ, 1], dtype=pl.FP32)
            o = pl.create_tensor([BQ, D], dtype=pl.FP32)
            m, l, o = self.init_state(m, l, o)
            qs = pl.tensor.slice(q, [BQ, D], [qb * BQ, 0])
            for j in pl.range(SK // BK):
                m, l, o = self.attn_step(qs, kt, v, m, l, o, j * BK, scale)
            ob = pl.tensor.slice(out, [BQ, D], [qb * BQ, 0])
            ob = self.finalize(o, l, ob)
        return out


def reference(q, kt, v, scale):
    s = (q @ kt) * scale
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return (p / p.sum(axis=1, keepdims=True)) @ v


def run(aic_workers=1, aiv_workers=2, seed=0, trace=None):
    """Compiles, runs and checks against NumPy in float64 (FP32 softmax+matmul: rtol 1e-4, atol 1e-5)."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((SQ, D)).astype(np.float32)
    kt = rng.standard_normal((D, SK)).astype(np.float32)
    v = rng.standard_normal((SK, D)).astype(np.float32)
    out = np.zeros((SQ, D), np.float32)
    scale = 1.0 / np.sqrt(D)
    stats = pypto.compile(OnlineSoftmax)(q, kt, v, scale, out, aic_workers=aic_workers, aiv_workers=aiv_workers,
                                         trace=trace)
    expect = reference(q.astype(np.float64), kt.astype(np.float64), v.astype(np.float64), np.float32(scale))
    np.testing.assert_allclose(out, expect, rtol=1e-4, atol=1e-5)
    assert stats.tasks == (SQ // BQ) * (SK // BK + 2)
    return stats


if __name__ == "__main__":
    print("online_softmax: OK,", run())
