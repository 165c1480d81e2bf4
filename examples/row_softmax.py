"""Row softmax: y[i, :] = exp(x[i, :] - max_j x[i, j]) / sum_j exp(...), one task per 16 rows.

    x ──► softmax(rows 0..15)    ──► y[0:16]
      ──► softmax(rows 16..31)   ──► y[16:32]       8 independent tasks
      ──► ...
      ──► softmax(rows 112..127) ──► y[112:128]

Inside a task: pl.row_max, pl.row_expand_sub, pl.exp, pl.row_sum, pl.row_expand_div.
Run it: ``python examples/row_softmax.py``.
"""
import numpy as np

import pypto
import pypto.language as pl

ROWS, COLS, BLOCK = 128, 96, 16


@pl.program
class RowSoftmax:
    @pl.function(type=pl.FunctionType.InCore)
    def softmax_rows(self, x: pl.Tensor[[BLOCK, COLS], pl.FP32],
                     y: pl.Out[pl.Tensor[[BLOCK, COLS], pl.FP32]]) -> pl.Tensor[[BLOCK, COLS], pl.FP32]:
        t = pl.load(x, [0, 0], [BLOCK, COLS])
        e = pl.exp(pl.row_expand_sub(t, pl.row_max(t)))
        y = pl.store(pl.row_expand_div(e, pl.row_sum(e)), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[ROWS, COLS], pl.FP32],
             y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        for i in pl.range(ROWS // BLOCK):
            xb = pl.tensor.slice(x, [BLOCK, COLS], [i * BLOCK, 0])
            yb = pl.tensor.slice(y, [BLOCK, COLS], [i * BLOCK, 0])
            yb = self.softmax_rows(xb, yb)
        return y


def reference(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def run(aic_workers=1, aiv_workers=2, seed=0, trace=None):
    """Compiles, runs and checks against NumPy (FP32 softmax: rtol 1e-5, atol 1e-6). Returns RunStats."""
    rng = np.random.default_rng(seed)
    x = (3 * rng.standard_normal((ROWS, COLS))).astype(np.float32)
    y = np.zeros_like(x)
    stats = pypto.compile(RowSoftmax)(x, y, aic_workers=aic_workers, aiv_workers=aiv_workers, trace=trace)
    np.testing.assert_allclose(y, reference(x.astype(np.float64)), rtol=1e-5, atol=1e-6)
    return stats


if __name__ == "__main__":
    print("row_softmax: OK,", run())
