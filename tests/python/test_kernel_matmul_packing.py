"""The FP32 matmul kernels of pypto_kernel_matmul.h (AVX2 and, where the CPU has it, AVX-512) bit-for-bit
against a scalar loop that does what their contract says: every element of c accumulated over k in
order, one fused multiply-add (std::fma) per step, from c (load_c) or from +0 (c not read).

The AVX2 kernel copies each k x 16 panel of b into a per-thread buffer (packed, at most 256 rows at
a time, longer k in chunks that add into c) when two or more row blocks share it and the panel
read in place might not stay in L1 (a long k, a row stride of b that is a multiple of 512 bytes, b
not 64-byte aligned). So the shapes here cross what packing depends on: rows below / at / above
the two blocks (1 .. 13), k around the chunk bound (255, 256, 257, 513, 600), ragged columns (1, 5,
7, 8, 9, 15, 16, 17, 33, 65, 257), operands with row strides wider than their columns (strides of
512 bytes and 1-2 KB for b among them) and b aligned or not, c with sentinels in its padding that no kernel may write, and several threads
running different matmuls at once (each must read its own packed panel).
"""
import platform

import pytest

from kernel_check_util import run_kernel_check

PROGRAM = r"""
#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>
#include <vector>
#include "pypto_kernel_prelude.h"
using namespace pypto_kernel;

struct Shape { int64_t m, k, n, pad_a, pad_b, pad_c, shift_b; };

// One matmul on `shape` with `kernel`; 0 if every element of c has the reference's bits and the
// padding keeps its sentinel, else the number of bad elements (the first few printed).
template <class Kernel>
static int check(const char* isa, Kernel kernel, const Shape& s, bool load_c, uint32_t seed, bool quiet) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> val(-2.0f, 2.0f);
  const float sentinel = 12345.0f;
  const int64_t lda = s.k + s.pad_a, ldb = s.n + s.pad_b, ldc = s.n + s.pad_c;
  std::vector<float> a(s.m * lda + 1, sentinel), braw(s.k * ldb + s.shift_b + 1, sentinel), c(s.m * ldc + 1, sentinel);
  float* b = braw.data() + s.shift_b;   // shift_b floats past the vector's (16-byte or better) alignment
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t p = 0; p < s.k; ++p) a[i * lda + p] = val(gen);
  for (int64_t p = 0; p < s.k; ++p)
    for (int64_t j = 0; j < s.n; ++j) b[p * ldb + j] = val(gen);
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) c[i * ldc + j] = load_c ? val(gen) : std::nanf("");
  std::vector<float> want(c);
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) {
      float acc = load_c ? c[i * ldc + j] : 0.0f;
      for (int64_t p = 0; p < s.k; ++p) acc = std::fma(a[i * lda + p], b[p * ldb + j], acc);
      want[i * ldc + j] = acc;
    }
  kernel(c.data(), ldc, a.data(), lda, b, ldb, s.m, s.k, s.n, load_c);
  int bad = 0;
  for (size_t i = 0; i < c.size(); ++i)
    if (std::memcmp(&c[i], &want[i], 4) != 0 && bad++ < 3 && !quiet)
      std::printf("%s %lldx%lldx%lld pads %lld/%lld/%lld shift %lld load_c %d [%lld, %lld]: %.9g, want %.9g\n", isa,
                  (long long)s.m, (long long)s.k, (long long)s.n, (long long)s.pad_a, (long long)s.pad_b,
                  (long long)s.pad_c, (long long)s.shift_b, int(load_c), (long long)(i / ldc), (long long)(i % ldc),
                  c[i], want[i]);
  return bad;
}

static std::vector<Shape> shapes() {
  std::vector<Shape> out;
  // Ragged rows / columns / k: packed strides (no padding), strided operands, and b with a row
  // stride of 512 bytes, aligned or not (its panels packed from k = 17 or 33 on).
  for (int64_t m : {1, 5, 6, 7, 11, 12, 13, 15, 16, 17, 63, 65})
    for (int64_t n : {1, 7, 9, 16, 17, 65})
      for (int64_t k : {0, 1, 5, 17, 40, 63}) {
        out.push_back({m, k, n, 0, 0, 0, 0});
        out.push_back({m, k, n, 3, 5, 2, 1});
        out.push_back({m, k, n, 1, 128 - n, 0, 0});
        out.push_back({m, k, n, 0, 128 - n, 3, 4});
      }
  // k around the packing bound (256 rows a chunk), with and without padding.
  for (int64_t k : {255, 256, 257, 513, 600})
    for (int64_t n : {5, 8, 15, 16, 33}) {
      out.push_back({13, k, n, 0, 0, 0, 0});
      out.push_back({20, k, n, 1, 7, 3, 3});
    }
  // Power-of-two row strides of b (512 B, 1 KB) wider than the columns, b off 64-byte alignment.
  out.push_back({64, 64, 100, 128, 28, 0, 4});
  out.push_back({64, 192, 128, 0, 0, 0, 0});
  out.push_back({100, 100, 100, 0, 0, 0, 0});
  out.push_back({128, 128, 128, 0, 0, 0, 4});
  out.push_back({200, 257, 257, 0, 256 - 1, 0, 4});
  out.push_back({257, 300, 200, 5, 56, 7, 1});
  out.push_back({256, 256, 256, 0, 0, 0, 4});
  return out;
}

int main() {
  const bool avx512 = cpu_has_avx512f_fma(), avx2 = cpu_has_avx2_fma();
  const auto k2 = [](float* c, int64_t ldc, const float* a, int64_t lda, const float* b, int64_t ldb, int64_t m,
                     int64_t k, int64_t n, bool load_c) { matmul_kernel_avx2(c, ldc, a, lda, b, ldb, m, k, n, load_c); };
  const auto k512 = [](float* c, int64_t ldc, const float* a, int64_t lda, const float* b, int64_t ldb, int64_t m,
                       int64_t k, int64_t n, bool load_c) { matmul_kernel_avx512(c, ldc, a, lda, b, ldb, m, k, n, load_c); };
  int bad = 0, checks = 0;
  const std::vector<Shape> all = shapes();
  uint32_t seed = 1;
  for (const Shape& s : all)
    for (bool load_c : {true, false}) {
      if (avx2) { bad += check("avx2", k2, s, load_c, seed, bad > 10); ++checks; }
      if (avx512) { bad += check("avx512", k512, s, load_c, seed, bad > 10); ++checks; }
      ++seed;
    }
  // Several threads at once, each repeating its own matmul (different k and data, so different
  // packed panels) against the reference computed once: a buffer shared between threads shows.
  if (avx2 || avx512) {
    std::vector<int> thread_bad(4, 0);
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        const int64_t m = 30 + 6 * t, k = 90 + 37 * t, n = 16 * (t + 1) + 3, ldb = 128;   // 512 B: packed
        std::mt19937 gen(1000 + t);
        std::uniform_real_distribution<float> val(-2.0f, 2.0f);
        std::vector<float> a(m * k), b(k * ldb), c0(m * n), want(m * n), c(m * n);
        for (auto& x : a) x = val(gen);
        for (auto& x : b) x = val(gen);
        for (auto& x : c0) x = val(gen);
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            float acc = c0[i * n + j];
            for (int64_t p = 0; p < k; ++p) acc = std::fma(a[i * k + p], b[p * ldb + j], acc);
            want[i * n + j] = acc;
          }
        for (ready.fetch_add(1); ready.load() < 4;) {}   // start together
        for (int r = 0; r < 400; ++r) {
          c = c0;
          if (avx2 && r % 2 == 0) matmul_kernel_avx2(c.data(), n, a.data(), k, b.data(), ldb, m, k, n);
          else if (avx512) matmul_kernel_avx512(c.data(), n, a.data(), k, b.data(), ldb, m, k, n);
          else matmul_kernel_avx2(c.data(), n, a.data(), k, b.data(), ldb, m, k, n);
          if (std::memcmp(c.data(), want.data(), c.size() * 4) != 0) ++thread_bad[t];
        }
      });
    for (auto& th : threads) th.join();
    for (int t = 0; t < 4; ++t) {
      if (thread_bad[t]) std::printf("thread %d: %d of 400 matmuls differ\n", t, thread_bad[t]);
      bad += thread_bad[t];
    }
  }
  std::printf("paths %d checks %d mismatches %d\n", int(avx512) + int(avx2), checks, bad);
  return bad != 0;
}
"""


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="the SIMD matmul kernels are x86-64 only")
def test_matmul_kernels_match_an_fma_loop_bit_for_bit(tmp_path):
    run_kernel_check(tmp_path, "matmul_packing", PROGRAM, extra_flags=("-pthread",), timeout=300)
