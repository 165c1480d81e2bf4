"""Signed integer tile arithmetic wraps (two's complement, as NumPy) without undefined behaviour:
the kernel prelude's Add / Sub / Mul on int8..int64, compiled with -fsanitize=undefined and no
recovery, must run and give NumPy's bits. Signed overflow in them was undefined; UBSan found an
INT32 row product overflowing under `make test-asan` (docs/running.md, "Sanitizers")."""
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


def test_signed_tile_arithmetic_wraps_without_undefined_behaviour(tmp_path):
    cxx = find_compiler()
    (tmp_path / "wrap.cpp").write_text(SRC)
    cmd = [cxx, "-std=c++17", "-O1", "-fsanitize=undefined", "-fno-sanitize-recover=all", "-I" + include_dir(),
           "-I" + kernel_include_dir(), "wrap.cpp", "-o", "wrap"]
    cp = subprocess.run(cmd, cwd=str(tmp_path), capture_output=True, text=True)
    if cp.returncode != 0 and "sanitize" in cp.stderr:
        pytest.skip("the compiler has no UBSan runtime: %s" % cp.stderr.strip()[:200])
    assert cp.returncode == 0, cp.stderr
    run = subprocess.run([str(tmp_path / "wrap")], capture_output=True, text=True)
    assert run.returncode == 0 and "runtime error" not in run.stderr, run.stderr
    with np.errstate(over="ignore"):
        want = [np.int32(847075320) * np.int32(25), np.int32(2147483647) + np.int32(1),
                np.int32(-2147483648) - np.int32(1), np.int16(300) * np.int16(300), np.int8(127) + np.int8(1),
                np.int64(1 << 62) * np.int64(4)]
    assert [int(v) for v in run.stdout.split()] == [int(v) for v in want]
