"""Integer tile ops survive GCC's loop vectorizer. The tile fuzzer (seed 347) found
`pl.mul(t, pl.col_sum(u))` on INT32 [5, 3] tiles giving wrong values: with the wrapping add and
multiply written in an unsigned type, GCC 12.2 at -O3 (and at -O2 for some shapes) miscompiled a
column reduction feeding a broadcast op, for 37 of the 90 row x column counts swept below. The
kernel prelude now writes them in the signed type, which the kernels' -fwrapv makes wrap."""
import subprocess

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import runtime
from pypto.runtime.build import KERNEL_FLAGS

from codegen_test_util import RUNTIME_INCLUDE

SWEEP = r"""
#include <cstdio>
#include "pypto_kernel_prelude.h"
using namespace pypto_kernel;

// A column reduction of y, broadcast against x (the fuzzer's shape of code: two inlined loops).
template <int M, int N, class T, Storage S, class R, class B>
__attribute__((noinline)) void run(const T* x, const T* y, T* o) {
  alignas(64) T t0[M * N], t1[M * N], t4[N], t7[M * N];
  for (int i = 0; i < M * N; ++i) { t0[i] = x[i]; t1[i] = y[i]; }
  col_reduce<S>(t4, t1, M, N, R{});
  binary_bcast<S>(t7, t0, M, N, t4, 1, N, M, N, B{});
  for (int i = 0; i < M * N; ++i) o[i] = t7[i];
}

template <int M, int N, class T, Storage S, class R, class B>
int check() {
  T x[M * N], y[M * N], o[M * N], t4[N];
  for (int i = 0; i < M * N; ++i) { x[i] = T(i - 7); y[i] = T((i * 3) % 11 - 4); }
  for (int j = 0; j < N; ++j) {
    t4[j] = y[j];
    for (int i = 1; i < M; ++i) t4[j] = static_cast<T>(t4[j] + y[i * N + j]);
  }
  run<M, N, T, S, R, B>(x, y, o);
  int bad = 0;
  for (int i = 0; i < M * N; ++i) bad += o[i] != static_cast<T>(B{}(x[i], t4[i % N]));
  return bad;
}

template <int M, int N>
int shape() {
  return check<M, N, int32_t, Storage::I32, Add, Mul>() + check<M, N, int32_t, Storage::I32, Add, Sub>() +
         check<M, N, int8_t, Storage::I8, Add, Mul>() + check<M, N, int16_t, Storage::I16, Add, Mul>() +
         check<M, N, int64_t, Storage::I64, Add, Mul>() + check<M, N, uint16_t, Storage::U16, Add, Mul>();
}

int main() {
  int bad = shape<5, 2>() + shape<5, 3>() + shape<5, 5>() + shape<5, 6>() + shape<5, 7>() + shape<9, 5>() +
            shape<4, 3>() + shape<7, 3>() + shape<13, 3>() + shape<17, 6>() + shape<1, 3>() + shape<8, 8>();
  printf("bad %d\n", bad);
  return 0;
}
"""


@pytest.mark.parametrize("opt", ["-O3", "-O2"])
def test_column_reduction_feeding_a_broadcast_is_right_at_every_shape(tmp_path, opt):
    src = tmp_path / "sweep.cpp"
    src.write_text(SWEEP)
    exe = tmp_path / "sweep"
    flags = [f for f in KERNEL_FLAGS if not f.startswith("-O")] + [opt]
    cp = subprocess.run(["g++", "-std=c++17", *flags, "-Wall", "-Werror", "-I", runtime.kernel_include_dir(),
                         "-I", RUNTIME_INCLUDE, str(src), "-o", str(exe)], capture_output=True, text=True)
    assert cp.returncode == 0, cp.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60).stdout
    assert out.strip() == "bad 0", out


PROGRAM = '''
import pypto.language as pl

@pl.program
class ColSumMul:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[5, 3], pl.INT32], y: pl.Tensor[[5, 3], pl.INT32],
          out: pl.Out[pl.Tensor[[5, 3], pl.INT32]]) -> pl.Tensor[[5, 3], pl.INT32]:
        t0 = pl.load(x, [0, 0], [5, 3])
        t1 = pl.load(y, [0, 0], [5, 3])
        out = pl.store(pl.mul(t0, pl.col_sum(t1)), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[5, 3], pl.INT32], y: pl.Tensor[[5, 3], pl.INT32],
             out: pl.Out[pl.Tensor[[5, 3], pl.INT32]]) -> pl.Tensor[[5, 3], pl.INT32]:
        out = self.k(x, y, out)
        return out
'''


def test_the_fuzzers_program_gives_numpys_values():
    x = np.arange(15, dtype=np.int32).reshape(5, 3) - 7
    y = (np.arange(15, dtype=np.int32).reshape(5, 3) * 3) % 11 - 4
    out = np.zeros((5, 3), np.int32)
    pypto.compile(pl.parse_program(PROGRAM, "col_sum_mul.py"))(x, y, out)
    np.testing.assert_array_equal(out, x * y.sum(axis=0, keepdims=True))
