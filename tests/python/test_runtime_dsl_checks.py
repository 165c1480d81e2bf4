"""Run-time checks that name the DSL line (issue 15 / 16): what the compiler cannot decide
statically is checked by the generated orchestration before the task it concerns is submitted.

- pl.tensor.slice offsets / shapes at full width before they narrow to the runtime view's
  32 bits (an offset of 2^32 + 16 used to select row 16 silently);
- a call argument whose extent is dynamic against the callee's constant extent (a [32, 8] view
  for a [16, 8] parameter used to run on half the data);
- pl.range with a step known only at run time: Python's range semantics (a negative step counts
  down; it used to run zero iterations), and a zero step is an error (it used to loop forever);
- a kernel that fails names the DSL line that submitted it.
"""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto.compiler import RunError

SLICE_SRC = '''
import pypto.language as pl
M = pl.dynamic("M")

@pl.program
class Slices:
    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, x: pl.Tensor[[16, 8], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        y = pl.store(pl.load(x, [0, 0], [16, 8]), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[M, 8], pl.FP32], y: pl.Out[pl.Tensor[[M, 8], pl.FP32]],
             off: pl.Scalar[pl.INDEX], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[M, 8], pl.FP32]:
        a = pl.tensor.slice(x, [n, 8], [off, 0])
        b = pl.tensor.slice(y, [n, 8], [off, 0])
        b = self.copy(a, b)
        return y
'''
# DSL lines of SLICE_SRC (the file is named slices.py)
SLICE_A, CALL = 16, 18

RANGE_SRC = '''
import pypto.language as pl

@pl.program
class Ranges:
    @pl.function(type=pl.FunctionType.InCore)
    def bump(self, x: pl.Tensor[[1, 8], pl.FP32], y: pl.InOut[pl.Tensor[[64, 8], pl.FP32]],
             i: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64, 8], pl.FP32]:
        y = pl.store(pl.add(pl.load(y, [i, 0], [1, 8]), pl.load(x, [0, 0], [1, 8])), [i, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[1, 8], pl.FP32], y: pl.InOut[pl.Tensor[[64, 8], pl.FP32]],
             start: pl.Scalar[pl.INDEX], stop: pl.Scalar[pl.INDEX],
             step: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64, 8], pl.FP32]:
        for i in pl.range(start, stop, step):
            y = self.bump(x, y, i)
        return y
'''
RANGE_LINE = 16


@pytest.fixture(scope="module")
def slices():
    prog = pypto.compile(pl.parse_program(SLICE_SRC, filename="slices.py"))
    yield prog
    prog.close()


@pytest.fixture(scope="module")
def ranges():
    prog = pypto.compile(pl.parse_program(RANGE_SRC, filename="ranges.py"))
    yield prog
    prog.close()


def test_dynamic_slice_in_range_runs(slices):
    x = np.arange(64 * 8, dtype=np.float32).reshape(64, 8)
    y = np.zeros_like(x)
    slices(x, y, 16, 16)
    assert (y[16:32] == x[16:32]).all() and (y[:16] == 0).all() and (y[32:] == 0).all()


@pytest.mark.parametrize("off", [2 ** 32 + 16, 2 ** 63 - 1, -1])
def test_slice_offset_checked_at_full_width(slices, off):
    x = np.ones((64, 8), np.float32)
    y = np.zeros_like(x)
    with pytest.raises(RunError) as ei:
        slices(x, y, off, 16)
    msg = str(ei.value)
    assert "slices.py:%d: pl.tensor.slice 'a'" % SLICE_A in msg, msg
    assert "offset %d" % off in msg and "extent 64" in msg, msg
    assert (y == 0).all(), "nothing may be written"
    slices(x, y, 0, 16)      # the program stays usable
    assert (y[:16] == 1).all()


@pytest.mark.parametrize("off", [49, 64, 1000])
def test_slice_past_the_end_is_clamped(slices, off):
    # anchor_features §18: an overhang is trimmed (the kernel clips to the smaller view), an
    # offset at or past the end gives an empty view; nothing outside y is written.
    x = np.arange(64 * 8, dtype=np.float32).reshape(64, 8)
    y = np.zeros_like(x)
    slices(x, y, off, 16)
    assert (y[off:] == x[off:]).all() and (y[:off] == 0).all()


def test_slice_shape_checked_at_full_width(slices):
    x = np.ones((64, 8), np.float32)
    y = np.zeros_like(x)
    with pytest.raises(RunError, match=r"slices.py:%d: pl.tensor.slice 'a': shape 4294967312 on axis 0" % SLICE_A):
        slices(x, y, 0, 2 ** 32 + 16)
    assert (y == 0).all()


