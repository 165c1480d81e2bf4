"""What a demanding caller may pass for a tensor parameter (docs/running.md, "Calling a program"):
each array is either handled with the right result or refused before anything runs with an
error naming the parameter -- never a crash, and never a silently wrong result.

The program computes y = 2 * x with its two row halves swapped, in two tasks (the top half of y
first, from the bottom half of x): an input that is the output array itself gives a wrong result
unless the call reads the input as it was before the call.
"""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto.compiler import ArgumentTypeError, ArgumentValueError

pytestmark = pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")   # np.matrix cases

SRC = """
import pypto.language as pl

@pl.program
class Swap:
    @pl.function(type=pl.FunctionType.InCore)
    def top(self, x: pl.Tensor[[16, 8], pl.FP32], y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        y = pl.store(pl.mul(pl.load(x, [8, 0], [8, 8]), 2.0), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def bottom(self, x: pl.Tensor[[16, 8], pl.FP32], y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        y = pl.store(pl.mul(pl.load(x, [0, 0], [8, 8]), 2.0), [8, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 8], pl.FP32], y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        y = self.top(x, y)
        y = self.bottom(x, y)
        return y
"""

# Two outputs and an InOut: arguments that are one array for two written parameters.
TWO_OUT_SRC = """
import pypto.language as pl

@pl.program
class TwoOut:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 8], pl.FP32], lo: pl.Out[pl.Tensor[[16, 8], pl.FP32]],
          hi: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> tuple[pl.Tensor[[16, 8], pl.FP32], pl.Tensor[[16, 8], pl.FP32]]:
        t = pl.load(x, [0, 0], [16, 8])
        lo = pl.store(pl.mul(t, 2.0), [0, 0], lo)
        hi = pl.store(pl.mul(t, 3.0), [0, 0], hi)
        return lo, hi

    @pl.function(type=pl.FunctionType.InCore)
    def acc(self, x: pl.Tensor[[16, 8], pl.FP32], a: pl.InOut[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        a = pl.store(pl.add(pl.load(a, [0, 0], [16, 8]), pl.load(x, [0, 0], [16, 8])), [0, 0], a)
        return a

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 8], pl.FP32], lo: pl.Out[pl.Tensor[[16, 8], pl.FP32]],
             hi: pl.Out[pl.Tensor[[16, 8], pl.FP32]], a: pl.InOut[pl.Tensor[[16, 8], pl.FP32]]
             ) -> tuple[pl.Tensor[[16, 8], pl.FP32], pl.Tensor[[16, 8], pl.FP32], pl.Tensor[[16, 8], pl.FP32]]:
        lo, hi = self.k(x, lo, hi)
        a = self.acc(x, a)
        return lo, hi, a
"""

from test_call_arguments import DYN_SRC  # noqa: E402 - one copy of the dynamic-M row copy program


@pytest.fixture(scope="module")
def swap():
    prog = pypto.compile(pl.parse_program(SRC, filename="swap.py"))
    yield prog
    prog.close()


@pytest.fixture(scope="module")
def two_out():
    prog = pypto.compile(pl.parse_program(TWO_OUT_SRC, filename="two_out.py"))
    yield prog
    prog.close()


@pytest.fixture(scope="module")
def dyn():
    prog = pypto.compile(pl.parse_program(DYN_SRC, filename="copy.py"))
    yield prog
    prog.close()


def _x():
    return np.arange(128, dtype=np.float32).reshape(16, 8) - 40.0


def _want(x):
    x = np.asarray(x, np.float32)
    return 2 * np.concatenate([x[8:], x[:8]])


def _read_only(a):
    a.setflags(write=False)
    return a


def _masked(a, mask=False):
    return np.ma.masked_array(a, mask=np.zeros(a.shape, bool) if not mask else (np.arange(a.size) % 7 == 0)
                              .reshape(a.shape))


# -- inputs: each is read with its values (copied when the runtime cannot read it in place) -------

INPUTS_OK = {
    "contiguous": lambda: _x(),
    # another dtype whose values pl.FP32 holds exactly: converted (the rule of pypto run --inputs)
    "bool": lambda: _x() > 0,
    "int32": lambda: _x().astype(np.int32),
    "int64": lambda: _x().astype(np.int64),
    "uint8 (non-negative)": lambda: (_x() + 40).astype(np.uint8),
    "float16": lambda: _x().astype(np.float16),
    "float64 of float32 values": lambda: _x().astype(np.float64),
    "big-endian float32": lambda: _x().astype(">f4"),
    "big-endian int16, strided": lambda: _x().astype(">i2")[::-1][::-1],
    "stepped slice": lambda: np.repeat(np.repeat(_x(), 2, axis=0), 3, axis=1)[::2, ::3],
    "transposed": lambda: np.ascontiguousarray(_x().T).T,
    "negative strides": lambda: np.ascontiguousarray(_x()[::-1, ::-1])[::-1, ::-1],
    "fortran order": lambda: np.asfortranarray(_x()),
    "read-only": lambda: _read_only(_x()),
    "read-only non-contiguous": lambda: _read_only(np.asfortranarray(_x())),
    "broadcast (stride 0)": lambda: np.broadcast_to(np.arange(8, dtype=np.float32), (16, 8)),
    "np.matrix": lambda: np.asmatrix(_x()),
    "memoryview": lambda: memoryview(_x()),
    "reshaped view of a bigger buffer": lambda: np.arange(256, dtype=np.float32)[64:192].reshape(16, 8),
}


