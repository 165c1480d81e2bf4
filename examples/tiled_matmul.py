"""Tiled matmul: C = A @ B, one task per [TM, TN] block of C; each task accumulates over K.

    A, B ──► mm(0,0) ──► C[  0:64,  0:128]     4 x 1 independent tasks (TN = N: each task
         ──► mm(1,0) ──► C[ 64:128, 0:128]       owns whole rows of C); inside each:
         ──► mm(2,0) ──► C[128:192, 0:128]         acc = 0
         ──► mm(3,0) ──► C[192:256, 0:128]         for k in K/TK: acc = acc + A[i,k] @ B[k,j]

The accumulation loop over K is a pl.range loop inside the kernel carrying the accumulator
tile (pl.matmul_acc). C blocks are strided views of C (pl.tensor.slice). The tile shape is a
choice for a 2-core CPU: four tasks of 64 x 128 keep both cores busy with whole rows of B and C
per copy (eight 64 x 64 tasks ran 12-27 % slower: more, smaller copies and a worse split of the
tasks between two threads; benchmarks/kernel_bench.py). The matmul reads the A and B blocks in place
from a and b (the loads are only matmul operands, so the kernel copies nothing: docs/kernels.md,
"Values"); with that, two 128 x 128 tasks ran as fast as four 64 x 128 ones and TK = 192 (one
matmul per task, its B panel no longer in L1) 40 % slower (5-7 % slower, 128 x 128 tiles as fast,
in interleaved rounds with the accumulator computed in C itself). The accumulator is computed
in the kernel's own buffer and stored once: computing it in C, next to the rows another core
writes, ran up to 1.5x slower (docs/kernels.md, "Values"). Run it: ``python examples/tiled_matmul.py``.
"""
import numpy as np

import pypto
import pypto.language as pl

M, K, N = 256, 192, 128
TM, TN, TK = 64, 128, 64


@pl.program
class TiledMatmul:
    @pl.function(type=pl.FunctionType.InCore)
    def mm_block(self, a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
                 c: pl.Out[pl.Tensor[[TM, TN], pl.FP32]], row: pl.Scalar[pl.INDEX],
                 col: pl.Scalar[pl.INDEX]) -> pl.Tensor[[TM, TN], pl.FP32]:
        acc = pl.tile.full([TM, TN], pl.FP32, 0.0)
        for k in pl.range(K // TK):
            ta = pl.move(pl.load(a, [row, k * TK], [TM, TK]), target_memory=pl.MemorySpace.Left)
            tb = pl.move(pl.load(b, [k * TK, col], [TK, TN]), target_memory=pl.MemorySpace.Right)
            acc = pl.matmul_acc(acc, ta, tb)
        c = pl.store(acc, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
             c: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        for i in pl.range(M // TM):
            for j in pl.range(N // TN):
                cij = pl.tensor.slice(c, [TM, TN], [i * TM, j * TN])
                cij = self.mm_block(a, b, cij, i * TM, j * TN)
        return c


def run(aic_workers=None, aiv_workers=None, seed=0, trace=None):
    """Compiles, runs and checks against NumPy (FP32 matmul: rtol 1e-4, atol 1e-4). Returns RunStats.
    Worker counts left None take the call's default: every kernel here is AIC, so CPUs - 1 AIC
    workers and no AIV worker, with the orchestrating thread running tasks too (docs/running.md)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    c = np.zeros((M, N), np.float32)
    stats = pypto.compile(TiledMatmul)(a, b, c, aic_workers=aic_workers, aiv_workers=aiv_workers, trace=trace)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-4, atol=1e-4)
    assert stats.tasks == (M // TM) * (N // TN)
    return stats


if __name__ == "__main__":
    print("tiled_matmul: OK,", run())
