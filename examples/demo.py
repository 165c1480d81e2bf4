"""The main job (`make demo`): compile the attention example, run it on the CPU runtime,
check it against NumPy and write a trace.

    q, kt, v ──► per query block:  init ─► step(k-block 0) ─► ... ─► step(k-block 7) ─► finalize ─► out
                                   (2 query blocks: two independent chains on the workers)

Prints the generated files, the run statistics and where the trace went; open the trace in
https://ui.perfetto.dev or chrome://tracing. Exit status 0 when the results match NumPy.
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pypto  # noqa: E402
import online_softmax as example  # noqa: E402


def main() -> int:
    out_dir = os.path.join(os.getcwd(), "out")
    os.makedirs(out_dir, exist_ok=True)
    t0 = time.perf_counter()
    compiled = pypto.compile(example.OnlineSoftmax, output_dir=os.path.join(out_dir, "online_softmax"))
    t_compile = time.perf_counter() - t0
    print("compiled %s in %.2f s%s -> %s" % (compiled.entry, t_compile, " (cached)" if compiled.cached else "",
                                            compiled.output_dir))
    for path in sorted(compiled.files):
        print("  %-32s %5d lines" % (path, compiled.files[path].count("\n")))

    rng = np.random.default_rng(0)
    q = rng.standard_normal((example.SQ, example.D)).astype(np.float32)
    kt = rng.standard_normal((example.D, example.SK)).astype(np.float32)
    v = rng.standard_normal((example.SK, example.D)).astype(np.float32)
    out = np.zeros((example.SQ, example.D), np.float32)
    scale = float(1.0 / np.sqrt(example.D))
    trace = os.path.join(out_dir, "trace.json")
    stats = compiled(q, kt, v, scale, out, aic_workers=2, aiv_workers=2, trace=trace)

    expect = example.reference(q.astype(np.float64), kt.astype(np.float64), v.astype(np.float64), np.float32(scale))
    err = float(np.max(np.abs(out - expect)))
    ok = np.allclose(out, expect, rtol=1e-4, atol=1e-5)
    print("ran %d tasks in %.3f ms on 2 AIC + 2 AIV workers" % (stats.tasks, stats.wall_seconds * 1e3))
    print("attention output %s vs NumPy: max abs error %.2e -> %s" % (out.shape, err, "OK" if ok else "MISMATCH"))
    print("trace: %s" % trace)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
