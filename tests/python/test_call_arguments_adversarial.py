"""Adversarial call arguments (docs/python_api.md, "Calling a program"): every bad argument is a
located ArgumentTypeError / ArgumentValueError before anything runs, never a bare Python error
or undefined behaviour in a kernel -- misaligned arrays, float scalars beyond float32, torch
tensors NumPy cannot view, bad seeds and dimensions for random inputs.
"""
import os

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto.compiler import ArgumentTypeError, ArgumentValueError
from pypto.runtime.args import ParamSpec, random_inputs

SRC = """
import pypto.language as pl
M = pl.dynamic("M")

@pl.program
class Scale:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 8], pl.FP32], s: pl.Scalar[pl.FP32],
          y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        y = pl.store(pl.mul(pl.load(x, [0, 0], [16, 8]), s), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 8], pl.FP32], s: pl.Scalar[pl.FP32],
             y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        y = self.k(x, s, y)
        return y
"""


@pytest.fixture(scope="module")
def scale():
    return pypto.compile(pl.parse_program(SRC))


def _x():
    return np.arange(128, dtype=np.float32).reshape(16, 8)


def _misaligned(a):
    """A C-contiguous copy of ``a`` whose address is one byte past an element boundary."""
    buf = np.zeros(a.nbytes + a.itemsize, np.uint8)
    m = buf[1:1 + a.nbytes].view(a.dtype).reshape(a.shape)
    m[...] = a
    assert m.flags.c_contiguous and not m.flags.aligned
    return m


def test_misaligned_output_is_written_back(scale):
    y = _misaligned(np.zeros((16, 8), np.float32))
    scale(_x(), 2.0, y)    # run on an aligned copy, copied back after the run
    np.testing.assert_array_equal(y, _x() * 2)


def test_misaligned_input_is_copied(scale):
    y = np.zeros((16, 8), np.float32)
    scale(_misaligned(_x()), 2.0, y)
    np.testing.assert_array_equal(y, _x() * 2)


@pytest.mark.parametrize("value", [1e39, -1e300, pytest.param(10 ** 400, id="10**400")])
def test_float_scalar_beyond_float32(scale, value):
    with pytest.raises(ArgumentValueError, match=r"argument 's' .* does not fit pl.FP32") as e:
        scale(_x(), value, np.zeros((16, 8), np.float32))
    assert e.value.line > 0


def test_float_scalar_infinity_still_passes(scale):
    y = np.zeros((16, 8), np.float32)
    scale(_x() + 1, float("inf"), y)
    assert np.isinf(y).all()


@pytest.mark.parametrize("make, message, hint", [
    (lambda t: t.ones(16, 8).to_sparse(), "layout torch.sparse_coo", "to_dense()"),
    (lambda t: t.ones(16, 8)._neg_view(), "negative bit set", "resolve_neg()"),
    (lambda t: t.ones(16, 8, dtype=t.complex64).conj(), "conjugate bit set", "resolve_conj()"),
    (lambda t: t.ones(16, 8).to(t.float8_e4m3fn), "dtype torch.float8_e4m3fn cannot be viewed", ".to("),
])
def test_torch_tensors_numpy_cannot_view(scale, make, message, hint):
    torch = pytest.importorskip("torch")
    with pytest.raises((ArgumentTypeError, ArgumentValueError), match=message) as e:
        scale(make(torch), 2.0, np.zeros((16, 8), np.float32))
    assert e.value.line > 0 and hint in str(e.value)


def test_torch_output_that_requires_grad_is_refused(scale):
    # was written silently through its NumPy view: autograd saw no in-place write (torch itself
    # refuses one on such a tensor), so a backward pass would use the new values unknowingly
    torch = pytest.importorskip("torch")
    w = torch.zeros(16, 8, requires_grad=True)
    with pytest.raises(ArgumentValueError, match="argument 'y' .* is a torch tensor that requires grad and is "
                                                 "written in place") as e:
        scale(_x(), 2.0, w)
    assert e.value.line > 0 and "x.detach()" in str(e.value)
    assert (w == 0).all()
    x = torch.from_numpy(_x()).requires_grad_()     # read only: fine
    d = torch.zeros(16, 8)
    scale(x, 2.0, d)
    assert torch.equal(d, x.detach() * 2)
    with torch.no_grad():                           # as torch allows in-place writes there
        scale(_x(), 2.0, w)
    assert torch.equal(w.detach(), torch.from_numpy(_x()) * 2)
    v = torch.zeros(16, 8, requires_grad=True)
    scale(_x(), 2.0, v.detach())                    # the hint: same memory
    assert torch.equal(v.detach(), torch.from_numpy(_x()) * 2)


