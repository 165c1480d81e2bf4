"""Split-K accumulation (docs/dsl.md: `pl.store(..., atomic=pl.AtomicType.Add)`, "kernels adding
into one tensor concurrently never lose an update") passes race_check=True: the kernel reports its
atomic adds as such (pto2_note_atomic_add) and two of them are no race. They were reported as
write/write races (6 for 4 tasks) and the checked run failed. A plain read of the accumulator left
unordered with them is still a race."""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto.runtime.loader import RaceError

SRC = '''import pypto.language as pl


@pl.program
class R:
    @pl.function(type=pl.FunctionType.InCore)
    def add_into(self, x: pl.Tensor[[16, 32], pl.FP32], acc: pl.InOut[pl.Tensor[[1, 32], pl.FP32]]) -> pl.Tensor[[1, 32], pl.FP32]:
        acc = pl.store(pl.col_sum(pl.load(x, [0, 0], [16, 32])), [0, 0], acc, atomic=pl.AtomicType.Add)
        return acc

    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, acc: pl.Tensor[[1, 32], pl.FP32], out: pl.Out[pl.Tensor[[1, 32], pl.FP32]]) -> pl.Tensor[[1, 32], pl.FP32]:
        out = pl.store(pl.load(acc, [0, 0], [1, 32]), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 32], pl.FP32], acc: pl.InOut[pl.Tensor[[1, 32], pl.FP32]],
             out: pl.Out[pl.Tensor[[1, 32], pl.FP32]]) -> pl.Tensor[[1, 32], pl.FP32]:
        ids = pl.array.create(4, pl.TASK_ID)
        with pl.manual_scope():
            for i in pl.parallel(4):
                acc, t = pl.submit(self.add_into, pl.tensor.slice(x, [16, 32], [i * 16, 0]), acc)
                ids[i] = t
READ
        return out
'''


def _args():
    x = np.random.default_rng(0).standard_normal((64, 32)).astype(np.float32)
    return x, np.zeros((1, 32), np.float32), np.zeros((1, 32), np.float32)


def test_concurrent_atomic_adds_pass_the_race_checker():
    ordered = "            out, u = pl.submit(self.copy, acc, out, deps=[ids])\n"   # after all four adds
    prog = pypto.compile(pl.parse_program(SRC.replace("READ\n", ordered), "r.py"))
    x, acc, out = _args()
    stats = prog(x, acc, out, race_check=True)
    assert stats.races == 0
    np.testing.assert_allclose(acc, x.sum(0, keepdims=True), atol=1e-4)
    np.testing.assert_allclose(out, acc)


def test_a_read_unordered_with_the_atomic_adds_is_still_a_race():
    read_inside = "            out, u = pl.submit(self.copy, acc, out)\n"     # no edge to the adds
    prog = pypto.compile(pl.parse_program(SRC.replace("READ\n", read_inside), "r.py"))
    with pytest.raises(RaceError, match="read after write") as ei:
        prog(*_args(), race_check=True)
    assert "'add_into'" in str(ei.value) and "'copy'" in str(ei.value)


def test_atomic_adds_of_a_tile_with_a_valid_shape_pass_the_race_checker():
    """A ragged split-K stores a tile with a valid shape (the store_valid path), which reported its
    atomic adds as plain writes: write/write races (session 54 tester G #1)."""
    valid = SRC.replace("pl.col_sum(pl.load(x, [0, 0], [16, 32]))", "pl.col_sum(pl.load(x, [0, 0], [16, 32], [16, 20]))")
    assert valid != SRC
    ordered = "            out, u = pl.submit(self.copy, acc, out, deps=[ids])\n"
    prog = pypto.compile(pl.parse_program(valid.replace("READ\n", ordered), "r_valid.py"))
    x, acc, out = _args()
    stats = prog(x, acc, out, race_check=True)
    assert stats.races == 0
    np.testing.assert_allclose(acc[:, :20], x.sum(0, keepdims=True)[:, :20], atol=1e-4)
    assert not acc[:, 20:].any()


TEMP = '''import pypto.language as pl


@pl.program
class T:
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, x: pl.Tensor[[1, 32], pl.FP32], acc: pl.Out[pl.Tensor[[1, 32], pl.FP32]]) -> pl.Tensor[[1, 32], pl.FP32]:
        acc = pl.store(pl.load(x, [0, 0], [1, 32]), [0, 0], acc)
        return acc

    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, acc: pl.Tensor[[1, 32], pl.FP32], out: pl.Out[pl.Tensor[[1, 32], pl.FP32]]) -> pl.Tensor[[1, 32], pl.FP32]:
        out = pl.store(pl.load(acc, [0, 0], [1, 32]), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[1, 32], pl.FP32], out: pl.Out[pl.Tensor[[1, 32], pl.FP32]]) -> pl.Tensor[[1, 32], pl.FP32]:
        partial = pl.create_tensor([1, 32], dtype=pl.FP32)
        with pl.manual_scope():
            partial, t = pl.submit(self.fill, x, partial)
            out, u = pl.submit(self.copy, partial, out)
        return out
'''


def test_a_race_on_a_created_tensor_names_it():
    """The report said "a tensor from alloc_tensors (pl.create_tensor)": in a program with several
    temporaries of one shape the user had to work out which (session 54 tester G #5)."""
    prog = pypto.compile(pl.parse_program(TEMP, "temp_race.py"))
    assert 'PTO2_TENSOR_NAMES(alloc_0, "partial");' in prog.files["orchestration/main.cpp"]
    with pytest.raises(RaceError, match=r"on tensor 'partial' \(pl.create_tensor\)"):
        prog(np.ones((1, 32), np.float32), np.zeros((1, 32), np.float32), race_check=True)
