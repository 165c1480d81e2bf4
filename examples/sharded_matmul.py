"""Sharded matmul: C = A @ B with its row blocks on four chips, then a reduction on one chip.

    A, B ─► shard0 (rows   0: 64) ─► C[  0: 64] ─┐
    A, B ─► shard1 (rows  64:128) ─► C[ 64:128] ─┤
    A, B ─► shard2 (rows 128:192) ─► C[128:192] ─┼─► barrier ─► reduce ─► S = Σ_k C[k-th block]
    A, B ─► shard3 (rows 192:256) ─► C[192:256] ─┘   (task_dummy)

A data-parallel HOST program: each pl.submit sends a chip-level orchestration (a next-level
task) to the L3 runtime. The shards are four targets, not one, because next-level tasks of
the same target run in submission order (the per-target chain); four targets run at once on
four chips. Each shard multiplies its 64 rows of A by B (K accumulated in 32-wide steps with
pl.matmul_acc) into its rows of C; a barrier joins them and `reduce` sums C's four row blocks
into S. Under MPI every shard runs on its own rank: A and B go to each rank once, each shard's
rows of C come back into the caller's C, and C is sent to the reducing rank when it needs it.

Run it: ``python examples/sharded_matmul.py`` (in-process, 4 chips), or on MPI ranks:
``mpirun -np 5 --oversubscribe python examples/sharded_matmul.py --mpi`` (``--oversubscribe``: more
ranks than cores) or
``pypto run examples/sharded_matmul.py --chips 4 --mpi``. See docs/distributed.md.
"""
import numpy as np

import pypto.language as pl
from pypto import host

M, K, N = 256, 64, 64
TM, TK = 64, 32
SHARDS = M // TM


@pl.program
class ShardedMatmul:
    @pl.function(type=pl.FunctionType.InCore)
    def mm_rows(self, a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32], row: pl.Scalar[pl.INDEX],
                c: pl.InOut[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        acc = pl.tile.full([TM, N], pl.FP32, 0.0)
        for k in pl.range(K // TK):
            ta = pl.move(pl.load(a, [row, k * TK], [TM, TK]), target_memory=pl.MemorySpace.Left)
            tb = pl.move(pl.load(b, [k * TK, 0], [TK, N]), target_memory=pl.MemorySpace.Right)
            acc = pl.matmul_acc(acc, ta, tb)
        c = pl.store(acc, [row, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def sum_blocks(self, c: pl.Tensor[[M, N], pl.FP32],
                   s: pl.Out[pl.Tensor[[TM, N], pl.FP32]]) -> pl.Tensor[[TM, N], pl.FP32]:
        lo = pl.add(pl.load(c, [0, 0], [TM, N]), pl.load(c, [TM, 0], [TM, N]))
        hi = pl.add(pl.load(c, [2 * TM, 0], [TM, N]), pl.load(c, [3 * TM, 0], [TM, N]))
        s = pl.store(pl.add(lo, hi), [0, 0], s)
        return s

    @pl.function(type=pl.FunctionType.Orchestration)
    def shard0(self, a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
               c: pl.InOut[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        c = self.mm_rows(a, b, 0, c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def shard1(self, a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
               c: pl.InOut[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        c = self.mm_rows(a, b, TM, c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def shard2(self, a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
               c: pl.InOut[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        c = self.mm_rows(a, b, 2 * TM, c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def shard3(self, a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
               c: pl.InOut[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        c = self.mm_rows(a, b, 3 * TM, c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def reduce(self, c: pl.Tensor[[M, N], pl.FP32],
               s: pl.Out[pl.Tensor[[TM, N], pl.FP32]]) -> pl.Tensor[[TM, N], pl.FP32]:
        s = self.sum_blocks(c, s)
        return s

    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)
    def host_main(self, a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
                  c: pl.InOut[pl.Tensor[[M, N], pl.FP32]],
                  s: pl.Out[pl.Tensor[[TM, N], pl.FP32]]) -> pl.Tensor[[TM, N], pl.FP32]:
        tids = pl.array.create(SHARDS, pl.TASK_ID)
        c, t0 = pl.submit(self.shard0, a, b, c)
        tids[0] = t0
        c, t1 = pl.submit(self.shard1, a, b, c)
        tids[1] = t1
        c, t2 = pl.submit(self.shard2, a, b, c)
        tids[2] = t2
        c, t3 = pl.submit(self.shard3, a, b, c)
        tids[3] = t3
        all_shards = pl.system.task_dummy(deps=[tids])
        s, _ = pl.submit(self.reduce, c, s, deps=[all_shards])
        return s


def run(chips=4, seed=0, distributed=None):
    """Compiles, runs on `chips` chips (``distributed="mpi"``: on the MPI ranks; the other
    ranks serve and never return) and checks C and S against NumPy (FP32 matmul: rtol = atol
    = 1e-4). Returns the run statistics (pypto.host.HostRunStats)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    c = np.zeros((M, N), np.float32)
    s = np.zeros((TM, N), np.float32)
    prog = host.compile_host(ShardedMatmul, "host_main", chips=None if distributed == "mpi" else chips,
                             distributed=distributed)
    stats = prog(a, b, c, s)
    c_ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, c_ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(s, c_ref.reshape(SHARDS, TM, N).sum(axis=0), rtol=1e-4, atol=1e-4)
    assert [r.target for r in stats.records] == ["shard0", "shard1", "shard2", "shard3", "reduce"]
    assert stats.records[-1].start_us >= max(r.end_us for r in stats.records[:SHARDS])
    return stats


if __name__ == "__main__":
    import sys
    st = run(distributed="mpi" if "--mpi" in sys.argv else None)
    print("sharded_matmul: OK, %d next-level tasks on %d chips (%s); shards ran on chips %s"
          % (st.tasks_executed, st.chips, st.transport, sorted({r.chip for r in st.records[:SHARDS]})))
