"""What valid regions cost or save in the reference tile ops (docs/dsl.md, "Valid regions in the
reference ops").

    python benchmarks/valid_ops_bench.py [--repeat N]

One kernel, run as 64 tasks: load two [256, 256] FP32 tiles, part_add them, col_sum, col_expand_add
the column sums back, store. Three forms: no valid shape ("full": part_add is the vectorised add);
a dynamic valid shape [n, 256] with n = 256 (the valid-region code paths over the whole tile:
the valid-region code paths); and n = 16 (an edge tile). Prints the median wall time and process
CPU time (all threads; steadier on a shared machine) per task over --repeat runs. No assertions
(figures only).
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
        u = pl.load(x, [0, 0], [256, 256]VALID)
        p = pl.part_add(t, u)
        out = pl.store(pl.col_expand_add(p, pl.col_sum(p)), [0, 0], out)
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
            ts, cs = [], []
            for _ in range(args.repeat):
                t0, c0 = time.perf_counter(), time.process_time()
                p(x, out, n)
                ts.append(time.perf_counter() - t0)
                cs.append(time.process_time() - c0)
        finally:
            p.close()
        us, cpu = float(np.median(ts)) / TASKS * 1e6, float(np.median(cs)) / TASKS * 1e6
        rows.append((name, us, cpu))
        print(f"{name:26s} {us:8.1f} us wall, {cpu:8.1f} us CPU per task (median of {args.repeat} runs of {TASKS} tasks)")
    return rows


if __name__ == "__main__":
    main()
