"""Names of any length reach the kernels' error messages without a warning: a 300-character
parameter name (a literal in the kernel's bounds checks) and a 200-character DSL file name (a
literal in its element-access checks) once made g++ -Wall warn -Wformat-truncation about the
fixed message buffers, which -Werror turned into a failed build (program fuzzer, seed 2930,
mutant 370). The messages now go through pypto_kernel::fail_fmt."""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import pypto

LONG_PARAM = "k" * 300

PROGRAM = f'''
import pypto.language as pl


@pl.program
class LongNames:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, {LONG_PARAM}: pl.Tensor[[8, 16], pl.FP32],
          y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        t = pl.load({LONG_PARAM}, [0, 0], [8, 16])
        v = pl.tile.read(t, [1, 2])
        t_1 = pl.tile.write(t, [0, 0], v)
        y = pl.store(t_1, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        y = self.k(x, y)
        return y
'''


@pytest.fixture
def long_names_program(tmp_path):
    """The program, loaded from a file whose name is 200 characters long."""
    path = tmp_path / ("long_" + "f" * 192 + ".py")
    path.write_text(PROGRAM)
    spec = importlib.util.spec_from_file_location("long_names_program", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["long_names_program"] = module
    try:
        spec.loader.exec_module(module)
        yield module.LongNames
    finally:
        sys.modules.pop("long_names_program", None)


def test_long_names_build_with_werror_and_run(long_names_program, tmp_path, monkeypatch):
    # A cache of its own: every file is compiled here, with -Werror.
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PYPTO_CXXFLAGS", "-Werror")
    prog = pypto.compile(long_names_program)
    kernel = (Path(prog.output_dir) / "kernels" / "k.cpp").read_text()
    assert LONG_PARAM in kernel  # the bounds checks name the parameter
    assert "f" * 192 + ".py" in kernel  # the element access names the DSL file
    x = np.arange(128, dtype=np.float32).reshape(8, 16)
    y = np.zeros((8, 16), np.float32)
    prog(x, y)
    expected = x.copy()
    expected[0, 0] = x[1, 2]
    np.testing.assert_array_equal(y, expected)
