"""The build cache of HOST programs: ``pypto.host.compile_host`` (and ``pypto.compile`` of a
HOST entry) builds through ``pypto.runtime.build``, so a second compile of the same program
finds the library in the content-hash cache and runs no compiler, while a changed program
gets a new key and is rebuilt. Every compiler invocation is counted via
``build.run_compiler``.
"""

from __future__ import annotations

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import host
from pypto.runtime import build as build_mod

# host_main: z = x OP y on one chip, then w = z OP y on the other (after it).
HOST_SRC = '''
import pypto.language as pl


@pl.program
class HostCache:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel_op(self, a: pl.Tensor[[64], pl.FP32], b: pl.Tensor[[64], pl.FP32],
                  c: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        c = pl.store(pl.OP(pl.load(a, [0], [64]), pl.load(b, [0], [64])), [0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_op(self, a: pl.Tensor[[64], pl.FP32], b: pl.Tensor[[64], pl.FP32],
                c: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        c = self.kernel_op(a, b, c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)
    def host_main(self, x: pl.Tensor[[64], pl.FP32], y: pl.Tensor[[64], pl.FP32],
                  z: pl.Out[pl.Tensor[[64], pl.FP32]],
                  w: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        z, t0 = pl.submit(self.chip_op, x, y, z)
        w, t1 = pl.submit(self.chip_op, z, y, w, deps=[t0])
        return w
'''


def _program(op):
    return pl.parse_program(HOST_SRC.replace("OP", op))


def _run(prog):
    x = np.arange(64, dtype=np.float32)
    y = np.full(64, 0.5, np.float32)
    z, w = np.zeros(64, np.float32), np.zeros(64, np.float32)
    stats = prog(x, y, z, w)
    assert stats["tasks_executed"] == 2
    return x, y, z, w


def test_second_compile_host_runs_no_compiler(compiler_calls, tmp_path):
    first = host.compile_host(_program("add"), "host_main")
    assert compiler_calls and not first.cached
    assert first.library.startswith(str(tmp_path / "cache"))
    n = len(compiler_calls)
    # host file, 1 chip orchestration, 1 kernel, the runner, the kernel prelude's precompiled
    # header (once per cache): 5 compiles and the link.
    assert n == 6, compiler_calls

    second = host.compile_host(_program("add"), "host_main")
    assert len(compiler_calls) == n, "the second compile of the same HOST program must not invoke the compiler"
    assert second.cached and second.library == first.library
    x, y, z, w = _run(second)
    np.testing.assert_array_equal(z, x + y)
    np.testing.assert_array_equal(w, x + 2 * y)

    # A changed program is a new cache entry, built and run as changed.
    third = host.compile_host(_program("sub"), "host_main")
    assert len(compiler_calls) > n and not third.cached and third.library != first.library
    x, y, z, w = _run(third)
    np.testing.assert_array_equal(w, x - 2 * y)


def test_pypto_compile_of_a_host_entry_is_cached(compiler_calls):
    first = pypto.compile(_program("mul"))
    assert isinstance(first, host.HostProgram) and not first.cached
    n = len(compiler_calls)
    second = pypto.compile(_program("mul"))
    assert len(compiler_calls) == n and second.cached
    x, y, z, w = _run(second)
    np.testing.assert_array_equal(w, x * y * y)


def test_output_dir_receives_sources_and_library_from_the_cache(compiler_calls, tmp_path):
    host.compile_host(_program("add"), "host_main")
    n = len(compiler_calls)
    out = tmp_path / "out"
    prog = host.compile_host(_program("add"), "host_main", output_dir=str(out))
    assert len(compiler_calls) == n and prog.cached and prog.output_dir == str(out)
    for rel in ("host/host_main.cpp", "orchestration/chip_op.cpp", "kernels/kernel_op.cpp", "host_runner.cpp",
                "build.sh", build_mod.LIBRARY_NAME):
        assert (out / rel).is_file(), rel
    # build.sh has the -D renames that let several chip-level entries link together.
    assert "-Daicpu_orchestration_entry=l2_entry_chip_op" in (out / "build.sh").read_text()
    x, y, z, w = _run(prog)
    np.testing.assert_array_equal(w, x + 2 * y)
