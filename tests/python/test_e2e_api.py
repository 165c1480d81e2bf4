"""pypto.compile / CompiledProgram: argument checking, entry selection, errors, caching.

Every argument mismatch must raise a PyptoError (TypeError / ValueError subclass) naming the
parameter *before* anything runs: the Out array must be untouched afterwards.
"""
import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto.compiler import ArgumentTypeError, ArgumentValueError, RunError
from pypto.errors import PyptoError
from pypto.runtime import build as build_mod

M = pl.dynamic("M")

SCALE_SRC = """
import pypto.language as pl

@pl.program
class Scale:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 8], pl.FP32], y: pl.Out[pl.Tensor[[16, 8], pl.FP32]],
          s: pl.Scalar[pl.FP32], row: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 8], pl.FP32]:
        y = pl.store(pl.mul(pl.load(x, [row, 0], [16, 8]), s), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 8], pl.FP32], y: pl.Out[pl.Tensor[[16, 8], pl.FP32]],
             s: pl.Scalar[pl.FP32], row: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 8], pl.FP32]:
        y = self.k(x, y, s, row)
        return y
"""


@pytest.fixture(scope="module")
def scale():
    return pypto.compile(pl.parse_program(SCALE_SRC))


def test_compile_and_call(scale):
    x = np.arange(128, dtype=np.float32).reshape(16, 8)
    y = np.zeros_like(x)
    stats = scale(x, y, 0.5, 0)
    np.testing.assert_allclose(y, x * 0.5, rtol=1e-6)
    assert stats.tasks == 1 and stats.tasks_executed == 1
    assert "kernels/k.cpp" in scale.files and "orchestration/main.cpp" in scale.files
    assert "program_table.cpp" in scale.files
    assert "pypto_kernel_k" in scale.files["kernels/k.cpp"]


def _untouched(y):
    return np.all(y == -7)


def test_argument_count(scale):
    y = np.full((16, 8), -7, np.float32)
    with pytest.raises(ArgumentTypeError, match=r"main\(x, y, s, row\) takes 4 arguments, got 3"):
        scale(np.zeros((16, 8), np.float32), y, 0.5)
    assert _untouched(y)


def test_wrong_dtype_names_the_param(scale):
    y = np.full((16, 8), -7, np.float32)
    with pytest.raises(ArgumentTypeError, match=r"argument 'x' .*: parameter 'x' is pl.FP32 \(float32\) and got a "
                                                r"float64 array: its value 0.1 at index \(0, 0\) is not a float32") as e:
        scale(np.full((16, 8), 0.1), y, 0.5, 0)      # float64 values float32 has not (np.zeros would convert)
    assert isinstance(e.value, TypeError) and isinstance(e.value, PyptoError)
    assert "astype(np.float32)" in str(e.value)
    assert _untouched(y)


def test_wrong_shape(scale):
    y = np.full((16, 8), -7, np.float32)
    with pytest.raises(ArgumentValueError, match=r"argument 'x' .* has shape \(8, 16\), expected \(16, 8\)"):
        scale(np.zeros((8, 16), np.float32), y, 0.5, 0)
    with pytest.raises(ArgumentValueError, match="expected rank 2"):
        scale(np.zeros(128, np.float32), y, 0.5, 0)
    assert _untouched(y)


def test_not_an_array(scale):
    with pytest.raises(ArgumentTypeError, match=r"argument 'x' .* must be a NumPy array"):
        scale([[0.0] * 8] * 16, np.zeros((16, 8), np.float32), 0.5, 0)


def test_scalar_kinds(scale):
    x = np.zeros((16, 8), np.float32)
    y = np.zeros((16, 8), np.float32)
    with pytest.raises(ArgumentTypeError, match=r"argument 'row' .* expects an integer"):
        scale(x, y, 0.5, 1.5)
    with pytest.raises(ArgumentTypeError, match=r"argument 's' .* expects a number"):
        scale(x, y, "0.5", 0)
    scale(x, y, np.float32(2.0), np.int64(0))   # NumPy scalars are numbers too


def test_strided_out_is_written_back_in_is_copied(scale):
    big = np.arange(256, dtype=np.float32).reshape(16, 16)
    y = np.zeros((16, 8), np.float32)
    scale(big[:, ::2], y, 1.0, 0)          # a strided In view is copied
    np.testing.assert_array_equal(y, big[:, ::2])
    wide = np.full((16, 16), -1.0, np.float32)
    scale(big[:, :8].copy(), wide[:, :8], 1.0, 0)   # a strided Out runs on a copy, written back
    np.testing.assert_array_equal(wide[:, :8], big[:, :8])
    assert (wide[:, 8:] == -1).all()
    ro = np.zeros((16, 8), np.float32)
    ro.flags.writeable = False
    with pytest.raises(ArgumentValueError, match="read-only"):
        scale(big[:, :8].copy(), ro, 1.0, 0)


def test_kernel_failure_is_a_run_error(scale):
    x = np.zeros((16, 8), np.float32)
    y = np.zeros((16, 8), np.float32)
    with pytest.raises(RunError, match=r"load of tensor 'x' out of bounds on axis 0"):
        scale(x, y, 1.0, 4)   # rows 4..19 of a 16-row tensor
    scale(x, y, 1.0, 0)      # the program is still usable afterwards


def test_worker_options_validated(scale):
    x = np.zeros((16, 8), np.float32)
    with pytest.raises(ArgumentValueError, match="aiv_workers must be a positive integer"):
        scale(x, np.zeros_like(x), 1.0, 0, aiv_workers=0)


