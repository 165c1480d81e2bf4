"""The SIMD builds of the FP32 element-wise loops, row reductions and row / column broadcasts (AVX2 and AVX-512,
chosen at run time; python/pypto/runtime/include_kernel/pypto_kernel_simd.h) against the
portable loops of the prelude, on ragged widths that exercise the vector tails:

  row_max / row_min          bit-for-bit (NaN-free, non-zero data)
  row_sum                    within 1 ulp of the portable float result (both sum in double;
                             only the association differs)
  element-wise loops         bit-for-bit (binary, tile x scalar both ways, neg / abs / relu)
  row / col broadcasts       bit-for-bit for add, sub, mul, div, max, min and the plain expand;
                             expdif within 2 ulp (as exp: the SIMD builds fuse multiply-adds)
  matmul                     the AVX-512 kernel bit-for-bit against the AVX2 one
"""
import platform
import subprocess

import pytest

from pypto import runtime

from codegen_test_util import RUNTIME_INCLUDE

PROGRAM = r"""
#include <array>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>
#include "pypto_kernel_prelude.h"
using namespace pypto_kernel;

static int bad = 0, checks = 0;
static int32_t ulps(float a, float b) {
  int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  return ia > ib ? ia - ib : ib - ia;
}
static void expect(const char* what, const char* path, int64_t n, const std::vector<float>& got,
                   const std::vector<float>& ref, int32_t max_ulps) {
  for (size_t i = 0; i < ref.size(); ++i) {
    ++checks;
    const bool ok = max_ulps == 0 ? std::memcmp(&got[i], &ref[i], 4) == 0 : ulps(got[i], ref[i]) <= max_ulps;
    if (!ok && bad++ < 10) std::printf("%s %s n=%lld [%zu]: %.9g vs portable %.9g\n", what, path, (long long)n, i, got[i], ref[i]);
  }
}

template <class Op>
static void broadcasts(const char* name, Op op, int32_t tol, const std::vector<float>& a, const std::vector<float>& r,
                       const std::vector<float>& c, int64_t m, int64_t n, bool avx512, bool avx2) {
  std::vector<float> ref(m * n), got(m * n);
  row_expand_portable(ref.data(), a.data(), r.data(), m, n, op);
  if (avx512) { row_expand_f32_avx512(got.data(), a.data(), r.data(), m, n, op); expect(name, "row avx512", n, got, ref, tol); }
  if (avx2) { row_expand_f32_avx2(got.data(), a.data(), r.data(), m, n, op); expect(name, "row avx2", n, got, ref, tol); }
  row_expand<Storage::F32>(got.data(), a.data(), r.data(), m, n, op);
  expect(name, "row dispatch", n, got, ref, tol);
  col_expand_portable(ref.data(), a.data(), c.data(), m, n, op);
  col_expand<Storage::F32>(got.data(), a.data(), c.data(), m, n, op);
  expect(name, "col dispatch", n, got, ref, tol);
  if (avx512) { col_expand_f32_avx512(got.data(), a.data(), c.data(), m, n, op); expect(name, "col avx512", n, got, ref, tol); }
  if (avx2) { col_expand_f32_avx2(got.data(), a.data(), c.data(), m, n, op); expect(name, "col avx2", n, got, ref, tol); }
}

// The element-wise loops: each SIMD build against the plain loop (compiled for baseline x86-64).
template <class Op>
static void elementwise(const char* name, Op op, const std::vector<float>& a, const std::vector<float>& b,
                        bool avx512, bool avx2) {
  const int64_t n = static_cast<int64_t>(a.size());
  std::vector<float> ref(n), got(n);
  for (int64_t i = 0; i < n; ++i) ref[i] = op(a[i], b[i]);
  if (avx512) { binary_f32_avx512(got.data(), a.data(), b.data(), n, op); expect(name, "binary avx512", n, got, ref, 0); }
  if (avx2) { binary_f32_avx2(got.data(), a.data(), b.data(), n, op); expect(name, "binary avx2", n, got, ref, 0); }
  for (int64_t i = 0; i < n; ++i) ref[i] = op(a[i], b[0]);
  if (avx512) { binary_scalar_f32_avx512(got.data(), a.data(), b[0], n, op, false); expect(name, "scalar avx512", n, got, ref, 0); }
  if (avx2) { binary_scalar_f32_avx2(got.data(), a.data(), b[0], n, op, false); expect(name, "scalar avx2", n, got, ref, 0); }
  for (int64_t i = 0; i < n; ++i) ref[i] = op(b[0], a[i]);
  if (avx512) { binary_scalar_f32_avx512(got.data(), a.data(), b[0], n, op, true); expect(name, "scalar-left avx512", n, got, ref, 0); }
  if (avx2) { binary_scalar_f32_avx2(got.data(), a.data(), b[0], n, op, true); expect(name, "scalar-left avx2", n, got, ref, 0); }
}

template <class Op>
static void unary_paths(const char* name, Op op, const std::vector<float>& a, bool avx512, bool avx2) {
  const int64_t n = static_cast<int64_t>(a.size());
  std::vector<float> ref(n), got(n);
  for (int64_t i = 0; i < n; ++i) ref[i] = op(a[i]);
  if (avx512) { unary_f32_avx512(got.data(), a.data(), n, op); expect(name, "unary avx512", n, got, ref, 0); }
  if (avx2) { unary_f32_avx2(got.data(), a.data(), n, op); expect(name, "unary avx2", n, got, ref, 0); }
}

int main() {
  const bool avx512 = cpu_has_avx512f(), avx2 = cpu_has_avx2();
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> mag(0.01f, 100.0f);
  std::bernoulli_distribution neg(0.5);
  const int64_t m = 7;
  for (int64_t n : {1, 2, 5, 8, 9, 15, 16, 17, 31, 33, 64, 100, 257}) {
    std::vector<float> a(m * n), r(m), c(n), pos(m * n);
    for (auto& x : a) x = neg(gen) ? -mag(gen) : mag(gen);
    for (auto& x : pos) x = mag(gen);
    for (auto& x : r) x = neg(gen) ? -mag(gen) : mag(gen);
    for (auto& x : c) x = neg(gen) ? -mag(gen) : mag(gen);
    std::vector<float> ref(m), got(m);
    for (int mx = 0; mx < 2; ++mx) {
      if (mx) row_reduce_portable(ref.data(), a.data(), m, n, Max{}); else row_reduce_portable(ref.data(), a.data(), m, n, Min{});
      if (avx512) { if (mx) row_minmax_f32_avx512<true>(got.data(), a.data(), m, n); else row_minmax_f32_avx512<false>(got.data(), a.data(), m, n); expect(mx ? "row_max" : "row_min", "avx512", n, got, ref, 0); }
      if (avx2) { if (mx) row_minmax_f32_avx2<true>(got.data(), a.data(), m, n); else row_minmax_f32_avx2<false>(got.data(), a.data(), m, n); expect(mx ? "row_max" : "row_min", "avx2", n, got, ref, 0); }
    }
    // The dispatchers the generated kernels call pick one of the paths above.
    row_reduce<Storage::F32>(got.data(), a.data(), m, n, Max{});
    row_reduce_portable(ref.data(), a.data(), m, n, Max{});
    expect("row_max", "dispatch", n, got, ref, 0);
    for (const auto* src : {&a, &pos}) {
      row_sum_portable(ref.data(), src->data(), m, n);
      if (avx512) { row_sum_f32_avx512(got.data(), src->data(), m, n); expect("row_sum", "avx512", n, got, ref, 1); }
      if (avx2) { row_sum_f32_avx2(got.data(), src->data(), m, n); expect("row_sum", "avx2", n, got, ref, 1); }
      row_sum<Storage::F32>(got.data(), src->data(), m, n);
      expect("row_sum", "dispatch", n, got, ref, 1);
    }
    elementwise("add", Add{}, a, pos, avx512, avx2);
    elementwise("sub", Sub{}, a, pos, avx512, avx2);
    elementwise("mul", Mul{}, a, pos, avx512, avx2);
    elementwise("div", Div{}, a, pos, avx512, avx2);
    elementwise("max", Max{}, a, pos, avx512, avx2);
    elementwise("min", Min{}, a, pos, avx512, avx2);
    elementwise("rem", Rem{}, a, pos, avx512, avx2);
    unary_paths("neg", Neg{}, a, avx512, avx2);
    unary_paths("abs", Abs{}, a, avx512, avx2);
    unary_paths("relu", Relu{}, a, avx512, avx2);
    broadcasts("add", Add{}, 0, a, r, c, m, n, avx512, avx2);
    broadcasts("sub", Sub{}, 0, a, r, c, m, n, avx512, avx2);
    broadcasts("mul", Mul{}, 0, a, r, c, m, n, avx512, avx2);
    broadcasts("div", Div{}, 0, a, r, c, m, n, avx512, avx2);
    broadcasts("max", Max{}, 0, a, r, c, m, n, avx512, avx2);
    broadcasts("min", Min{}, 0, a, r, c, m, n, avx512, avx2);
    broadcasts("expand", Second{}, 0, a, r, c, m, n, avx512, avx2);
    std::vector<float> small(a);   // expdif in exp's useful range
    for (auto& x : small) x *= 0.05f;
    std::vector<float> rs(r), cs(c);
    for (auto& x : rs) x *= 0.05f;
    for (auto& x : cs) x *= 0.05f;
    broadcasts("expdif", ExpDif{}, 2, small, rs, cs, m, n, avx512, avx2);
  }
  // The matmul kernels: the AVX-512 one (4 x 32 blocks) against the AVX2 one (4 x 16 blocks);
  // both accumulate each element over k in order with fused multiply-adds: identical bits.
  if (avx512 && avx2) {
    for (auto [mm, kk, nn] : {std::array<int64_t, 3>{4, 8, 32}, {7, 13, 45}, {64, 32, 64}, {17, 40, 100}}) {
      std::vector<float> x(mm * kk), y(kk * nn), ref(mm * nn, 0.5f), got(mm * nn, 0.5f);
      for (auto& v : x) v = neg(gen) ? -mag(gen) : mag(gen);
      for (auto& v : y) v = neg(gen) ? -mag(gen) : mag(gen);
      matmul_kernel_avx2(ref.data(), x.data(), y.data(), mm, kk, nn);
      matmul_kernel_avx512(got.data(), x.data(), y.data(), mm, kk, nn);
      expect("matmul", "avx512 vs avx2", nn, got, ref, 0);
    }
  }
  std::printf("paths %d checks %d mismatches %d\n", int(avx512) + int(avx2), checks, bad);
  return bad != 0;
}
"""


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="the SIMD row paths are x86-64 only")
def test_simd_row_and_col_paths_match_the_portable_loops(tmp_path):
    src = tmp_path / "row_paths.cpp"
    src.write_text(PROGRAM)
    exe = tmp_path / "row_paths"
    cp = subprocess.run(["g++", "-std=c++17", "-O3", "-fno-trapping-math", "-Wall", "-Werror",
                         "-I", runtime.kernel_include_dir(), "-I", RUNTIME_INCLUDE, str(src), "-o", str(exe)],
                        capture_output=True, text=True)
    assert cp.returncode == 0, cp.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "mismatches 0" in run.stdout
    with open("/proc/cpuinfo") as f:
        flags = f.read()
    expected = (" avx512f" in flags) + (" avx2" in flags)
    assert f"paths {expected} " in run.stdout, run.stdout