@pytest.mark.parametrize("name", sorted(INPUTS_OK))
def test_input_layouts_give_the_right_result(swap, name):
    x = INPUTS_OK[name]()
    before = np.array(x, copy=True)
    y = np.zeros((16, 8), np.float32)
    swap(x, y)
    np.testing.assert_array_equal(y, _want(before))
    np.testing.assert_array_equal(np.asarray(x), before)      # an input is never written


# -- inputs refused, located at the parameter and with a hint --------------------------------------

INPUTS_REFUSED = {
    "float64 values float32 has not": (lambda: _x().astype(np.float64) + 0.1, ArgumentTypeError,
                                       r": parameter 'x' is pl.FP32 \(float32\) and got a float64 array: its value "
                                       r"-39.9 at index \(0, 0\) is not a float32 value", ".astype(np.float32)"),
    "int64 beyond 2^24": (lambda: _x().astype(np.int64) + 2 ** 24 + 41, ArgumentTypeError,
                          r"got an int64 array: its value 16777217 at index \(0, 0\) is not a float32 value "
                          r"\(converted it would be 16777216.0\)", ".astype(np.float32)"),
    "float64 beyond float32's range": (lambda: np.full((16, 8), 1e300), ArgumentTypeError, r"converted it would be inf",
                                "astype"),
    "object": (lambda: _x().astype(object), ArgumentTypeError, r"got an object array: only arrays of real numbers",
               "astype"),
    "structured": (lambda: np.zeros((16, 8), dtype=[("a", np.float32)]), ArgumentTypeError,
                   r"only arrays of real numbers", "astype"),
    "complex64": (lambda: _x().astype(np.complex64), ArgumentTypeError, r"got a complex64 array: only arrays of real",
                  "astype"),
    "wrong shape": (lambda: _x().reshape(8, 16), ArgumentValueError, r"has shape \(8, 16\), expected \(16, 8\)", ""),
    "wrong rank": (lambda: _x().reshape(128), ArgumentValueError, r"expected rank 2", ""),
    "rank 3": (lambda: _x().reshape(16, 8, 1), ArgumentValueError, r"expected rank 2", ""),
    "0-d array": (lambda: np.array(1.0, np.float32), ArgumentValueError, r"has shape \(\), expected rank 2", ""),
    "0-size array": (lambda: np.zeros((0, 8), np.float32), ArgumentValueError, r"axis 0 is 0, not 16", ""),
    "python float": (lambda: 1.0, ArgumentTypeError, r"must be a NumPy array .* got float", "np.zeros"),
    "python int": (lambda: 3, ArgumentTypeError, r"must be a NumPy array .* got int", "np.zeros"),
    "numpy scalar": (lambda: np.float32(1.0), ArgumentValueError, r"has shape \(\), expected rank 2", ""),
    "nested list": (lambda: _x().tolist(), ArgumentTypeError, r"must be a NumPy array .* got list", "np.zeros"),
    "None": (lambda: None, ArgumentTypeError, r"got NoneType", "np.zeros"),
    "masked array": (lambda: _masked(_x(), mask=True), ArgumentTypeError, r"is a masked array",
                     "filled"),
    "masked array, nothing masked": (lambda: _masked(_x()), ArgumentTypeError, r"is a masked array", "filled"),
}


@pytest.mark.parametrize("name", sorted(INPUTS_REFUSED))
def test_bad_inputs_are_refused_before_running(swap, name):
    make, cls, message, hint = INPUTS_REFUSED[name]
    y = np.full((16, 8), 5.0, np.float32)
    with pytest.raises(cls, match=message) as e:
        swap(make(), y)
    assert "argument 'x' of main(x, y)" in str(e.value)
    assert e.value.line > 0, "located at the parameter"
    assert hint in (e.value.help or "")
    assert (y == 5.0).all(), "nothing ran"


# -- outputs: written in place (another layout runs on a copy that is written back) --------------

def _out_base():
    return np.zeros((32, 16), np.float32)


def _writable_broadcast():
    return np.lib.stride_tricks.as_strided(np.zeros(8, np.float32), shape=(16, 8), strides=(0, 4))