@pytest.mark.parametrize("seed", [-1, 1.5, "0"])
def test_random_inputs_bad_seed(scale, seed):
    with pytest.raises(ArgumentValueError, match="seed of random inputs must be a non-negative integer"):
        scale.random_inputs(seed=seed)


@pytest.mark.parametrize("extent", [-16, 2.0])
def test_random_inputs_bad_dynamic_dim(extent):
    x = ParamSpec("x", "tensor", "FP32", ("M", 8), "In", 0)
    with pytest.raises(ArgumentValueError, match="dynamic dimension M of parameter 'x' must be a non-negative"):
        random_inputs([x], dims={"M": extent})


def test_random_inputs_too_large_to_allocate():
    x = ParamSpec("x", "tensor", "FP32", (2 ** 63 - 1,), "In", 0)
    with pytest.raises(ArgumentValueError, match="cannot allocate a random input for parameter 'x'"):
        random_inputs([x])


@pytest.mark.parametrize("dtype", ["FP32", "FP16", "BF16", "INT32", "INT8", "UINT16", "BOOL", "INT64"])
def test_random_inputs_are_drawn_in_chunks_with_the_values_of_one_draw(dtype, monkeypatch):
    # A [2**31] INT32 input drew 16 GiB of int64 at once, then copied it (the program fuzzer's
    # process was OOM-killed). Chunked now, with the same values for the same seed.
    from pypto.runtime import args as args_mod
    from pypto.runtime.args import bfloat16_dtype, numpy_dtype
    monkeypatch.setattr(args_mod, "RANDOM_CHUNK", 7)
    got = args_mod.random_array(np.random.default_rng(3), dtype, (5, 9))
    rng = np.random.default_rng(3)
    if dtype in ("FP32", "FP16"):
        want = rng.uniform(-1.0, 1.0, size=(5, 9)).astype(numpy_dtype(dtype))
    elif dtype == "BF16":
        f = rng.uniform(-1.0, 1.0, size=(5, 9)).astype(np.float32)
        bf = bfloat16_dtype()
        want = f.astype(bf) if bf is not None else (f.view(np.uint32) >> 16).astype(np.uint16)
    elif dtype == "BOOL":
        want = rng.integers(0, 2, size=(5, 9)).astype(np.bool_)
    elif dtype.startswith("UINT"):
        want = rng.integers(0, 16, size=(5, 9)).astype(numpy_dtype(dtype))
    else:
        want = rng.integers(-8, 8, size=(5, 9)).astype(numpy_dtype(dtype))
    assert got.dtype == want.dtype and got.shape == (5, 9)
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    assert len(np.unique(got.view(np.uint8))) > 1               # not all one value


def test_random_inputs_need_little_more_memory_than_the_result():
    import tracemalloc
    from pypto.runtime import args as args_mod
    n = 3 * args_mod.RANDOM_CHUNK                                      # 48 MiB of INT32
    tracemalloc.start()
    try:
        a = args_mod.random_array(np.random.default_rng(0), "INT32", (n,))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert a.nbytes == 4 * n and peak < 2 * a.nbytes                  # one draw of all: 3x (int64 + copy)


def test_trace_path_that_is_a_directory_fails_before_the_run(scale, tmp_path):
    from pypto.runtime.trace_path import TracePathError
    y = np.zeros((16, 8), np.float32)
    with pytest.raises(TracePathError, match="it is a directory"):
        scale(_x(), 2.0, y, trace=str(tmp_path))
    assert not y.any()      # refused before running, not after (when the results would be lost)


@pytest.mark.parametrize("option, value", [("trace", 123), ("trace", True), ("graph", 1.5),
                                           ("trace", np.ones(2))])
def test_a_trace_or_graph_that_is_no_path_is_refused_before_the_run(scale, option, value):
    # os.fspath's TypeError escaped from inside pypto; a program parameter named like the option
    # passed by name met the same (the help says it is passed by position).
    from pypto.runtime.trace_path import TracePathError
    y = np.zeros((16, 8), np.float32)
    with pytest.raises(TracePathError, match="%s= is the path of a file to write .*got %s"
                       % (option, type(value).__name__)) as ei:
        scale(_x(), 2.0, y, **{option: value})
    assert "passed by position" in ei.value.help
    assert not y.any()


def test_a_bytes_trace_path_is_written_there(scale, tmp_path):
    # It passed the check, the program ran, then the trace went to the file "b'...'" and failed.
    path = os.fsencode(str(tmp_path / "t.json"))
    scale(_x(), 2.0, np.zeros((16, 8), np.float32), trace=path)
    assert os.path.getsize(os.fsdecode(path)) > 0