def test_dynamic_call_argument_extent_checked(slices):
    x = np.ones((64, 8), np.float32)
    y = np.zeros_like(x)
    with pytest.raises(RunError) as ei:
        slices(x, y, 0, 32)            # a [32, 8] view for copy's [16, 8] parameter
    msg = str(ei.value)
    assert "slices.py:%d: argument 'x' of 'copy' has extent 32 on axis 0" % CALL in msg, msg
    assert "declares 16" in msg
    assert (y == 0).all(), "the kernel must not run on half the data"


@pytest.mark.parametrize("start,stop,step", [
    (0, 64, 1), (0, 64, 7), (63, -1, -1), (63, 0, -5), (10, 0, 3), (0, 10, -1), (5, 5, 2),
    (0, 64, 2 ** 62), (63, 0, -(2 ** 63)),
])
def test_range_with_run_time_step_follows_python(ranges, start, stop, step):
    x = np.ones((1, 8), np.float32)
    y = np.zeros((64, 8), np.float32)
    ranges(x, y, start, stop, step)
    expect = np.zeros(64, np.float32)
    expect[list(range(start, stop, step))] = 1
    assert (y[:, 0] == expect).all(), (start, stop, step, y[:, 0])


def test_range_zero_step_is_an_error_not_a_hang(ranges):
    x = np.ones((1, 8), np.float32)
    y = np.zeros((64, 8), np.float32)
    with pytest.raises(RunError, match=r"ranges.py:%d: pl.range\(\) step is 0 at run time" % RANGE_LINE):
        ranges(x, y, 0, 64, 0)
    assert (y == 0).all()
    ranges(x, y, 0, 2, 1)
    assert (y[:2] == 1).all()


def test_failed_kernel_names_its_submission_line(ranges):
    x = np.ones((1, 8), np.float32)
    y = np.zeros((64, 8), np.float32)
    with pytest.raises(RunError) as ei:
        ranges(x, y, 70, 71, 1)       # row 70 of a 64-row tensor: the kernel's load fails
    msg = str(ei.value)
    assert "out of bounds" in msg and "ranges.py:%d" % (RANGE_LINE + 1) in msg, msg


EXTENT_SRC = '''
import pypto.language as pl

@pl.program
class Extents:
    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, x: pl.Tensor[[16, 8], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        y = pl.store(pl.load(x, [0, 0], [16, 8]), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 8], pl.FP32], y: pl.Out[pl.Tensor[[16, 8], pl.FP32]],
             n: pl.Scalar[pl.INDEX], cn: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 8], pl.FP32]:
        t = pl.create_tensor([n, 8], dtype=pl.FP32)
        u = pl.tensor.slice(t, [16, 8], [0, 0])
        u = self.copy(x, u)
        with pl.spmd(cn):
            y = self.copy(u, y)
        return y
'''
CREATE_LINE, SPMD_LINE = 15, 18


@pytest.fixture(scope="module")
def extents():
    prog = pypto.compile(pl.parse_program(EXTENT_SRC, filename="extents.py"))
    yield prog
    prog.close()


@pytest.mark.parametrize("n", [2 ** 32 + 16, -1])
def test_create_tensor_extent_checked_before_narrowing(extents, n):
    x = np.ones((16, 8), np.float32)
    y = np.zeros_like(x)
    with pytest.raises(RunError, match=r"extents.py:%d: tensor extent %d is out of range 0..4294967295" % (CREATE_LINE, n)):
        extents(x, y, n, 1)     # 2^32 + 16 used to allocate 16 rows silently
    assert (y == 0).all()
    extents(x, y, 16, 1)
    assert (y == 1).all()


@pytest.mark.parametrize("cn", [2 ** 32 + 2, -1, 2 ** 40, 0])   # 0 named no core_num before
def test_run_time_core_num_checked_at_full_width_naming_the_line(extents, cn):
    x = np.ones((16, 8), np.float32)
    y = np.zeros_like(x)
    with pytest.raises(RunError) as ei:
        extents(x, y, 16, cn)   # 2^32 + 2 used to launch 2 blocks silently
    msg = str(ei.value)
    assert "extents.py:%d: rt_submit_aiv_task" % SPMD_LINE in msg and "core_num" in msg, msg
    assert (y == 0).all()


HOST_RANGE_SRC = '''
import pypto.language as pl

@pl.program
class HostRange:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel_add(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                   c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(b, [0, 0], [16, 16])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_add(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                 c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = self.kernel_add(a, b, c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)
    def host_main(self, x: pl.Tensor[[16, 16], pl.FP32], acc: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
                  start: pl.Scalar[pl.INDEX], stop: pl.Scalar[pl.INDEX],
                  step: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
        for k in pl.range(start, stop, step):
            acc = self.chip_add(acc, x, acc)
        return acc
'''
HOST_RANGE_LINE = 22