OUTPUTS_REFUSED = {
    "read-only": (lambda: _read_only(np.zeros((16, 8), np.float32)), r"is read-only but is written", ""),
    "broadcast (stride 0)": (lambda: np.broadcast_to(np.zeros(8, np.float32), (16, 8)), r"read-only", ""),
    "writable broadcast (stride 0)": (_writable_broadcast, r"has elements that share memory \(strides \(0, 4\)",
                                      "distinct"),
    "overlapping rows": (lambda: np.lib.stride_tricks.as_strided(np.zeros(64, np.float32), shape=(16, 8),
                                                                 strides=(8, 4)), r"has elements that share memory", ""),
    "big-endian": (lambda: np.zeros((16, 8), ">f4"), r"has dtype >f4", ".astype(np.float32)"),
    "float64": (lambda: np.zeros((16, 8), np.float64), r"has dtype float64, expected pl.FP32 \(float32\); pl.Out "
                r"tensors are written in place, so they are not converted", "astype"),
    "0-d array": (lambda: np.array(0.0, np.float32), r"expected rank 2", ""),
    "masked array": (lambda: _masked(np.zeros((16, 8), np.float32)), r"is a masked array", "getdata"),
    "python list": (lambda: np.zeros((16, 8), np.float32).tolist(), r"must be a NumPy array", ""),
}


@pytest.mark.parametrize("name", sorted(OUTPUTS_REFUSED))
def test_bad_outputs_are_refused_before_running(swap, name):
    make, message, hint = OUTPUTS_REFUSED[name]
    y = make()
    before = np.array(y, copy=True) if not isinstance(y, list) else None
    with pytest.raises((ArgumentTypeError, ArgumentValueError), match=message) as e:
        swap(_x(), y)
    assert "argument 'y' of main(x, y)" in str(e.value)
    assert e.value.line > 0
    assert hint in (e.value.help or "")
    if before is not None:
        np.testing.assert_array_equal(np.asarray(y), before)


OUTPUTS_OK = {
    "contiguous": lambda: np.zeros((16, 8), np.float32),
    "np.matrix": lambda: np.asmatrix(np.zeros((16, 8), np.float32)),
    "row slice of a bigger buffer": lambda: _out_base().reshape(64, 8)[16:32],
    "size-1 axis with any stride": lambda: np.zeros((16, 8, 2), np.float32)[:, :, 0:1].reshape(16, 8) * 0,
    "memoryview": lambda: memoryview(np.zeros((16, 8), np.float32)),
}


@pytest.mark.parametrize("name", sorted(OUTPUTS_OK))
def test_output_layouts_get_the_result(swap, name):
    y = OUTPUTS_OK[name]()
    x = _x()
    swap(x, y)
    np.testing.assert_array_equal(np.asarray(y), _want(x))


# Views the runtime cannot address as one row-major block: (the view, the buffer it lies in).
def _in_buffer(make_view):
    def make():
        base = np.full((40, 40), -7.0, np.float32)
        return make_view(base), base
    return make


STRIDED_OUTPUTS = {
    "fortran order": lambda: (lambda a: (a, a))(np.asfortranarray(np.full((16, 8), -7.0, np.float32))),
    "transposed": _in_buffer(lambda b: b[:8, :16].T),
    "stepped slice": _in_buffer(lambda b: b[::2, ::5][:16, :8]),
    "column slice": _in_buffer(lambda b: b[3:19, 5:13]),
    "negative strides": _in_buffer(lambda b: b[19:3:-1, 12:4:-1]),
    "misaligned": lambda: (lambda buf: (buf[1:1 + 512].view(np.float32).reshape(16, 8), buf))(np.zeros(513, np.uint8)),
}


@pytest.mark.parametrize("name", sorted(STRIDED_OUTPUTS))
def test_strided_and_misaligned_outputs_are_written_back(swap, name):
    """A written array the runtime cannot address in place runs on a contiguous copy, copied back
    after the run: the view gets the result, the rest of its buffer is untouched."""
    y, base = STRIDED_OUTPUTS[name]()
    assert not (y.flags.c_contiguous and y.flags.aligned)
    outside = np.ones(base.shape, bool)
    np.copyto(y, np.float32(0))    # mark the view's elements in the buffer (only it reads zero)
    if base.dtype == np.float32:
        outside = base != 0
        kept = base[outside].copy()
    x = _x()
    swap(x, y)
    np.testing.assert_array_equal(y, _want(x))
    if base.dtype == np.float32:
        np.testing.assert_array_equal(base[outside], kept)


def test_strided_output_sharing_memory_with_another_written_argument_is_refused(two_out):
    buf = np.zeros((16, 16), np.float32)
    x = _x()
    with pytest.raises(ArgumentValueError, match=r"'lo' and 'a' share memory, and both are written") as e:
        two_out(x, buf[:, ::2], np.zeros((16, 8), np.float32), buf[:, :8])
    assert e.value.line > 0
    assert (buf == 0).all(), "nothing ran"
    two_out(x, buf[:, ::2], buf[:, 1::2], np.zeros((16, 8), np.float32))   # interleaved columns: distinct
    np.testing.assert_array_equal(buf[:, ::2], 2 * x)
    np.testing.assert_array_equal(buf[:, 1::2], 3 * x)


def test_strided_output_over_the_input_reads_the_input_as_it_was(swap):
    mem = np.arange(256, dtype=np.float32) - 100
    x = mem[:128].reshape(16, 8)                # contiguous: the kernels read the caller's memory
    y = mem[::2].reshape(16, 8)                 # every other element: half of them are x's
    want = _want(x.copy())
    swap(x, y)
    np.testing.assert_array_equal(y, want)


