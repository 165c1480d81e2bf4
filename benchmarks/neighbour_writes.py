"""Why kernel accumulators stay in their own buffer (docs/kernels.md, "Values"): the tiled GEMM's
kernel calls on two threads, each thread doing two 64 x 192 x 128 tasks (three k steps of
`matmul_strided`, the prelude's call for a loop-carried `matmul_acc`) per round, in three layouts:

    separate   each thread has its own A, B and C arrays, accumulating in its rows of C
    in place   one C array; each task accumulates in its own rows of it (neighbouring rows are
               another thread's), as pass KernelAccumulateInStore once had kernels do
    own+copy   one C array; each task accumulates in a buffer of its own and copies it into its
               rows once at the end (what kernels do now)

Printed: median and best microseconds per round (two tasks) per thread and layout, and each
layout's median against `separate`. The rounds alternate the layouts, and the threads start
each round together (a spin barrier). Built with the kernels' own flags against the installed
kernel headers; needs g++ and x86-64 with AVX2 for the SIMD kernel (else the portable loop runs).

    python benchmarks/neighbour_writes.py [rounds]
"""
import os
import subprocess
import sys
import tempfile

from pypto import runtime
from pypto.runtime.build import KERNEL_FLAGS

PROGRAM = r"""
#include "pypto_kernel_prelude.h"
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {
constexpr int M = 256, K = 192, N = 128, TM = 64, TK = 64;
enum Layout { kSeparate, kInPlace, kOwnCopy, kLayouts };
const char* const kNames[kLayouts] = {"separate", "in place", "own+copy"};

float* array(size_t n, float v) {
  float* p = static_cast<float*>(std::aligned_alloc(64, n * sizeof(float)));
  for (size_t i = 0; i < n; ++i) p[i] = v * static_cast<float>(i % 7);
  return p;
}

// One task: rows [r * TM, r * TM + TM) of c = a @ b, in three k steps.
void task(const float* a, const float* b, float* c, int r, bool own_buffer) {
  alignas(64) static thread_local float own[TM * N];
  float* const box = c + static_cast<int64_t>(r) * TM * N;
  float* const acc = own_buffer ? own : box;
  for (int k = 0; k < K / TK; ++k)
    pypto_kernel::matmul_strided<pypto_kernel::Storage::F32, float>(
        acc, k == 0 ? nullptr : acc, a + static_cast<int64_t>(r) * TM * K + k * TK, K, b + static_cast<int64_t>(k) * TK * N,
        N, TM, TK, N);
  if (own_buffer) std::copy(acc, acc + TM * N, box);
}

double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 3000;
  float* a[2] = {array(M * K, 0.1f), array(M * K, 0.1f)};
  float* b[2] = {array(K * N, 0.2f), array(K * N, 0.2f)};
  float* c[2] = {array(M * N, 0.f), array(M * N, 0.f)};
  std::vector<double> times[kLayouts][2];
  std::atomic<int> arrived{0};
  auto body = [&](int tid) {
    int expected = 0;
    for (int it = 0; it < rounds * kLayouts; ++it) {
      const Layout layout = static_cast<Layout>(it % kLayouts);
      expected += 2;
      arrived.fetch_add(1);
      while (arrived.load() < expected) {
      }
      const int own = layout == kSeparate ? tid : 0;   // whose arrays
      const double t0 = now_us();
      task(a[own], b[own], c[own], tid, layout == kOwnCopy);       // thread 0: rows 0-63, 128-191
      task(a[own], b[own], c[own], tid + 2, layout == kOwnCopy);   // thread 1: rows 64-127, 192-255
      times[layout][tid].push_back(now_us() - t0);
    }
  };
  std::thread other(body, 1);
  body(0);
  other.join();
  double base = 0;
  for (int l = 0; l < kLayouts; ++l) {
    double med = 0;
    for (int t = 0; t < 2; ++t) {
      std::vector<double>& v = times[l][t];
      std::sort(v.begin(), v.end());
      std::printf("%-9s thread %d: median %6.1f us, best %6.1f us per round of two tasks\n", kNames[l], t,
                  v[v.size() / 2], v[0]);
      med = std::max(med, v[v.size() / 2]);
    }
    if (l == kSeparate) base = med;
    std::printf("%-9s slower thread's median / separate's: %.2f\n", kNames[l], med / base);
  }
  return 0;
}
"""


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    rounds = argv[0] if argv else "3000"
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "neighbour_writes.cpp"), os.path.join(tmp, "neighbour_writes")
        with open(src, "w") as f:
            f.write(PROGRAM)
        subprocess.run(["g++", "-std=c++17", *KERNEL_FLAGS, "-pthread", "-I", runtime.kernel_include_dir(),
                        "-I", runtime.include_dir(), src, "-o", exe], check=True)
        subprocess.run([exe, rounds], check=True)


if __name__ == "__main__":
    main()
