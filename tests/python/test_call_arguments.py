"""Calling a compiled program (docs/python_api.md, "Calling a program"): keyword arguments,
outputs allocated for the caller, arrays of any library (DLPack, buffer protocol, torch by type),
error hints that fit the argument, one checker and one result type for L2 and HOST runs.
"""
import os
import subprocess
import sys
import types

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto.compiler import ArgumentTypeError, ArgumentValueError, RunStats

SRC = """
import pypto.language as pl
M = pl.dynamic("M")

@pl.program
class Split:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 8], pl.FP32], s: pl.Scalar[pl.FP32],
          lo: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        lo = pl.store(pl.mul(pl.load(x, [0, 0], [16, 8]), s), [0, 0], lo)
        return lo

    @pl.function(type=pl.FunctionType.InCore)
    def k2(self, x: pl.Tensor[[16, 8], pl.FP32], hi: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        hi = pl.store(pl.add(pl.load(x, [0, 0], [16, 8]), pl.load(x, [0, 0], [16, 8])), [0, 0], hi)
        return hi

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, lo: pl.Out[pl.Tensor[[16, 8], pl.FP32]], x: pl.Tensor[[16, 8], pl.FP32],
             hi: pl.Out[pl.Tensor[[16, 8], pl.FP32]], s: pl.Scalar[pl.FP32]) -> pl.Tensor[[16, 8], pl.FP32]:
        lo = self.k(x, s, lo)
        hi = self.k2(x, hi)
        return hi
"""

DYN_SRC = """
import pypto.language as pl
M = pl.dynamic("M")

@pl.program
class Copy:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[M, 8], pl.FP32], y: pl.Out[pl.Tensor[[M, 8], pl.FP32]],
          row: pl.Scalar[pl.INDEX]) -> pl.Tensor[[M, 8], pl.FP32]:
        y = pl.store(pl.load(x, [row, 0], [16, 8]), [row, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[M, 8], pl.FP32], y: pl.Out[pl.Tensor[[M, 8], pl.FP32]]) -> pl.Tensor[[M, 8], pl.FP32]:
        for i in pl.range(0, M, 16):
            y = self.k(x, y, i)
        return y
"""


@pytest.fixture(scope="module")
def split():
    return pypto.compile(pl.parse_program(SRC))


def _x():
    return np.arange(128, dtype=np.float32).reshape(16, 8)


# -- keyword arguments ---------------------------------------------------------------------------

def test_keyword_arguments_by_parameter_name(split):
    x, lo, hi = _x(), np.zeros((16, 8), np.float32), np.zeros((16, 8), np.float32)
    stats = split(s=0.5, hi=hi, x=x, lo=lo)
    assert isinstance(stats, RunStats) and stats.tasks_executed == 2
    np.testing.assert_allclose(lo, x * 0.5)
    np.testing.assert_allclose(hi, x * 2)


def test_positional_and_keyword_mixed(split):
    x, lo, hi = _x(), np.zeros((16, 8), np.float32), np.zeros((16, 8), np.float32)
    split(lo, x, s=3.0, hi=hi)
    np.testing.assert_allclose(lo, x * 3)


def test_unknown_keyword_is_named_with_a_suggestion(split):
    with pytest.raises(ArgumentTypeError, match=r"main\(lo, x, hi, s\) got an unknown argument 'hii'") as e:
        split(_x(), hii=np.zeros((16, 8), np.float32), s=1.0)
    assert "did you mean 'hi'" in str(e.value)


def test_missing_keyword_is_named(split):
    with pytest.raises(ArgumentTypeError, match=r"main\(lo, x, hi, s\) is missing argument 's'"):
        split(x=_x())


def test_argument_given_twice(split):
    lo = np.zeros((16, 8), np.float32)
    with pytest.raises(ArgumentTypeError, match="got argument 'lo' twice"):
        split(lo, _x(), lo, 1.0, lo=lo)


# -- outputs allocated for the caller -----------------------------------------------------------

def test_omitted_outputs_are_returned_in_declaration_order(split):
    x = _x()
    lo, hi = split(x, 0.5)
    assert lo.dtype == np.float32 and lo.shape == (16, 8) and hi.shape == (16, 8)
    np.testing.assert_allclose(lo, x * 0.5)
    np.testing.assert_allclose(hi, x * 2)
    assert split.last_stats.tasks_executed == 2


def test_omitted_outputs_by_keyword(split):
    x = _x()
    lo, hi = split(s=2.0, x=x)
    np.testing.assert_allclose(lo, x * 2)


def test_one_omitted_output_is_returned_alone():
    prog = pypto.compile(pl.parse_program(DYN_SRC))
    x = np.arange(48 * 8, dtype=np.float32).reshape(48, 8)
    y = prog(x)                               # M = 48 bound by x: y is allocated [48, 8]
    assert isinstance(y, np.ndarray) and y.shape == (48, 8)
    np.testing.assert_array_equal(y, x)


def test_too_few_arguments_still_reports_the_count(split):
    """Two arrays for (x, s) with the outputs omitted do not fit: the count is reported."""
    with pytest.raises(ArgumentTypeError, match=r"takes 4 arguments, got 2") as e:
        split(_x(), _x())
    assert "omit the pl.Out parameters lo, hi" in str(e.value)


# -- arrays of any library ------------------------------------------------------------------------