# -- aliasing: one array for two parameters ------------------------------------------------------

def test_the_output_array_as_the_input_reads_the_input_as_it_was(swap):
    a = _x()
    want = _want(a)
    for _ in range(3):   # the same answer every time, from both call paths
        a = _x()
        swap(a, a)
        np.testing.assert_array_equal(a, want)
        a = _x()
        swap(x=a, y=a)
        np.testing.assert_array_equal(a, want)


def test_another_view_of_the_output_memory_as_the_input(swap):
    buf = np.arange(128, dtype=np.float32) - 40.0
    want = _want(buf.reshape(16, 8))
    swap(buf.reshape(16, 8), buf.reshape(16, 8)[:, :])   # two view objects, same memory and shape
    np.testing.assert_array_equal(buf.reshape(16, 8), want)


def test_a_strided_view_of_the_output_as_the_input_is_read_as_it_was(swap):
    a = _x()
    want = _want(a[::-1])
    swap(a[::-1], a)      # the reversed view is copied (not C-contiguous) before anything runs
    np.testing.assert_array_equal(a, want)


def test_overlapping_different_views_are_refused(swap):
    buf = np.zeros((24, 8), np.float32)
    with pytest.raises(ArgumentValueError, match="different views of overlapping memory"):
        swap(buf[0:16], buf[8:24])
    flat = np.zeros(129, np.float32)
    with pytest.raises(ArgumentValueError, match="different views of overlapping memory"):
        swap(flat[1:].reshape(16, 8), flat[:-1].reshape(16, 8))
    same_bytes = np.full((16, 8), 3.0, np.float32)
    swap(same_bytes.view(np.int32), same_bytes)   # another dtype: an In converted (a copy), so no overlap
    np.testing.assert_array_equal(same_bytes, 2.0 * np.float32(3.0).view(np.int32))


def test_one_array_for_two_written_parameters_is_refused(two_out):
    x = _x()
    a = np.zeros((16, 8), np.float32)
    with pytest.raises(ArgumentValueError, match=r"'lo' and 'hi' are the same array, and both are written") as e:
        two_out(x, a, a, np.zeros((16, 8), np.float32))
    assert "one result would overwrite the other" in str(e.value)
    with pytest.raises(ArgumentValueError, match=r"'hi' and 'a' are the same array, and both are written"):
        two_out(x, np.zeros((16, 8), np.float32), a, a)
    assert (a == 0).all()


def test_the_input_as_an_inout_is_read_as_it_was(two_out):
    x = _x()
    lo, hi = np.zeros((16, 8), np.float32), np.zeros((16, 8), np.float32)
    two_out(x, lo, hi, x)    # a += x with a is x: 2 * x
    np.testing.assert_array_equal(x, 2 * _x())
    np.testing.assert_array_equal(lo, 2 * _x())


def test_the_same_input_twice_and_disjoint_views_are_fine(two_out):
    buf = np.zeros((64, 8), np.float32)
    x = buf[0:16]
    x[...] = _x()
    two_out(x, buf[16:32], buf[32:48], buf[48:64])
    np.testing.assert_array_equal(buf[16:32], 2 * _x())
    np.testing.assert_array_equal(buf[32:48], 3 * _x())
    np.testing.assert_array_equal(buf[48:64], _x())


# -- 0-size tensors (a dynamic dimension of 0) ----------------------------------------------------

def test_zero_size_arrays_run_no_task(dyn):
    x = np.zeros((0, 8), np.float32)
    y = np.zeros((0, 8), np.float32)
    stats = dyn(x, y)
    assert stats.tasks_executed == 0
    out = dyn(np.zeros((0, 8), np.float32)[::-1])      # allocated for the caller, of extent 0
    assert out.shape == (0, 8)


def test_zero_size_views_of_one_buffer_do_not_overlap(dyn):
    buf = np.zeros((16, 8), np.float32)
    dyn(buf[4:4], buf[4:4])
    dyn(buf[3:3], buf[5:5])


# -- torch tensors (installed with scripts/setup.sh bench) ----------------------------------------

def test_torch_tensors_in_every_layout():
    torch = pytest.importorskip("torch")
    prog = pypto.compile(pl.parse_program(SRC, filename="swap.py"))
    x = torch.from_numpy(_x())
    want = _want(_x())
    for tx in (x, x.t().contiguous().t(), x[:, :].clone(), torch.from_numpy(np.asfortranarray(_x()))):
        y = torch.zeros(16, 8)
        prog(tx, y)
        np.testing.assert_array_equal(y.numpy(), want)
    np.testing.assert_array_equal(prog(x).numpy(), want)            # output allocated as torch
    np.testing.assert_array_equal(prog(x.double()).numpy(), want)   # float32 values: converted
    with pytest.raises(ArgumentTypeError, match=r"got a float64 array: its value -39.9") as e:
        prog(x.double() + 0.1, torch.zeros(16, 8))
    assert ".to(torch.float32)" in e.value.help
    with pytest.raises(ArgumentTypeError, match=r"has dtype torch.bfloat16, expected pl.FP32"):
        prog(x.bfloat16(), torch.zeros(16, 8))     # viewed as its uint16 bits: no values to convert
    with pytest.raises(ArgumentTypeError, match=r"has dtype torch.float64, expected pl.FP32 \(float32\); pl.Out "
                                                r"tensors are written in place, so they are not converted"):
        prog(x, torch.zeros(16, 8, dtype=torch.float64))
    yt = torch.zeros(8, 16)
    prog(x, yt.t())                                                  # a transposed output: written back
    np.testing.assert_array_equal(yt.t().numpy(), want)
    with pytest.raises(ArgumentValueError, match="'x' and 'y' are different views"):
        big = torch.zeros(24, 8)
        prog(big[0:16], big[8:24])
    a = x.clone()
    prog(a, a)                                                       # read as it was
    np.testing.assert_array_equal(a.numpy(), want)
    prog.close()


