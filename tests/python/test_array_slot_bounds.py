"""pl.array slot indices known only at run time are checked there (pto2_array_slot): an index
outside 0..N-1 fails the run naming the DSL line, in L2 and HOST orchestrations alike. Before,
`w[i] = i` in a loop running past N wrote past the C array on the orchestration's stack (the
program fuzzer's HOST mutant `for k in pl.range(2147483649, 2147483648, -1): tids[k] = tid`,
seed 890000 #324, which g++ -Werror refused only because it saw the constant)."""
import importlib.util
import pathlib

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import host
from pypto.errors import PyptoError

L2 = """
import pypto.language as pl

@pl.program
class Slots:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 8], pl.FP32], s: pl.Scalar[pl.FP32],
          y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        y = pl.store(pl.mul(pl.load(x, [0, 0], [16, 8]), s), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 8], pl.FP32], y: pl.Out[pl.Tensor[[16, 8], pl.FP32]],
             n: pl.Scalar[pl.INT32], r: pl.Scalar[pl.INT32]) -> pl.Tensor[[16, 8], pl.FP32]:
        w = pl.array.create(4, pl.FP32)
        for i in pl.range(n):
            w[i] = pl.cast(i, pl.FP32)
        s = w[r]
        y = self.k(x, s, y)
        return y
"""


@pytest.fixture(scope="module")
def slots():
    return pypto.compile(pl.parse_program(L2, "slots.py"))


def test_run_time_indices_are_checked_in_the_generated_code(slots):
    cpp = slots.files["orchestration/main.cpp"]
    assert 'w[pto2_array_slot(i, 4, "slots.py", 17)] = ' in cpp
    assert 'w[pto2_array_slot(r, 4, "slots.py", 18)];' in cpp


def test_indices_in_range_run(slots):
    x = np.ones((16, 8), np.float32)
    y = slots(x, n=4, r=3)
    assert y[0, 0] == 3.0
    y = slots(x, n=0, r=0)              # nothing written: the slot keeps its zero
    assert y[0, 0] == 0.0


@pytest.mark.parametrize("n, r, bad, line", [(5, 0, 4, 17), (100000, 0, 4, 17), (4, 4, 4, 18), (4, -1, -1, 18),
                                             (4, -2147483648, -2147483648, 18)])
def test_an_index_out_of_range_fails_the_run_at_its_line(slots, n, r, bad, line):
    x = np.ones((16, 8), np.float32)
    with pytest.raises(PyptoError) as e:
        slots(x, n=n, r=r)
    msg = str(e.value)
    assert "slots.py:%d: array index %d is out of range 0..3" % (line, bad) in msg
    assert "negative indices do not count from the end" in msg


def test_a_constant_index_out_of_range_is_refused_at_its_line():
    with pytest.raises(PyptoError) as e:
        pl.parse_program(L2.replace("s = w[r]", "s = w[4]"), "slots.py")
    msg = str(e.value)
    assert "index 4 out of range for Array[4, FP32]" in msg and "slots.py:18" in msg
    assert "index a slot from 0 to 3" in msg


def _two_chips(tmp_path, index):
    """examples/two_chips.py with `tids[k] = tid` indexed by `index`, compiled for 2 chips."""
    src = (pathlib.Path(__file__).resolve().parents[2] / "examples" / "two_chips.py").read_text()
    assert "            tids[k] = tid\n" in src
    path = tmp_path / "two_chips_slots.py"
    path.write_text(src.replace("            tids[k] = tid\n", "            tids[%s] = tid\n" % index))
    spec = importlib.util.spec_from_file_location("two_chips_slots", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return host.compile_host(mod.TwoChips, "host_main", chips=2)


def test_host_orchestration_checks_its_task_id_array_slots(tmp_path):
    prog = _two_chips(tmp_path, "k * 2")
    assert "tids[pto2_array_slot(k * 2, 4, " in prog.files["host/host_main.cpp"]
    x = np.ones((64, 16), np.float32)
    z, y = np.zeros_like(x), np.zeros((16, 16), np.float32)
    with pytest.raises(PyptoError) as e:
        prog(x, z, y, 0.0, 1.0)
    assert "array index 4 is out of range 0..3" in str(e.value)


def test_host_orchestration_with_slots_in_range_runs(tmp_path):
    prog = _two_chips(tmp_path, "3 - k")
    x = np.full((64, 16), 2.0, np.float32)
    z, y = np.zeros_like(x), np.zeros((16, 16), np.float32)
    prog(x, z, y, 0.5, 2.0)
    np.testing.assert_allclose(y, np.full((16, 16), 4 * 3.0, np.float32))


def test_an_unsigned_index_above_int64_max_is_reported_as_itself():
    # pto2_array_slot took int64: a UINT64 index of 2**63 + 5 was refused, but printed negative.
    prog = pypto.compile(pl.parse_program(L2.replace("r: pl.Scalar[pl.INT32]", "r: pl.Scalar[pl.UINT64]"),
                                          "slots.py"))
    x = np.ones((16, 8), np.float32)
    assert prog(x, n=4, r=2)[0, 0] == 2.0
    with pytest.raises(PyptoError) as e:
        prog(x, n=4, r=2**63 + 5)
    assert "slots.py:18: array index 9223372036854775813 is out of range 0..3" in str(e.value)


@pytest.mark.parametrize("index, value", [("N + 1", 5), ("2 * 2", 4), ("N - 5", -1), ("(N - 1) * 3", 9)])
def test_an_index_of_literals_alone_is_checked_at_compile_time(index, value):
    # `w[N + 1]` with a module constant N was compiled and failed only when run.
    src = "N = 4\n" + L2.replace("s = w[r]", "s = w[%s]" % index)
    with pytest.raises(PyptoError) as e:
        pl.parse_program(src, "slots.py")
    msg = str(e.value)
    assert "index %d out of range for Array[4, FP32]" % value in msg and "slots.py:19" in msg


def test_an_index_of_literals_in_range_needs_no_run_time_check():
    src = "N = 4\n" + L2.replace("s = w[r]", "s = w[N - 1]")
    prog = pypto.compile(pl.parse_program(src, "slots.py"))
    assert "w[4 - 1];" in prog.files["orchestration/main.cpp"]
    assert prog(np.ones((16, 8), np.float32), n=4, r=0)[0, 0] == 3.0