@pl.program
class Dyn:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[M, 4], pl.FP32], b: pl.Tensor[[M, 4], pl.FP32],
          c: pl.Out[pl.Tensor[[M, 4], pl.FP32]]) -> pl.Tensor[[M, 4], pl.FP32]:
        c = pl.store(pl.sub(pl.load(a, [0, 0], [4, 4]), pl.load(b, [0, 0], [4, 4])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, 4], pl.FP32], b: pl.Tensor[[M, 4], pl.FP32],
             c: pl.Out[pl.Tensor[[M, 4], pl.FP32]]) -> pl.Tensor[[M, 4], pl.FP32]:
        c = self.k(a, b, c)
        return c


def test_dynamic_dims_bound_consistently():
    prog = pypto.compile(Dyn)
    a = np.ones((8, 4), np.float32)
    with pytest.raises(ArgumentValueError, match=r"argument 'b' .*dynamic dimension M is 6 here but 8 in argument 'a'"):
        prog(a, np.ones((6, 4), np.float32), np.zeros((8, 4), np.float32))
    c = np.zeros((8, 4), np.float32)
    prog(a, 3 * a, c)
    np.testing.assert_allclose(c[:4], -2 * a[:4])


TWO_ENTRIES = """
import pypto.language as pl

@pl.program
class Two:
    @pl.function(type=pl.FunctionType.InCore)
    def neg(self, a: pl.Tensor[[8], pl.INT32], b: pl.Out[pl.Tensor[[8], pl.INT32]]) -> pl.Tensor[[8], pl.INT32]:
        b = pl.store(pl.neg(pl.load(a, [0], [8])), [0], b)
        return b

    @pl.function(type=pl.FunctionType.Orchestration)
    def once(self, a: pl.Tensor[[8], pl.INT32], b: pl.Out[pl.Tensor[[8], pl.INT32]]) -> pl.Tensor[[8], pl.INT32]:
        b = self.neg(a, b)
        return b

    @pl.function(type=pl.FunctionType.Orchestration)
    def twice(self, a: pl.Tensor[[8], pl.INT32], b: pl.Out[pl.Tensor[[8], pl.INT32]]) -> pl.Tensor[[8], pl.INT32]:
        t = pl.create_tensor([8], dtype=pl.INT32)
        t = self.neg(a, t)
        b = self.neg(t, b)
        return b
"""


def test_entry_selection():
    prog = pl.parse_program(TWO_ENTRIES)
    with pytest.raises(PyptoError, match=r"2 Orchestration functions \(once, twice\)") as e:
        pypto.compile(prog)
    assert "entry=" in str(e.value)
    with pytest.raises(PyptoError, match="not an Orchestration function"):
        pypto.compile(prog, entry="neg")
    a = np.arange(8, dtype=np.int32)
    b = np.zeros(8, np.int32)
    pypto.compile(prog, entry="once")(a, b)
    np.testing.assert_array_equal(b, -a)
    pypto.compile(prog, entry="twice")(a, b)
    np.testing.assert_array_equal(b, a)


def test_output_dir_holds_sources_and_library(tmp_path):
    prog = pypto.compile(pl.parse_program(SCALE_SRC), output_dir=str(tmp_path / "out"))
    assert prog.output_dir == str(tmp_path / "out")
    for rel in ("orchestration/main.cpp", "kernels/k.cpp", "program_table.cpp", "build.sh",
                "libprogram.so"):
        assert (tmp_path / "out" / rel).is_file(), rel


def test_second_compile_runs_no_compiler(compiler_calls):
    calls = compiler_calls
    first = pypto.compile(pl.parse_program(SCALE_SRC))
    assert calls and not first.cached
    n = len(calls)
    second = pypto.compile(pl.parse_program(SCALE_SRC))
    assert len(calls) == n, "the second compile of the same program must not invoke the compiler"
    assert second.cached and second.library == first.library
    x = np.ones((16, 8), np.float32)
    y = np.zeros_like(x)
    second(x, y, 3.0, 0)
    np.testing.assert_allclose(y, 3 * x)
    # A different program is a different cache entry.
    third = pypto.compile(pl.parse_program(SCALE_SRC.replace("pl.mul", "pl.add")))
    assert len(calls) > n and third.library != first.library


def test_compiler_errors_are_reported(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(build_mod.BuildError, match=r"C\+\+ compilation of orchestration/main.cpp failed") as e:
        build_mod.build_program("main", "this is not C++;\n", {}, [])
    assert "this is not C++" in str(e.value) or "error" in str(e.value)


def test_compile_rejects_non_programs():
    with pytest.raises(PyptoError, match="expects a program"):
        pypto.compile(42)


def test_torch_tensors_if_available():
    torch = pytest.importorskip("torch")
    prog = pypto.compile(pl.parse_program(SCALE_SRC))
    x = torch.ones(16, 8)
    y = torch.zeros(16, 8)
    prog(x, y, 2.0, 0)
    assert torch.allclose(y, 2 * x)


def test_torch_bfloat16_tensors_if_available():
    torch = pytest.importorskip("torch")
    from e2e_util import kernel_program
    prog = kernel_program([("a", [4, 8], "BF16"), ("b", [4, 8], "BF16")], [("c", [4, 8], "BF16", "pl.add(ta, tb)")])
    a = torch.randn(4, 8).to(torch.bfloat16)
    b = torch.randn(4, 8).to(torch.bfloat16)
    c = torch.zeros(4, 8, dtype=torch.bfloat16)
    prog(a, b, c)                                   # Out written in place through the shared memory
    assert torch.equal(c, (a.float() + b.float()).to(torch.bfloat16))
    with pytest.raises(ArgumentTypeError, match="argument 'a'"):
        prog(a.float() / 3, b, c)     # values bfloat16 does not hold (without ml_dtypes: any float32 tensor)