# -- pypto run --inputs: the same sweep through an .npz file --------------------------------------
# An .npz holds plain arrays (no views or subclasses), of any dtype and byte order, in either
# memory order. A dtype is converted when that keeps the values (docs/running.md, "Named arrays").

def _x_as(dtype):
    return _x().astype(dtype)


CLI_INPUTS_OK = {
    "float32": lambda: _x(),
    "fortran order": lambda: np.asfortranarray(_x()),
    "big-endian float32": lambda: _x_as(">f4"),
    "big-endian float64": lambda: _x_as(">f8"),
    "float64": lambda: _x_as(np.float64),
    "int32": lambda: _x_as(np.int32),
    "big-endian int16": lambda: _x_as(">i2"),
    "float16": lambda: _x_as(np.float16),
}

CLI_INPUTS_REFUSED = {
    "complex": (lambda: _x_as(np.complex64), "only arrays of real numbers or booleans convert"),
    "string": (lambda: _x_as(str), "only arrays of real numbers or booleans convert"),
    "structured": (lambda: np.zeros((16, 8), dtype=[("a", np.float32)]), "only arrays of real numbers or booleans convert"),
    "float64 values float32 has not": (lambda: _x_as(np.float64) / 3, "its value -13.333333333333334 at index (0, 0) "
                                       "is not a float32 value"),
    "wrong shape": (lambda: _x().reshape(8, 16), "'x' has shape (8, 16), the parameter needs (16, 8)"),
    "0-d": (lambda: np.array(1.0, np.float32), "'x' has shape (), the parameter needs (16, 8)"),
    "0-size": (lambda: np.zeros((0, 8), np.float32), "'x' has shape (0, 8), the parameter needs (16, 8)"),
}


@pytest.fixture(scope="module")
def swap_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("prog") / "swap.py"
    path.write_text(SRC)
    return str(path)


def _cli_err(capsys):
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return err


@pytest.mark.parametrize("name", sorted(CLI_INPUTS_OK))
def test_cli_inputs_are_converted_with_their_values(swap_file, tmp_path, capsys, name):
    from pypto import cli
    x = CLI_INPUTS_OK[name]()
    np.savez(tmp_path / "in.npz", x=x, y=np.asfortranarray(np.full((16, 8), 9.0, np.float32)))
    assert cli.main(["run", swap_file, "--inputs", str(tmp_path / "in.npz"), "--save", str(tmp_path / "out.npz")]) == 0
    with np.load(tmp_path / "out.npz") as saved:
        np.testing.assert_array_equal(saved["y"], _want(x.astype(np.float32)))


@pytest.mark.parametrize("name", sorted(CLI_INPUTS_REFUSED))
def test_cli_inputs_refused_name_the_array(swap_file, tmp_path, capsys, name):
    from pypto import cli
    make, message = CLI_INPUTS_REFUSED[name]
    np.savez(tmp_path / "in.npz", x=make())
    assert cli.main(["run", swap_file, "--inputs", str(tmp_path / "in.npz")]) == 2
    err = _cli_err(capsys)
    assert message in err and "'x'" in err, err


def _no_compile(monkeypatch):
    import pypto as pypto_mod

    def refuse(*a, **k):
        raise AssertionError("pypto.compile called although the --inputs / --check file is refused")
    monkeypatch.setattr(pypto_mod, "compile", refuse)


@pytest.mark.parametrize("flag", ["--inputs", "--check"])
@pytest.mark.parametrize("save", [np.savez, np.savez_compressed])
def test_cli_object_arrays_are_refused_before_compiling(swap_file, tmp_path, capsys, monkeypatch, flag, save):
    from pypto import cli
    _no_compile(monkeypatch)
    path = str(tmp_path / "obj.npz")
    save(path, y=np.zeros((16, 8), np.float32), x=np.array([[1.0, None]], dtype=object))
    assert cli.main(["run", swap_file, flag, path]) == 2
    err = _cli_err(capsys)
    assert "%s: array 'x' in %s holds Python objects (dtype object)" % (flag, path) in err, err
    assert "np.savez(path, x=np.asarray(a, dtype=np.float32))" in err


