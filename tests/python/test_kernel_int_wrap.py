"""Signed integer tile arithmetic wraps (two's complement, as NumPy) without undefined behaviour:
the kernel prelude's Add / Sub / Mul on int8..int64, compiled as kernels are (-fwrapv) with
-fsanitize=undefined and no recovery, must run and give NumPy's bits. Signed overflow in them was
undefined; UBSan found an INT32 row product overflowing under `make test-asan` (docs/running.md,
"Sanitizers"). They were then computed in unsigned types, which GCC 12.2's vectorizer miscompiled
(test_kernel_int_vectorizer.py); now in the signed type, defined by -fwrapv."""
import subprocess

import numpy as np
import pytest

from pypto.runtime import include_dir, kernel_include_dir
from pypto.runtime.build import find_compiler

SRC = r"""
#include "pypto_kernel_prelude.h"
#include <cstdio>
int main() {
  using namespace pypto_kernel;
  std::printf("%d %d %d\n", Mul{}(847075320, 25), Add{}(2147483647, 1), Sub{}(-2147483647 - 1, 1));
  std::printf("%d %d\n", (int)Mul{}((int16_t)300, (int16_t)300), (int)Add{}((int8_t)127, (int8_t)1));
  std::printf("%lld\n", (long long)Mul{}((int64_t)1 << 62, (int64_t)4));
  return 0;
}
"""


def _run_under_ubsan(tmp_path, source, name, sanitize="undefined"):
    """Builds `source` against the kernel prelude with UBSan (no recovery) and -fwrapv (the
    kernels' flag: every kernel build has it) and runs it; the completed run, checked to have
    exited cleanly with no sanitizer report."""
    (tmp_path / (name + ".cpp")).write_text(source)
    cmd = [find_compiler(), "-std=c++17", "-O1", "-fwrapv", "-fsanitize=" + sanitize, "-fno-sanitize-recover=all",
           "-I" + include_dir(), "-I" + kernel_include_dir(), name + ".cpp", "-o", name]
    cp = subprocess.run(cmd, cwd=str(tmp_path), capture_output=True, text=True)
    if cp.returncode != 0 and "sanitize" in cp.stderr:
        pytest.skip("the compiler has no UBSan runtime: %s" % cp.stderr.strip()[:200])
    assert cp.returncode == 0, cp.stderr
    run = subprocess.run([str(tmp_path / name)], capture_output=True, text=True)
    assert run.returncode == 0 and "runtime error" not in run.stderr, (run.returncode, run.stderr)
    return run


def test_signed_tile_arithmetic_wraps_without_undefined_behaviour(tmp_path):
    run = _run_under_ubsan(tmp_path, SRC, "wrap")
    with np.errstate(over="ignore"):
        want = [np.int32(847075320) * np.int32(25), np.int32(2147483647) + np.int32(1),
                np.int32(-2147483648) - np.int32(1), np.int16(300) * np.int16(300), np.int8(127) + np.int8(1),
                np.int64(1 << 62) * np.int64(4)]
    assert [int(v) for v in run.stdout.split()] == [int(v) for v in want]


DIV_SRC = r"""
#include "pypto_kernel_prelude.h"
#include <cstdio>
#include <cstdint>
#include <initializer_list>
template <class T>
void sweep(std::initializer_list<long long> vals) {
  using namespace pypto_kernel;
  for (long long a : vals)
    for (long long b : vals)
      std::printf("%lld %lld %lld %lld\n", (long long)floordiv<T>((T)a, (T)b), (long long)pymod<T>((T)a, (T)b),
                  (long long)Div{}((T)a, (T)b), (long long)Rem{}((T)a, (T)b));
}
int main() {
  sweep<int32_t>({-2147483648LL, -2147483647LL, -7, -1, 0, 1, 7, 2147483647LL});
  sweep<int64_t>({INT64_MIN, INT64_MIN + 1, -7, -1, 0, 1, 7, INT64_MAX});
  sweep<int8_t>({-128, -1, 0, 5, 127});
  return 0;
}
"""


def _int_division_want(dtype, vals):
    """NumPy's floor_divide / remainder (wrapping MIN // -1 to MIN), C's truncating / for Div, and
    0 for a zero divisor (the prelude's rule for integers)."""
    out = []
    with np.errstate(all="ignore"):
        for a in vals:
            for b in vals:
                x, y = np.array([a], dtype), np.array([b], dtype)
                if b == 0:
                    out.append((0, 0, 0, 0))
                    continue
                trunc = np.negative(x) if b == -1 else np.array([int(a / b) if abs(a) < 2 ** 52 else
                                                                  (abs(a) // abs(b)) * (1 if (a < 0) == (b < 0) else -1)], dtype)
                out.append((int(np.floor_divide(x, y)[0]), int(np.remainder(x, y)[0]), int(trunc[0]),
                            int(np.remainder(x, y)[0])))
    return out


def test_signed_division_by_minus_one_does_not_trap(tmp_path):
    """MIN / -1 and MIN % -1 trap (SIGFPE) in C++: a kernel dividing an INT32 tile holding MIN by
    -1 killed the process. The prelude answers a -1 divisor without dividing (NumPy's wrapped
    quotient, remainder 0), and floor // and % match NumPy on edge values of int8/int32/int64."""
    run = _run_under_ubsan(tmp_path, DIV_SRC, "div")
    got = [tuple(int(v) for v in l.split()) for l in run.stdout.splitlines()]
    i32 = [-2 ** 31, -2 ** 31 + 1, -7, -1, 0, 1, 7, 2 ** 31 - 1]
    i64 = [-2 ** 63, -2 ** 63 + 1, -7, -1, 0, 1, 7, 2 ** 63 - 1]
    want = (_int_division_want(np.int32, i32) + _int_division_want(np.int64, i64)
            + _int_division_want(np.int8, [-128, -1, 0, 5, 127]))
    assert got == want
