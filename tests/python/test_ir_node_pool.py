"""IR nodes come from per-thread pools (include/pypto/ir/node_pool.h, docs/ir.md "Nodes come from
pools"). Programs parsed and compiled on several Python threads at once, and IR made on one thread
and freed on another after the first ended, must give the same code as one thread alone.

Runs in a subprocess, so that a pool corrupted across threads is a failed test, not a dead runner.
"""
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent('''
    import gc, sys, threading
    import pypto.language as pl
    from pypto import codegen

    SRC = """
    import pypto.language as pl

    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.INDEX],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), 1.0), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            t = pl.create_tensor([16, 16], dtype=pl.FP32)
    """ + "".join("        t = self.k(%s, %d, t)\\n" % ("a" if i == 0 else "t", i) for i in range(300)) + """
            out = self.k(t, 0, out)
            return out
    """

    def generate():
        return codegen.generate_orchestration(pl.parse_program(SRC, "p.py"), "main").code

    want = generate()
    bad = []

    def worker():
        for _ in range(15):
            if generate() != want:
                bad.append(1)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads: t.start()
    for t in threads: t.join()

    # Made on a thread that then ends; freed here, after that thread's pool is gone.
    kept = []
    t = threading.Thread(target=lambda: kept.append(pl.parse_program(SRC, "p.py")))
    t.start(); t.join()
    del kept[:]
    gc.collect()
    print("OK" if not bad and generate() == want else "MISMATCH %d" % len(bad))
''')


def test_compiles_on_several_threads_give_the_same_code():
    r = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip().endswith("OK"), r.stdout[-2000:] + r.stderr[-2000:]