@pytest.mark.parametrize("protocol", [2, 4, 5])
def test_cli_pickle_is_refused_before_compiling(swap_file, tmp_path, capsys, monkeypatch, protocol):
    import pickle
    from pypto import cli
    _no_compile(monkeypatch)
    path = str(tmp_path / "in.pkl")
    with open(path, "wb") as f:
        pickle.dump({"x": _x()}, f, protocol=protocol)
    assert cli.main(["run", swap_file, "--inputs", path]) == 2
    assert "--inputs: %s is not a NumPy .npz file: it is a pickle, which pypto does not load" % path in _cli_err(capsys)


def test_cli_member_that_is_no_npy_array_is_refused_before_compiling(swap_file, tmp_path, capsys, monkeypatch):
    import zipfile
    from pypto import cli
    _no_compile(monkeypatch)
    path = str(tmp_path / "odd.npz")
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("x.npy", b"not an array")   # np.load returned these bytes: a traceback after the build
    assert cli.main(["run", swap_file, "--inputs", path]) == 2
    assert "--inputs: member 'x.npy' of %s is not a .npy array" % path in _cli_err(capsys)


def test_cli_damaged_member_header_is_refused_before_compiling(swap_file, tmp_path, capsys, monkeypatch):
    import zipfile
    from pypto import cli
    _no_compile(monkeypatch)
    path = str(tmp_path / "bad.npz")
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("x.npy", b"\x93NUMPY\x01\x00\x10\x00{'descr': <f4'  \n")
    assert cli.main(["run", swap_file, "--inputs", path]) == 2
    assert "--inputs: %s is not a NumPy .npz file (" % path in _cli_err(capsys)


def test_cli_graph_object_arrays_are_refused_before_compiling(swap_file, tmp_path, capsys, monkeypatch):
    from pypto import cli
    _no_compile(monkeypatch)
    path = str(tmp_path / "obj.npz")
    np.savez(path, x=np.array([1, None], dtype=object))
    assert cli.main(["graph", swap_file, "--inputs", path, "-o", str(tmp_path / "g.dot")]) == 2
    assert "--inputs: array 'x' in %s holds Python objects" % path in _cli_err(capsys)


# -- one rule on both paths: every dtype pair, through the call's checker and pypto run's loader ---
# An In array of another dtype is converted when every value converts exactly, else refused with
# one message text on both paths (naming the parameter, the value that would change, the fix).
# The expectation comes from an oracle independent of the implementation: exact rational
# arithmetic (fractions.Fraction) on each value against the parameter type's integer range or
# float format.

from fractions import Fraction  # noqa: E402

_TARGETS = ["FP32", "FP16", "BF16", "INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64", "BOOL"]
_SOURCES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
            "float64", ">f4", ">i8", "complex64"]


def _values(src):
    """Arrays of dtype ``src``: 0/1 (exact into every number type), then the dtype's edges."""
    dt = np.dtype(src)
    small = np.array([0, 1, 1, 0], dtype=dt)
    if dt.kind == "b":
        return [small]
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return [small, np.array([0, 1, info.max, 2], dtype=dt), np.array([info.min, 0, 5, 7], dtype=dt),
                np.array([2 ** 24 + 1 if info.max > 2 ** 24 else 3, 0, 1, 1], dtype=dt)]
    if dt.kind == "c":
        return [small, np.array([1 + 2j, 0, 0, 0], dtype=dt)]
    with np.errstate(over="ignore"):   # 2^31 and 6e4 are inf in float16: an edge as good as any
        return _float_values(dt, small)


def _float_values(dt, small):
    return [small, np.array([0.1, 1, 0, 0], dtype=dt), np.array([-3.0, 255.0, 2.0 ** 31, 0.5], dtype=dt),
            np.array([np.nan, np.inf, -0.0, 1.0], dtype=dt), np.array([1e300 if dt.itemsize == 8 else 6e4, 0, 0, 0], dtype=dt),
            np.array([300.0, -1.0, 65504.0, 2.0], dtype=dt)]


def bfloat16_dtype():
    """ml_dtypes' bfloat16, or None: the oracle models both (with it, pl.BF16 arrays are values)."""
    try:
        import ml_dtypes
    except ImportError:
        return None
    return np.dtype(ml_dtypes.bfloat16)


def _exact_in(v, target):
    """Whether the value ``v`` (a NumPy scalar) is a value of DSL dtype ``target``."""
    from pypto.runtime.args import numpy_dtype
    if isinstance(v, (complex, np.complexfloating)):
        return None            # not a real number: refused whatever it holds
    if isinstance(v, (bool, np.bool_)):
        return True            # 0 / 1: a value of every number type
    if isinstance(v, (float, np.floating)) and not np.isfinite(v):
        return target in ("FP32", "FP16") or (target == "BF16" and bfloat16_dtype() is not None)   # float formats only
    q = Fraction(int(v)) if isinstance(v, (int, np.integer)) else Fraction(float(v))
    if target == "BOOL":
        return q in (0, 1)
    if target in ("FP32", "FP16", "BF16"):   # BF16 here only with ml_dtypes: its arrays are then values
        with np.errstate(all="ignore"):
            r = np.array(float(q) if abs(q) < 2 ** 1000 else np.inf, dtype=numpy_dtype(target))
        return bool(np.isfinite(r)) and Fraction(float(r)) == q
    info = np.iinfo(numpy_dtype(target))
    return q.denominator == 1 and info.min <= q <= info.max


