"""Vector add: c = a + b, split into independent chunk tasks that run in parallel.

    a ──┬──► add(chunk 0) ──► c[   0: 256]
    b ──┤──► add(chunk 1) ──► c[ 256: 512]
        ├──► ...
        └──► add(chunk 15) ─► c[3840:4096]

Each task gets views (pl.tensor.slice) of a, b and c: the runtime sees that the written
regions do not overlap, so the tasks have no dependencies and run on all AIV workers.
Run it: ``python examples/vector_add.py``.
"""
import numpy as np

import pypto
import pypto.language as pl

N = 4096
CHUNK = 256


@pl.program
class VectorAdd:
    @pl.function(type=pl.FunctionType.InCore)
    def add_chunk(self, a: pl.Tensor[[CHUNK], pl.FP32], b: pl.Tensor[[CHUNK], pl.FP32],
                  c: pl.Out[pl.Tensor[[CHUNK], pl.FP32]]) -> pl.Tensor[[CHUNK], pl.FP32]:
        c = pl.store(pl.add(pl.load(a, [0], [CHUNK]), pl.load(b, [0], [CHUNK])), [0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N], pl.FP32], b: pl.Tensor[[N], pl.FP32],
             c: pl.Out[pl.Tensor[[N], pl.FP32]]) -> pl.Tensor[[N], pl.FP32]:
        for i in pl.range(N // CHUNK):
            ca = pl.tensor.slice(a, [CHUNK], [i * CHUNK])
            cb = pl.tensor.slice(b, [CHUNK], [i * CHUNK])
            cc = pl.tensor.slice(c, [CHUNK], [i * CHUNK])
            cc = self.add_chunk(ca, cb, cc)
        return c


def run(aic_workers=1, aiv_workers=2, seed=0, trace=None):
    """Compiles, runs and checks against NumPy (FP32: rtol = atol = 1e-5). Returns RunStats."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(N).astype(np.float32)
    b = rng.standard_normal(N).astype(np.float32)
    c = np.zeros(N, np.float32)
    stats = pypto.compile(VectorAdd)(a, b, c, aic_workers=aic_workers, aiv_workers=aiv_workers, trace=trace)
    np.testing.assert_allclose(c, a + b, rtol=1e-5, atol=1e-5)
    assert stats.tasks == N // CHUNK
    return stats


if __name__ == "__main__":
    print("vector_add: OK,", run())