@pytest.mark.parametrize("value", [np.array([2.0], np.float32), np.array([[2.0]]), np.ones(2)])
def test_array_for_a_scalar_is_refused_even_with_one_element(scale, value):
    # .item() took a one-element array of any rank for its element (np.array([2.0]) ran as 2.0).
    y = np.zeros((16, 8), np.float32)
    with pytest.raises(ArgumentTypeError, match=r"argument 's' .* is a scalar \(pl.Scalar\[pl.FP32\]\), "
                                               r"got an array of shape \(") as e:
        scale(_x(), value, y)
    assert e.value.line > 0 and "x.item()" in str(e.value)
    assert not y.any()


def test_zero_dim_array_for_a_scalar_passes(scale):
    y = np.zeros((16, 8), np.float32)
    scale(_x(), np.array(2.0, np.float32), y)
    np.testing.assert_array_equal(y, _x() * 2)


@pytest.mark.skipif(not os.path.isfile("/proc/version"), reason="needs Linux /proc")
def test_trace_path_that_takes_no_writes_fails_before_the_run(scale):
    # /proc/version opens but takes no writes: the run went ahead and no trace was written, silently
    from pypto.runtime.trace_path import TracePathError
    y = np.zeros((16, 8), np.float32)
    with pytest.raises(TracePathError, match="cannot write the trace to /proc/version: "):
        scale(_x(), 2.0, y, trace="/proc/version")
    assert not y.any()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_trace_write_that_fails_is_a_run_error(scale):
    # /dev/full opens and takes writes into the stream's buffer; only the final flush fails (the
    # runtime reported success: the stream was not checked after its last flush)
    from pypto.compiler import RunError
    with pytest.raises(RunError, match="could not write the trace to /dev/full"):
        scale(_x(), 2.0, np.zeros((16, 8), np.float32), trace="/dev/full")


def test_trace_onto_a_loaded_library_is_refused(scale, tmp_path):
    # trace=compiled.library wrote the trace over the running program's own cached library: the
    # process died with SIGBUS and the cache entry was destroyed (the next process could not load it)
    from pypto.runtime import library_path
    from pypto.runtime.trace_path import TracePathError
    size = os.path.getsize(scale.library)
    for lib in (scale.library, library_path()):
        with pytest.raises(TracePathError, match="it is a library this process has loaded"):
            scale(_x(), 2.0, np.zeros((16, 8), np.float32), trace=lib)
    assert os.path.getsize(scale.library) == size
    y = np.zeros((16, 8), np.float32)
    scale(_x(), 2.0, y, trace=str(tmp_path / "t.json"))      # a file of its own: fine
    assert (tmp_path / "t.json").stat().st_size > 0 and y[1, 0] == 16.0


def _returns_without_opening_the_pipe(fifo, fn):
    """Runs fn() in a thread: (finished within 10 s, its result). A thread blocked opening the
    pipe (no reader) is released by opening the pipe for reading."""
    import threading
    result = {}
    t = threading.Thread(target=lambda: result.setdefault("value", fn()), daemon=True)
    t.start()
    t.join(10)
    if t.is_alive():
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)   # the writer's open completes; it closes again
        t.join(10)
        os.close(fd)
        return False, result.get("value")
    return True, result.get("value")


def test_output_path_probe_does_not_open_a_named_pipe(tmp_path):
    # --trace / --save / graph -o FIFO: the probe opened the pipe to append and closed it, so a
    # reader started first got EOF and left (and with no reader yet it blocked, before compiling,
    # without a word). A pipe is checked with os.access, not opened.
    from pypto.cli.arrays import check_paths
    from pypto.runtime.trace_path import probe_writable, resolve_trace_path
    fifo = str(tmp_path / "fifo")
    os.mkfifo(fifo)
    assert _returns_without_opening_the_pipe(fifo, lambda: probe_writable(fifo)) == (True, None)
    assert _returns_without_opening_the_pipe(fifo, lambda: resolve_trace_path(fifo)) == (True, fifo)

    for flag in ("save", "trace"):
        args = type("Args", (), dict(inputs=None, check=None, save=None, trace=None))()
        setattr(args, flag, fifo)
        assert _returns_without_opening_the_pipe(fifo, lambda: check_paths(args)) == (True, None)
    assert probe_writable(os.devnull) is None
    os.chmod(fifo, 0o400)
    if os.geteuid() != 0:   # root may write anything
        assert probe_writable(fifo) == "Permission denied"
