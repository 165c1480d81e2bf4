"""What a valid shape costs or saves in a CPU kernel (docs/dsl.md, "Valid shapes in kernels").

    python benchmarks/valid_shape_bench.py [--repeat N]

One kernel, run as 64 tasks: load a [256, 256] FP32 tile, add, multiply, exp, row_max,
row_expand_sub, store. Three forms: no valid shape ("full"); `pl.load(x, [0, 0], [256, 256],
[n, 256])` with n = 256 (a dynamic valid shape that happens to cover the tile: the cost of the
valid-box code paths); and n = 16 (an edge tile: loops, reduction and store cover 16 rows).
Prints the median wall time per task over --repeat runs. No assertions (figures only).
"""
import argparse
import time

import numpy as np

import pypto
import pypto.language as pl

SRC = '''
import pypto.language as pl


@pl.program
class B:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[256, 256], pl.FP32], out: pl.Out[pl.Tensor[[256, 256], pl.FP32]],
          n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[256, 256], pl.FP32]:
        t = pl.load(x, [0, 0], [256, 256]VALID)
        u = pl.exp(pl.mul(pl.add(t, 1.0), 0.5))
        out = pl.store(pl.row_expand_sub(u, pl.row_max(u)), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[256, 256], pl.FP32], out: pl.Out[pl.Tensor[[256, 256], pl.FP32]],
             n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[256, 256], pl.FP32]:
        for i in pl.range(64):
            out = self.k(x, out, n)
        return out
'''
TASKS = 64


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args(argv)
    x = np.random.default_rng(0).standard_normal((256, 256)).astype(np.float32)
    rows = []
    for name, valid, n in (("full tile", "", 256), ("valid [n, 256], n = 256", ", [n, 256]", 256),
                           ("valid [n, 256], n = 16", ", [n, 256]", 16)):
        p = pypto.compile(pl.parse_program(SRC.replace("VALID", valid)))
        try:
            out = np.zeros_like(x)
            p(x, out, n)   # warm-up (build, first touch)
            ts = []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                p(x, out, n)
                ts.append(time.perf_counter() - t0)
        finally:
            p.close()
        us = float(np.median(ts)) / TASKS * 1e6
        rows.append((name, us))
        print(f"{name:26s} {us:8.1f} us per task (median of {args.repeat} runs of {TASKS} tasks)")
    return rows


if __name__ == "__main__":
    main()