def _expect(arr, target):
    """Whether the oracle says ``arr`` converts to DSL dtype ``target``."""
    if target == "BF16" and (bfloat16_dtype() is None or arr.dtype == np.uint16):
        return arr.dtype == np.uint16        # raw bits: nothing else converts (with ml_dtypes, bits still pass)
    if arr.dtype.kind == "c":
        return False
    return all(_exact_in(v, target) for v in arr.reshape(-1))


@pytest.mark.parametrize("target", _TARGETS)
@pytest.mark.parametrize("src", _SOURCES)
def test_every_dtype_pair_gets_one_rule_on_both_paths(src, target):
    from pypto.cli.arrays import load_inputs
    from pypto.cli.common import CliError
    from pypto.runtime.args import ParamSpec, bind_and_check, numpy_dtype
    spec = [ParamSpec("x", "tensor", target, (4,), "In", 0)]
    want_dtype = numpy_dtype(target)
    for arr in _values(src):
        expect = _expect(arr, target)
        call_error = cli_error = None
        try:
            got_call = bind_and_check(spec, "main", (arr,)).keep[0]
        except ArgumentTypeError as e:
            call_error = e
        try:
            got_cli = load_inputs("in.npz", spec, [np.zeros(4, want_dtype)], {"x": arr})[0]
        except CliError as e:
            cli_error = e
        what = "%s %r -> pl.%s" % (src, arr.tolist(), target)
        if expect:
            assert call_error is None and cli_error is None, (what, call_error, cli_error)
            bits = target == "BF16" and arr.dtype == np.uint16   # raw bits pass as they are
            want = arr.dtype if bits else want_dtype
            assert got_call.dtype == want and got_cli.dtype == want, what
            np.testing.assert_array_equal(got_call, got_cli, err_msg=what)
            with np.errstate(all="ignore"):
                np.testing.assert_array_equal(got_call, arr.astype(want), err_msg=what)   # the values, exactly
            continue
        assert call_error is not None and cli_error is not None, (what, "converted although a value would change")
        text, fix = call_error.message.split(": ", 1)[1], call_error.help
        assert text.startswith("parameter 'x' is pl.%s" % target), (what, text)
        assert fix, what
        assert str(cli_error) == "--inputs: %s; %s" % (text, fix), (what, str(cli_error), text)


def test_a_bool_array_runs_on_both_paths_with_the_same_result(swap, swap_file, tmp_path, capsys):
    from pypto import cli
    x = _x() > 0
    y = np.zeros((16, 8), np.float32)
    swap(x, y)
    np.testing.assert_array_equal(y, _want(x.astype(np.float32)))
    np.savez(tmp_path / "in.npz", x=x)
    assert cli.main(["run", swap_file, "--inputs", str(tmp_path / "in.npz"), "--save", str(tmp_path / "out.npz")]) == 0
    with np.load(tmp_path / "out.npz") as saved:
        np.testing.assert_array_equal(saved["y"], y)


def test_a_refused_array_gets_one_message_on_both_paths(swap, swap_file, tmp_path, capsys):
    from pypto import cli
    x = _x().astype(np.float64) / 3      # values float32 does not hold
    with pytest.raises(ArgumentTypeError) as e:
        swap(x, np.zeros((16, 8), np.float32))
    text = ("parameter 'x' is pl.FP32 (float32) and got a float64 array: its value -13.333333333333334 at index (0, 0) "
            "is not a float32 value (converted it would be -13.333333015441895)")
    assert "argument 'x' of main(x, y): " + text in str(e.value) and e.value.line > 0
    assert e.value.help == "convert it with .astype(np.float32) if that change is what you mean"
    np.savez(tmp_path / "in.npz", x=x)
    assert cli.main(["run", swap_file, "--inputs", str(tmp_path / "in.npz")]) == 2
    assert "--inputs: %s; %s" % (text, e.value.help) in _cli_err(capsys)


# -- scalars: a 0-d array (what an .npz holds for a scalar), a 1-element array, on both paths -----
# The call and pypto run --inputs check a scalar with one function (pypto.runtime.args.scalar_bits):
# the same values pass, with the same bits, and the same are refused with the same text. The
# expectation is the documented rule, written out here: float parameters take real numbers
# (not bools), rounded to float32; integer parameters integers in range (not floats, not bools);
# pl.BOOL a bool or 0 / 1.

_SCALAR_VALUES = [np.array(True), np.array(False), np.array(0), np.array(1), np.array(2), np.array(-1),
                  np.array(2 ** 40), np.array(2 ** 64 - 1, np.uint64), np.array(3, np.int8), np.array(3.0),
                  np.array(2.5, np.float32), np.array(1e40), np.array(np.inf), np.array(1 + 0j), np.array("3"),
                  np.array([3]), np.array([[1.5]]), np.float64(0.5), np.int32(7)]
