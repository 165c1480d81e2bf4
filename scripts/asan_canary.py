"""The canary of scripts/run_asan.sh: builds a library the way pypto builds program libraries
(pypto.runtime.build.build_sources, so with $PYPTO_CXXFLAGS and linked to $PYPTO_LIBPTO2) whose
functions write one element past a heap array (in a host file), shift an int by more than its
width and convert an out-of-range float to int (in a kernel file, with the kernels' own flags)
and overflow a signed int (in a second
kernel file built with -fno-wrapv: every generated file builds with -fwrapv, where signed overflow
wraps by definition and UBSan has nothing to report), calls each in a child process and fails
unless AddressSanitizer and UndefinedBehaviorSanitizer stop it. Without this a sanitizer run that
lost its flags (for either kind of file) or its preloaded runtime would pass, having checked
nothing."""

import subprocess
import sys

from pypto.runtime.build import build_sources

HOST_SOURCE = r"""
#include <cstdlib>
extern "C" int canary_heap_overflow(int n) {
  int* a = static_cast<int*>(std::malloc(sizeof(int) * n));
  for (int i = 0; i <= n; ++i) a[i] = i;   // one past the end
  int s = a[0];
  std::free(a);
  return s;
}
"""
KERNEL_SOURCE = r"""
extern "C" int canary_shift_overflow(int x) { return 1 << (x + 30); }
extern "C" int canary_float_cast_overflow(int x) { volatile float f = 1e10f * static_cast<float>(x); return static_cast<int>(f); }
"""
# -fno-wrapv after the kernels' -fwrapv: signed overflow is undefined again, so UBSan checks it.
WRAP_SOURCE = r"""
extern "C" int canary_signed_overflow(int x) { return x + 2147483647; }
"""

CHILD = "import ctypes, sys; lib = ctypes.CDLL(sys.argv[1]); print(getattr(lib, sys.argv[2])(int(sys.argv[3])))"


def main() -> int:
    lib = build_sources({"canary.cpp": HOST_SOURCE, "kernels/canary_kernel.cpp": KERNEL_SOURCE,
                         "kernels/canary_wrap.cpp": WRAP_SOURCE},
                        file_flags={"kernels/canary_wrap.cpp": ["-fno-wrapv"]}, label="asan canary").library
    failed = False
    for fn, arg, finding in (("canary_heap_overflow", "8", "heap-buffer-overflow"),
                             ("canary_shift_overflow", "5", "shift exponent"),
                             ("canary_signed_overflow", "5", "signed integer overflow"),
                             ("canary_float_cast_overflow", "5", "outside the range of representable values")):
        cp = subprocess.run([sys.executable, "-c", CHILD, lib, fn, arg], capture_output=True, text=True)
        if cp.returncode == 0 or finding not in cp.stderr:
            print("asan canary: %s was not caught (exit %d); the sanitizer run checks nothing\n%s"
                  % (fn, cp.returncode, cp.stderr[-2000:]), file=sys.stderr)
            failed = True
    if not failed:
        print("asan canary: out-of-bounds write, shift overflow, signed overflow and float cast overflow caught")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
