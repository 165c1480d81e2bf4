"""pl.tensor.read / pl.tensor.write / pl.tensor.transpose of kernel-local values (spec
anchor_features §9): ConvertTensorToTileOps turns them into tile.read / tile.write /
tile.transpose when the operand is already a tile; a read of a kernel parameter loads the
1-element box, a transpose of one loads it whole. NumPy-checked runs (race-checked) and located
errors for what the tile set cannot express. Golden C++: tests/golden/anchor_local_tile_access/."""
import os

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto.errors import PyptoError
from pypto.ir import passes

from codegen_test_util import GOLDEN_DIR, load_single_program
from pass_test_util import assert_pass


def golden():
    return load_single_program(os.path.join(GOLDEN_DIR, "anchor_local_tile_access", "program.py"))


def test_read_write_transpose_of_local_values_become_tile_ops():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[8, 16], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
            t: pl.Tensor[[8, 16], pl.FP32] = pl.tensor.adds(x, 1.0)
            v = pl.tensor.read(t, [1, 2])
            t_1: pl.Tensor[[8, 16], pl.FP32] = pl.tensor.write(t, [0, 0], v)
            y_1: pl.Tensor[[16, 8], pl.FP32] = pl.tensor.assemble(y, pl.tensor.transpose(t_1, 0, 1), [0, 0])
            return y_1

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[8, 16], pl.FP32],
                 y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
            r = self.k(x, y)
            return r

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[8, 16], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
            t: pl.Tile[[8, 16], pl.FP32] = pl.adds(pl.load(x, [0, 0], [8, 16]), 1.0)
            v = pl.tile.read(t, [1, 2])
            t_1: pl.Tile[[8, 16], pl.FP32] = pl.tile.write(t, [0, 0], v)
            y_1 = pl.store(pl.tile.transpose(t_1, 0, 1), [0, 0], y)
            return y_1

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[8, 16], pl.FP32],
                 y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
            r = self.k(x, y)
            return r

    assert_pass(passes.ConvertTensorToTileOps(), Before, Expected)


def test_global_tensor_write_keeps_its_tensor_form():
    """A write into a parameter (global memory) stays tensor.write: the kernel's scalar store."""
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, y: pl.InOut[pl.Tensor[[4, 4], pl.FP32]]) -> pl.Tensor[[4, 4], pl.FP32]:
            y_1: pl.Tensor[[4, 4], pl.FP32] = pl.tensor.write(y, [1, 1], 3.0)
            return y_1

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, y: pl.InOut[pl.Tensor[[4, 4], pl.FP32]]) -> pl.Tensor[[4, 4], pl.FP32]:
            r = self.k(y)
            return r

    assert_pass(passes.ConvertTensorToTileOps(), Before, Before)


def test_golden_program_e2e_race_checked():
    compiled = pypto.compile(golden())
    x = np.random.default_rng(13).standard_normal((8, 16)).astype(np.float32)
    y = np.zeros((16, 8), np.float32)
    compiled(x, y, race_check=True)
    want = x + 1
    want[0, 0] = want[1, 2] * 2
    np.testing.assert_allclose(y, want.T, rtol=1e-6)


LOOP_SRC = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4, 8], pl.FP32], s: pl.Out[pl.Tensor[[8, 4], pl.FP32]]) -> pl.Tensor[[8, 4], pl.FP32]:
        for b in pl.parallel(2):
            with pl.at(level=pl.Level.CORE_GROUP):
                t = pl.mul(x, 2.0)
                acc = pl.tensor.read(t, [0, 0])
                for j in pl.range(1, 8):
                    acc = acc + pl.tensor.read(t, [b, j])
                t = pl.tensor.write(t, [b, 0], acc)
                tt = pl.tensor.transpose(t, 0, 1)
                s = pl.assemble(s, pl.tensor.slice(tt, [8, 2], [0, b * 2]), [0, b * 2])
        return s
