"""An FP32 `tile.full(0)` stays pending (kernel_pending_zero.cpp): no fill where it is defined,
a run-time flag, the zeros written by whatever uses the buffer first, except a matmul_acc
accumulating into it, which computes a @ b without reading it (the tiled GEMM's accumulator).

Each program has a twin whose accumulator starts from `pl.muls(pl.tile.full(..., 0.0), 1.0)`:
the same zeros, computed by an op (nothing pending). Both run the same kernels on the same
elements in the same order, so the outputs must be equal bit for bit, for loops that run no,
one or several iterations (a trip count only known at run time), accumulators first read by
an element-wise op or in a branch, and inits written in the loop header.
"""
import shutil
import subprocess

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto.runtime import include_dir, kernel_include_dir

M, KB, N = 37, 45, 70   # ragged: no multiple of the 6 x 32 / 4 x 16 register blocks

_PROGRAM = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[{M}, {K}], pl.FP32], b: pl.Tensor[[{K}, {N}], pl.FP32],
          x: pl.Tensor[[{M}, {N}], pl.FP32], c: pl.Out[pl.Tensor[[{M}, {N}], pl.FP32]],
          n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[{M}, {N}], pl.FP32]:
        tx = pl.load(x, [0, 0], [{M}, {N}])
{body}
        c = pl.store(acc, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[{M}, {K}], pl.FP32], b: pl.Tensor[[{K}, {N}], pl.FP32],
             x: pl.Tensor[[{M}, {N}], pl.FP32], c: pl.Out[pl.Tensor[[{M}, {N}], pl.FP32]],
             n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[{M}, {N}], pl.FP32]:
        c = self.k(a, b, x, c, n)
        return c
"""

ZERO = "pl.tile.full([%d, %d], pl.FP32, 0.0)" % (M, N)
TWIN = "pl.muls(%s, 1.0)" % ZERO   # the same zeros, not pending

_LOADS = """
            ta = pl.load(a, [0, k * {KB}], [{M}, {KB}])
            tb = pl.load(b, [k * {KB}, 0], [{KB}, {N}])"""

BODIES = {
    # the tiled GEMM: the first matmul_acc overwrites the accumulator
    "matmul_acc loop": """
        acc = {init}
        for k in pl.range(n):{loads}
            acc = pl.matmul_acc(acc, ta, tb)""",
    # the zeros are read by an add before any matmul: written first
    "add first": """
        acc = {init}
        for k in pl.range(n):{loads}
            t = pl.add(acc, tx)
            acc = pl.matmul_acc(t, ta, tb)""",
    # only odd iterations accumulate; even ones add: the flag decides at run time
    "branch": """
        acc = {init}
        for k in pl.range(n):{loads}
            if k % 2 == 1:
                acc = pl.matmul_acc(acc, ta, tb)
            else:
                acc = pl.add(acc, tx)""",
    # the init written in the loop header: computed straight into the loop's slot
    "inline init": """
        for k, (acc_in,) in pl.range(n, init_values=({init},)):{loads}
            acc_out = pl.matmul_acc(acc_in, ta, tb)
            acc = pl.yield_(acc_out)""",
    # a plain matmul into a fresh tile, then accumulated onto the pending zeros after the loop
    "after loop": """
        acc = {init}
        for k in pl.range(n):{loads}
            tx = pl.matmul_acc(tx, ta, tb)
        acc = pl.add(acc, tx)""",
}


def _prog(body, init):
    text = BODIES[body].format(init=init, loads=_LOADS.format(M=M, KB=KB, N=N))
    return pypto.compile(pl.parse_program(_PROGRAM.format(M=M, K=3 * KB, N=N, body=text)))


@pytest.fixture(scope="module")
def inputs():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((M, 3 * KB)).astype(np.float32)
    b = rng.standard_normal((3 * KB, N)).astype(np.float32)
    x = rng.standard_normal((M, N)).astype(np.float32)
    return a, b, x


@pytest.mark.parametrize("body", sorted(BODIES))
def test_pending_zeros_match_written_zeros_bit_for_bit(body, inputs):
    a, b, x = inputs
    pending, twin = _prog(body, ZERO), _prog(body, TWIN)
    src = pending.files["kernels/k.cpp"]
    assert "bool acc" in src and "= true;  // acc" in src, src   # the flag, and no fill where acc is defined
    assert "_zero" not in twin.files["kernels/k.cpp"]
    for n in (0, 1, 2, 3):
        outs = []
        for prog in (pending, twin):
            c = np.full((M, N), np.nan, np.float32)   # every element must be written
            prog(a, b, x, c, n)
            outs.append(c)
        assert np.array_equal(outs[0].view(np.uint32), outs[1].view(np.uint32)), (body, n)
        assert not np.isnan(outs[0]).any()
    if body == "matmul_acc loop":   # and both are the product
        ref = a.astype(np.float64) @ b.astype(np.float64)
        np.testing.assert_allclose(outs[0], ref, rtol=1e-4, atol=1e-4)


def test_the_matmul_overwrites_and_the_zeros_are_written_only_for_a_loop_that_did_not_run():
    src = _prog("matmul_acc loop", ZERO).files["kernels/k.cpp"]
    body = src.split("for (int64_t k")[1]
    head = src.split("for (int64_t k")[0]
    assert "pypto_kernel::fill" not in head                          # nothing written before the loop
    assert "(acc_zero ? nullptr : acc)" in body and "acc_zero = false;" in body
    assert "if (acc_zero)" in body and "pypto_kernel::fill" in body  # after the loop, before the store


def test_an_inline_init_is_not_copied_into_the_slot():
    src = _prog("inline init", TWIN).files["kernels/k.cpp"]
    assert "pypto_kernel::copy(" not in src, src                     # muls writes the slot itself
    src = _prog("inline init", ZERO).files["kernels/k.cpp"]
    assert "pypto_kernel::copy(" not in src and "pypto_kernel::fill" in src.split("for (int64_t k")[1]


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_the_flags_compile_warning_free(tmp_path):
    """The flags and their checks compile with -Wall -Wextra -Werror, as every generated kernel must."""
    for i, body in enumerate(sorted(BODIES)):
        path = tmp_path / ("k%d.cpp" % i)
        path.write_text(_prog(body, ZERO).files["kernels/k.cpp"])
        r = subprocess.run(["g++", "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-I" + include_dir(),
                            "-I" + kernel_include_dir(), "-c", str(path), "-o", str(tmp_path / ("k%d.o" % i))],
                           capture_output=True, text=True)
        assert r.returncode == 0, (body, r.stderr[:4000])
