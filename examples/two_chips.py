"""Two chips: a distributed HOST orchestration with a TaskId array and a barrier.

    chip_normalize(block 0) ─► tids[0] ─┐
    chip_normalize(block 1) ─► tids[1] ─┤
    chip_normalize(block 2) ─► tids[2] ─┼─► barrier (task_dummy) ─► chip_combine ─► y
    chip_normalize(block 3) ─► tids[3] ─┘

The HOST-level function does not run kernels: each pl.submit sends a whole chip-level
orchestration (a next-level task) to the L3 runtime, which runs it on one of the chips. Here
four submissions each scale one 16x16 block of `x` into `z` (z = (x - shift) * scale), record
their task ids in a TaskId array, and pl.system.task_dummy(deps=[tids]) joins them into one
barrier that chip_combine (a different target, so not ordered by the per-target chain)
waits on before it sums the four blocks: y = sum_k z[k].

Run it: ``python examples/two_chips.py`` (in-process chips), or with its chips as MPI ranks:
``mpirun -np 3 --oversubscribe python examples/two_chips.py --mpi`` (on fewer than 3 cores) or ``pypto run examples/two_chips.py
--chips 2 --mpi``. See docs/distributed.md, and docs/manual_dependencies.md ("Distributed
HOST orchestration") for the lowering (TaskHandle arrays, submit_barrier).
"""
import numpy as np

import pypto.language as pl
from pypto import host

BLOCKS = 4
B = 16  # block rows and columns
ROWS = BLOCKS * B


@pl.program
class TwoChips:
    @pl.function(type=pl.FunctionType.InCore)
    def normalize_block(self, x: pl.Tensor[[ROWS, B], pl.FP32], k: pl.Scalar[pl.INDEX],
                        shift: pl.Scalar[pl.FP32], scale: pl.Scalar[pl.FP32],
                        z: pl.InOut[pl.Tensor[[ROWS, B], pl.FP32]]) -> pl.Tensor[[ROWS, B], pl.FP32]:
        t = pl.sub(pl.load(x, [k * B, 0], [B, B]), shift)
        z = pl.store(pl.mul(t, scale), [k * B, 0], z)
        return z

    @pl.function(type=pl.FunctionType.InCore)
    def combine_blocks(self, z: pl.Tensor[[ROWS, B], pl.FP32],
                       y: pl.Out[pl.Tensor[[B, B], pl.FP32]]) -> pl.Tensor[[B, B], pl.FP32]:
        lo = pl.add(pl.load(z, [0, 0], [B, B]), pl.load(z, [B, 0], [B, B]))
        hi = pl.add(pl.load(z, [2 * B, 0], [B, B]), pl.load(z, [3 * B, 0], [B, B]))
        y = pl.store(pl.add(lo, hi), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_normalize(self, x: pl.Tensor[[ROWS, B], pl.FP32], k: pl.Scalar[pl.INDEX],
                       shift: pl.Scalar[pl.FP32], scale: pl.Scalar[pl.FP32],
                       z: pl.InOut[pl.Tensor[[ROWS, B], pl.FP32]]) -> pl.Tensor[[ROWS, B], pl.FP32]:
        z = self.normalize_block(x, k, shift, scale, z)
        return z

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_combine(self, z: pl.Tensor[[ROWS, B], pl.FP32],
                     y: pl.Out[pl.Tensor[[B, B], pl.FP32]]) -> pl.Tensor[[B, B], pl.FP32]:
        y = self.combine_blocks(z, y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)
    def host_main(self, x: pl.Tensor[[ROWS, B], pl.FP32], z: pl.InOut[pl.Tensor[[ROWS, B], pl.FP32]],
                  y: pl.Out[pl.Tensor[[B, B], pl.FP32]], shift: pl.Scalar[pl.FP32],
                  scale: pl.Scalar[pl.FP32]) -> pl.Tensor[[B, B], pl.FP32]:
        tids = pl.array.create(BLOCKS, pl.TASK_ID)
        for k in pl.range(BLOCKS):
            z, tid = pl.submit(self.chip_normalize, x, k, shift, scale, z)
            tids[k] = tid
        all_blocks = pl.system.task_dummy(deps=[tids])
        y, _ = pl.submit(self.chip_combine, z, y, deps=[all_blocks])
        return y


def run(chips=2, seed=0, distributed=None):
    """Compiles, runs on `chips` chip runtimes (``distributed="mpi"``: on the MPI ranks, under
    mpirun; other ranks serve and never return) and checks against NumPy (FP32: rtol = atol =
    1e-5). Returns the run statistics (pypto.host.HostRunStats)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((ROWS, B)).astype(np.float32)
    z = np.zeros_like(x)
    y = np.zeros((B, B), np.float32)
    shift, scale = 0.25, 2.0
    prog = host.compile_host(TwoChips, "host_main", chips=None if distributed == "mpi" else chips,
                             distributed=distributed)
    stats = prog(x, z, y, shift, scale)
    z_ref = (x - np.float32(shift)) * np.float32(scale)
    np.testing.assert_allclose(z, z_ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(y, z_ref.reshape(BLOCKS, B, B).sum(axis=0), rtol=1e-5, atol=1e-5)
    # The barrier, not the per-target chain, keeps chip_combine behind every block.
    tasks = stats.records
    assert [t.target for t in tasks] == ["chip_normalize"] * BLOCKS + ["chip_combine"]
    assert tasks[-1].start_us >= max(t.end_us for t in tasks[:BLOCKS])
    assert stats.barriers == 1
    return stats


if __name__ == "__main__":
    import sys
    s = run(distributed="mpi" if "--mpi" in sys.argv else None)
    print("two_chips: OK, %d next-level tasks, %d barrier, %d wait edges (%s)"
          % (s.tasks_executed, s.barriers, s.wait_edges, s.transport))
