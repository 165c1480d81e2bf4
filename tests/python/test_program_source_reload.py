"""@pl.program parses the class's file as it is now: a program file rewritten and loaded again
with importlib.util.module_from_spec + exec_module (no sys.modules entry, so the class's source is
found through its methods' file) compiled the *old* text, which linecache still held."""
import importlib.util
import os

import numpy as np

import pypto

SRC = '''import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[1, 4], pl.FP32], o: pl.Out[pl.Tensor[[1, 4], pl.FP32]]) -> pl.Tensor[[1, 4], pl.FP32]:
        o = pl.store(pl.muls(pl.load(x, [0, 0], [1, 4]), {S}), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[1, 4], pl.FP32], o: pl.Out[pl.Tensor[[1, 4], pl.FP32]]) -> pl.Tensor[[1, 4], pl.FP32]:
        o = self.k(x, o)
        return o
'''


def test_a_rewritten_file_loaded_again_is_parsed_as_it_is_now(tmp_path):
    path = tmp_path / "prog.py"
    for i, factor in enumerate(["2.0", "5.0"]):
        path.write_text(SRC.replace("{S}", factor))
        os.utime(path, (1_000_000_000 + i, 1_000_000_000 + i))   # a new mtime, without waiting
        spec = importlib.util.spec_from_file_location("reloaded_prog_%d" % i, str(path))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        prog = pypto.compile(mod.P)
        try:
            o = np.zeros((1, 4), np.float32)
            prog(np.ones((1, 4), np.float32), o)
        finally:
            prog.close()
        assert o[0, 0] == float(factor)