@pytest.fixture(scope="module")
def host_ranges():
    prog = pypto.compile(pl.parse_program(HOST_RANGE_SRC, filename="host_range.py"))
    yield prog
    close = getattr(prog, "close", None)
    if close:
        close()


@pytest.mark.parametrize("start,stop,step", [(0, 5, 1), (0, 5, 2), (5, 0, -1), (5, 0, -2), (0, 5, -1)])
def test_host_range_with_run_time_step_follows_python(host_ranges, start, stop, step):
    x = np.ones((16, 16), np.float32)
    acc = np.zeros((16, 16), np.float32)
    host_ranges(x, acc, start, stop, step)
    assert (acc == len(range(start, stop, step))).all(), acc[0, 0]


def test_host_range_zero_step_is_an_error(host_ranges):
    x = np.ones((16, 16), np.float32)
    acc = np.zeros((16, 16), np.float32)
    with pytest.raises(RunError, match=r"host_range.py:%d: pl.range\(\) step is 0" % HOST_RANGE_LINE):
        host_ranges(x, acc, 0, 5, 0)


DIV_SRC = '''
import pypto.language as pl

@pl.program
class Divs:
    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, x: pl.Tensor[[16, 8], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        y = pl.store(pl.load(x, [0, 0], [16, 8]), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 8], pl.FP32], y: pl.Out[pl.Tensor[[64, 8], pl.FP32]],
             off: pl.Scalar[pl.INDEX], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64, 8], pl.FP32]:
        a = pl.tensor.slice(x, [16, 8], [off // n, 0])
        b = pl.tensor.slice(y, [16, 8], [(off % n) * 16, 0])
        b = self.copy(a, b)
        return y
'''
DIV_LINE = 15


@pytest.fixture(scope="module")
def divs():
    prog = pypto.compile(pl.parse_program(DIV_SRC, filename="divs.py"))
    yield prog
    prog.close()


@pytest.mark.parametrize("off, n", [(32, 2), (33, 2), (-32, -2), (-48, -3), (0, -1), (2, 2 ** 63 - 1)])
def test_run_time_floor_division_and_modulo_follow_python(divs, off, n):
    x = np.arange(64 * 8, dtype=np.float32).reshape(64, 8)
    y = np.zeros_like(x)
    divs(x, y, off, n)
    q, r = off // n, (off % n) * 16
    np.testing.assert_array_equal(y[r:r + 16], x[q:q + 16])


def test_run_time_division_by_zero_is_an_error_naming_the_line(divs):
    # Was a C++ integer division by zero in the generated orchestration: SIGFPE killed Python.
    x = np.zeros((64, 8), np.float32)
    with pytest.raises(RunError, match=r"divs.py:%d: integer division or modulo by zero at run time" % DIV_LINE):
        divs(x, np.zeros_like(x), 32, 0)
    divs(x, np.zeros_like(x), 32, 2)   # the program is still usable afterwards


def test_run_time_min_floor_divided_by_minus_one_wraps_not_a_crash(divs):
    # INT64_MIN // -1: the C++ division trapped (SIGFPE killed Python). It wraps to INT64_MIN, as
    # every DSL integer result and a kernel's // do; here that offset then leaves the tensor.
    x = np.zeros((64, 8), np.float32)
    with pytest.raises(RunError, match=r"divs.py:%d: .*offset -9223372036854775808" % DIV_LINE):
        divs(x, np.zeros_like(x), -2 ** 63, -1)
    divs(x, np.zeros_like(x), 32, 2)


def test_host_floor_division_follows_python_and_checks_its_divisor():
    # A HOST orchestration's `//` printed through the same checked helpers as a chip-level one:
    # a run-time 0 divisor was a SIGFPE in the HOST process.
    src = HOST_RANGE_SRC.replace("for k in pl.range(start, stop, step):", "for k in pl.range(start // step, stop):")
    prog = pypto.compile(pl.parse_program(src, filename="host_div.py"))
    try:
        x = np.ones((16, 16), np.float32)
        for start, stop, step in [(-7, 0, 2), (7, 5, -2), (4, 5, 1)]:
            acc = np.zeros((16, 16), np.float32)
            prog(x, acc, start, stop, step)
            assert (acc == len(range(start // step, stop))).all(), (start, step, acc[0, 0])
        with pytest.raises(RunError, match=r"host_div.py:%d: integer division or modulo by zero" % HOST_RANGE_LINE):
            prog(x, np.zeros((16, 16), np.float32), 3, 5, 0)
        acc = np.zeros((16, 16), np.float32)        # MIN // -1 wraps to MIN: range(MIN, MIN + 2)
        prog(x, acc, -2 ** 63, -2 ** 63 + 2, -1)
        assert (acc == 2).all()
    finally:
        close = getattr(prog, "close", None)
        if close:
            close()
