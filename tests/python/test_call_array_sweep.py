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
    "float64": (lambda: _x().astype(np.float64), ArgumentTypeError, r"has dtype float64, expected pl.FP32",
                ".astype(np.float32)"),
    "int32": (lambda: _x().astype(np.int32), ArgumentTypeError, r"has dtype int32, expected pl.FP32", "astype"),
    "int64": (lambda: _x().astype(np.int64), ArgumentTypeError, r"has dtype int64, expected pl.FP32", "astype"),
    "bool": (lambda: _x() > 0, ArgumentTypeError, r"has dtype bool, expected pl.FP32", "astype"),
    "float16": (lambda: _x().astype(np.float16), ArgumentTypeError, r"has dtype float16", "astype"),
    "big-endian float32": (lambda: _x().astype(">f4"), ArgumentTypeError, r"has dtype >f4, expected pl.FP32",
                           ".astype(np.float32)"),
    "object": (lambda: _x().astype(object), ArgumentTypeError, r"has dtype object", "astype"),
    "structured": (lambda: np.zeros((16, 8), dtype=[("a", np.float32)]), ArgumentTypeError, r"has dtype", "astype"),
    "complex64": (lambda: _x().astype(np.complex64), ArgumentTypeError, r"has dtype complex64", "astype"),
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


# -- outputs: written in place, so they must be C-contiguous, aligned and writable ---------------

def _out_base():
    return np.zeros((32, 16), np.float32)


OUTPUTS_REFUSED = {
    "fortran order": (lambda: np.asfortranarray(np.zeros((16, 8), np.float32)), r"is not C-contiguous", "ascontiguousarray"),
    "transposed": (lambda: np.zeros((8, 16), np.float32).T, r"is not C-contiguous", "ascontiguousarray"),
    "stepped slice": (lambda: _out_base()[::2, ::2], r"is not C-contiguous", "ascontiguousarray"),
    "column slice": (lambda: _out_base()[:16, :8], r"is not C-contiguous", "ascontiguousarray"),
    "negative strides": (lambda: np.zeros((16, 8), np.float32)[::-1], r"is not C-contiguous", "ascontiguousarray"),
    "read-only": (lambda: _read_only(np.zeros((16, 8), np.float32)), r"is read-only but is written", ""),
    "broadcast (stride 0)": (lambda: np.broadcast_to(np.zeros(8, np.float32), (16, 8)), r"is not C-contiguous|read-only",
                             ""),
    "big-endian": (lambda: np.zeros((16, 8), ">f4"), r"has dtype >f4", ".astype(np.float32)"),
    "float64": (lambda: np.zeros((16, 8), np.float64), r"has dtype float64", "astype"),
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
    same_bytes = np.zeros((16, 8), np.float32)
    with pytest.raises(ArgumentTypeError, match="has dtype int32"):   # the dtype check comes first
        swap(same_bytes.view(np.int32), same_bytes)


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
    with pytest.raises(ArgumentTypeError, match=r"has dtype torch.float64") as e:
        prog(x.double(), torch.zeros(16, 8))
    assert ".to(torch.float32)" in e.value.help
    with pytest.raises(ArgumentValueError, match="is not C-contiguous"):
        prog(x, torch.zeros(8, 16).t())
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
    "complex": (lambda: _x_as(np.complex64), "only real numbers convert"),
    "string": (lambda: _x_as(str), "only real numbers convert"),
    "structured": (lambda: np.zeros((16, 8), dtype=[("a", np.float32)]), "only real numbers convert"),
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