class _DLPackOnly:
    """An array that offers only DLPack (as JAX / CuPy-on-host / other libraries do)."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, **kw):
        return self._a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def test_dlpack_and_buffer_protocol_arrays(split):
    x = _x()
    lo = np.zeros((16, 8), np.float32)
    hi = np.zeros((16, 8), np.float32)
    split(memoryview(lo), _DLPackOnly(x), hi, 0.5)   # a writable buffer is written in place
    np.testing.assert_allclose(lo, x * 0.5)
    np.testing.assert_allclose(hi, x * 2)


def test_read_only_buffer_for_an_output_is_refused(split):
    lo = np.zeros((16, 8), np.float32)
    with pytest.raises(ArgumentValueError, match="argument 'lo' .* is read-only"):
        split(memoryview(lo).toreadonly(), _x(), np.zeros((16, 8), np.float32), 1.0)


# -- torch, detected by type without importing it ------------------------------------------------

def _fake_torch(monkeypatch):
    """A minimal stand-in for torch (the suite does not need torch installed): tensors whose type
    lives in module 'torch', backed by NumPy."""
    torch = types.ModuleType("torch")

    class Tensor:
        def __init__(self, a):
            self._a = a
            self.device = types.SimpleNamespace(type="cpu")
            self.dtype = getattr(torch, str(a.dtype))
            self.shape = a.shape

        def detach(self):
            return self

        def numpy(self):
            return self._a

    Tensor.__module__ = "torch"
    torch.Tensor = Tensor
    for name in ("float32", "float16", "float64", "int32", "int64", "bfloat16", "bool"):
        setattr(torch, name, "torch." + name)
    torch.zeros = lambda shape, dtype: Tensor(np.zeros(shape, dtype=dtype.split(".")[1]))
    monkeypatch.setitem(sys.modules, "torch", torch)
    return torch


def test_torch_tensor_gets_a_torch_hint(split, monkeypatch):
    torch = _fake_torch(monkeypatch)
    x64 = torch.Tensor(np.full((16, 8), 0.1, np.float64))    # values float32 has not: refused
    with pytest.raises(ArgumentTypeError, match="argument 'x' .* got a float64 array: its value 0.1") as e:
        split(x64, 1.0)
    assert ".to(torch.float32)" in str(e.value) and "astype" not in str(e.value)


def test_numpy_array_gets_a_numpy_hint(split):
    with pytest.raises(ArgumentTypeError) as e:
        split(np.full((16, 8), 0.1), 1.0)
    assert ".astype(np.float32)" in str(e.value)


def test_torch_inputs_get_torch_outputs(split, monkeypatch):
    torch = _fake_torch(monkeypatch)
    x = _x()
    lo, hi = split(torch.Tensor(x), 0.5)
    assert type(lo) is torch.Tensor and type(hi) is torch.Tensor
    np.testing.assert_allclose(lo.numpy(), x * 0.5)


def test_first_call_does_not_import_torch(tmp_path):
    """A `torch` package on the path records its import: compiling and calling must not load it."""
    fake = tmp_path / "site" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise SystemExit('torch was imported')\n")
    code = ("import sys, numpy as np, pypto, pypto.language as pl\n"
            "prog = pypto.compile(pl.parse_program(%r))\n"
            "lo, hi = prog(np.ones((16, 8), np.float32), 2.0)\n"
            "assert lo[0, 0] == 2.0 and 'torch' not in sys.modules\n"
            "print('ok')\n" % SRC)
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "site"))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "ok" in r.stdout, r.stdout + r.stderr


# -- HOST runs: the same checker and the same result type ----------------------------------------

def test_host_run_shares_the_checker_and_the_result_type():
    from test_host_l3_e2e import TwoChips     # x, acc: InOut, tmp: Out, out: Out, alpha, steps
    prog = pypto.compile(TwoChips)
    x = np.ones((16, 16), np.float32)
    acc = np.zeros((16, 16), np.float32)
    with pytest.raises(ArgumentTypeError, match=r"argument 'acc' of host_main\(.*\) has dtype int32, expected pl.FP32"):
        prog(x, acc.astype(np.int32), alpha=0.5, steps=1)          # same width: the old HOST check let it pass
    with pytest.raises(ArgumentTypeError, match=r"argument 'x' of host_main\(.*\): parameter 'x' is pl.FP32 "
                                                r"\(float32\) and got an int32 array: its value 16777217"):
        prog(x.astype(np.int32) + 2 ** 24, acc, alpha=0.5, steps=1)   # an In converts only when no value changes
    with pytest.raises(ArgumentTypeError, match="expects a number"):
        prog(x, acc, alpha="2", steps=1)
    tmp, out = prog(x, acc, alpha=0.5, steps=2)                    # Outs allocated, by-name scalars
    np.testing.assert_allclose(tmp, 0.5 * x)
    np.testing.assert_allclose(out, 2.0 * acc)
    stats = prog.last_stats
    assert isinstance(stats, RunStats) and stats.tasks_executed == 4 and stats.wait_edges == 3
    assert [t["target"] for t in stats.task_records][0] == "chip_scale"


def test_real_torch_tensors_in_and_out(split):
    torch = pytest.importorskip("torch")
    x = torch.arange(128, dtype=torch.float32).reshape(16, 8)
    lo, hi = split(x, 0.5)
    assert isinstance(lo, torch.Tensor) and lo.dtype == torch.float32 and tuple(lo.shape) == (16, 8)
    assert torch.allclose(lo, x * 0.5) and torch.allclose(hi, x * 2)
    lo, hi = split(x.double(), 0.5)           # float64 of float32 values: converted, as pypto run --inputs does
    assert torch.allclose(lo, x * 0.5)
    with pytest.raises(ArgumentTypeError) as e:
        split(x.double() / 3, 0.5)            # values float32 does not hold
    assert ".to(torch.float32)" in str(e.value) and "astype" not in str(e.value)