'''


def test_reads_in_a_loop_and_write_per_task_e2e_race_checked():
    compiled = pypto.compile(pl.parse_program(LOOP_SRC, "t.py"))
    x = np.random.default_rng(3).standard_normal((4, 8)).astype(np.float32)
    s = np.zeros((8, 4), np.float32)
    compiled(x, s, race_check=True)
    want = np.zeros((8, 4), np.float32)
    for b in range(2):
        t = x * 2
        acc = t[0, 0] + t[b, 1:].sum()
        t[b, 0] = acc
        want[:, b * 2:b * 2 + 2] = t.T[:, b * 2:b * 2 + 2]
    np.testing.assert_allclose(s, want, rtol=1e-5)


def test_transpose_of_a_3d_local_value_is_a_located_error():
    src = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 8], pl.FP32],
             y: pl.Out[pl.Tensor[[2, 8, 4], pl.FP32]]) -> pl.Tensor[[2, 8, 4], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.reshape(pl.add(x, 1.0), [2, 4, 8])
            y = pl.assemble(y, pl.tensor.transpose(t, 1, 2), [0, 0, 0])
        return y
'''
    with pytest.raises(PyptoError) as ei:
        pypto.compile(pl.parse_program(src, "t.py"))
    e = ei.value
    assert "pl.tensor.transpose inside a kernel needs a 2-D value, got rank 3" in e.message, e.message
    assert "pl.reshape" in e.help
    assert e.file == "t.py" and e.line == 11, str(e)


def test_read_and_transpose_of_a_parameter_load_it():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[8, 16], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
            v = pl.tensor.read(x, [1, 2])
            y_1: pl.Tensor[[16, 8], pl.FP32] = pl.tensor.assemble(y, pl.tensor.muls(pl.tensor.transpose(x, 0, 1), v), [0, 0])
            return y_1

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[8, 16], pl.FP32],
                 y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
            r = self.k(x, y)
            return r

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[8, 16], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
            v = pl.tile.read(pl.load(x, [1, 2], [1, 1]), [0, 0])
            y_1 = pl.store(pl.muls(pl.tile.transpose(pl.load(x, [0, 0], [8, 16]), 0, 1), v), [0, 0], y)
            return y_1

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[8, 16], pl.FP32],
                 y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
            r = self.k(x, y)
            return r

    assert_pass(passes.ConvertTensorToTileOps(), Before, Expected)


PARAM_SRC = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        for b in pl.parallel(2):
            with pl.at(level=pl.Level.CORE_GROUP):
                s = x[b, 3]
                y = pl.assemble(y, pl.slice(pl.mul(pl.transpose(x, 0, 1), s), [8, 8], [b * 8, 0]), [b * 8, 0])
        return y
'''


def test_parameter_read_and_transpose_e2e_race_checked():
    compiled = pypto.compile(pl.parse_program(PARAM_SRC, "t.py"))
    x = np.random.default_rng(21).standard_normal((8, 16)).astype(np.float32)
    y = np.zeros((16, 8), np.float32)
    compiled(x, y, race_check=True)
    want = np.concatenate([(x.T * x[b, 3])[b * 8:b * 8 + 8] for b in range(2)])
    np.testing.assert_allclose(y, want, rtol=1e-6)


@pytest.mark.parametrize("write,name", [
    ("xt = pl.tensor.write(xt, [0, 0], 1.0)", "write"),
    ("xt = pl.tensor.assemble(xt, pl.tensor.full([2, 2], 1.0, dtype=pl.FP32), [0, 0])", "assemble"),
])
def test_write_into_a_transposed_parameter_is_a_located_error(write, name):
    src = f'''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.InOut[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        xt = pl.tensor.transpose(x, 0, 1)
        {write}
        return x

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.InOut[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        r = self.k(x)
        return r
'''
    with pytest.raises(PyptoError) as ei:
        pypto.compile(pl.parse_program(src, "t.py"))
    e = ei.value
    assert f"pl.tensor.{name} into a transposed kernel parameter" in e.message, e.message
    assert "transpose in the orchestration" in e.help
    assert e.file == "t.py" and e.line == 9, str(e)


def test_read_of_a_3d_parameter_is_a_located_error():
    src = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[2, 4, 8], pl.FP32], y: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            s = x[1, 2, 3]
            y = pl.tensor.write(y, [0, 0], s)
        return y
'''
    with pytest.raises(PyptoError) as ei:
        pypto.compile(pl.parse_program(src, "t.py"))
    e = ei.value
    assert "pl.tensor.read of a kernel parameter needs a 1-D or 2-D tensor, got rank 3" in e.message, e.message
    assert e.file == "t.py" and e.line == 9, str(e)