_SCALAR_RANGE = {"INT32": (-2 ** 31, 2 ** 31 - 1), "INDEX": (-2 ** 63, 2 ** 63 - 1), "UINT8": (0, 255), "BOOL": (0, 1)}


def _scalar_expected(v, dtype):
    if np.ndim(v) != 0 or np.asarray(v).dtype.kind not in "biuf":
        return False
    x = np.asarray(v).item()
    if dtype == "FP32":
        return not isinstance(x, bool) and (not np.isfinite(x) or abs(x) <= float(np.finfo(np.float32).max))
    lo, hi = _SCALAR_RANGE[dtype]
    if dtype == "BOOL":
        return isinstance(x, (bool, int)) and x in (0, 1)
    return isinstance(x, int) and not isinstance(x, bool) and lo <= x <= hi


@pytest.mark.parametrize("dtype", ["FP32", "INT32", "INDEX", "UINT8", "BOOL"])
def test_scalar_values_get_one_rule_on_both_paths(dtype):
    from pypto.cli.arrays import load_inputs
    from pypto.cli.common import CliError
    from pypto.errors import PyptoError
    from pypto.runtime.args import ParamSpec, bind_and_check
    spec = [ParamSpec("n", "scalar", dtype, (), "In", 0)]
    for v in _SCALAR_VALUES:
        what = "%r -> pl.Scalar[pl.%s]" % (v, dtype)
        call = cli = call_error = cli_error = None
        try:
            call = bind_and_check(spec, "main", (v,)).scalars
        except PyptoError as e:
            call_error = e
        try:
            value = load_inputs("in.npz", spec, [None], {"n": np.asarray(v)})[0]
            cli = bind_and_check(spec, "main", (value,)).scalars      # what pypto run then passes
        except CliError as e:
            cli_error = e
        if _scalar_expected(v, dtype):
            assert call_error is None and cli_error is None and call == cli, (what, call_error, cli_error, call, cli)
            continue
        assert call_error is not None and cli_error is not None, (what, call, cli)
        assert call_error.message.startswith("argument 'n' of main(n) "), what
        text = call_error.message[len("argument 'n' of main(n) "):]
        assert str(cli_error) == "--inputs: parameter 'n' %s%s" % (text, "; " + call_error.help if call_error.help
                                                                     else ""), (what, str(cli_error), text)


def test_a_refused_scalar_is_a_usage_error_of_pypto_run(tmp_path, capsys):
    # was the call's located error (exit status 1) with the help "pass a Python int", after compiling
    from pypto import cli
    src = tmp_path / "scale.py"
    src.write_text(SRC.replace("x: pl.Tensor[[16, 8], pl.FP32], y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor"
                               "[[16, 8], pl.FP32]:\n        y = self.top",
                               "x: pl.Tensor[[16, 8], pl.FP32], y: pl.Out[pl.Tensor[[16, 8], pl.FP32]], "
                               "n: pl.Scalar[pl.BOOL]) -> pl.Tensor[[16, 8], pl.FP32]:\n        y = self.top"))
    np.savez(tmp_path / "in.npz", n=np.array(2))
    assert cli.main(["run", str(src), "--inputs", str(tmp_path / "in.npz")]) == 2
    prog = pypto.compile(pl.parse_program(src.read_text(), "scale.py"))
    y = np.zeros((16, 8), np.float32)
    prog(_x(), y, 1)                                    # 0 / 1: a bool value (the fast path)
    with pytest.raises(ArgumentValueError, match=r"argument 'n' of main\(x, y, n\) = 2 is not a bool value"):
        prog(_x(), y, 2)                                # was True, silently (the fast path took any int)
    prog.close()
    assert ("--inputs: parameter 'n' = 2 is not a bool value (pl.Scalar[pl.BOOL] takes True / False or 0 / 1); "
            "pass x != 0 for a truth value") in _cli_err(capsys)


@pytest.mark.skipif(np.finfo(np.longdouble).nmant < 63, reason="longdouble does not hold every int64 here")
def test_longdouble_values_at_the_integer_bounds_convert_when_exact():
    # The range test compared in float64, where 2**63 - 1 rounds up to 2**63: a longdouble array
    # holding exactly INT64_MAX was refused, "converted it would be 9223372036854775807" (the value itself).
    from pypto.runtime.args import convert_array
    for dtype, values in (("INT64", [2 ** 63 - 1, -2 ** 63, 2 ** 62 + 1]), ("UINT64", [2 ** 64 - 1, 0])):
        a = np.array([np.longdouble(v) for v in values], dtype=np.longdouble)
        assert [int(v) for v in convert_array(a, dtype, "x")] == values
    for dtype, v, shown in (("INT64", 2 ** 63, "-9223372036854775808"), ("INT64", -2 ** 63 - 1, "-9223372036854775808"),
                            ("UINT64", 2 ** 64, "0")):
        with pytest.raises(ArgumentTypeError, match=r"at index \(0,\) is not an? u?int64 value \(converted it would be "
                                                    + shown + r"\)"):
            convert_array(np.array([np.longdouble(v)], dtype=np.longdouble), dtype, "x")
