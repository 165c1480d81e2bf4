"""The SIMD builds of the FP32 element-wise loops, row reductions and row / column broadcasts (AVX2 and AVX-512,
chosen at run time; python/pypto/runtime/include_kernel/pypto_kernel_simd.h) against the
portable loops of the prelude, on ragged widths that exercise the vector tails:

  row_max / row_min          bit-for-bit (rows with NaNs give their first NaN; of equal zeros max
                             gives +0 if any is +0, min -0 if any is -0, whatever the order)
  row_sum                    within 1 ulp of the portable float result (both sum in double;
                             only the association differs)
  element-wise loops         bit-for-bit (binary, tile x scalar both ways, neg / abs / relu)
  row / col broadcasts       bit-for-bit for add, sub, mul, div, max, min and the plain expand;
                             expdif within 2 ulp (as exp: the SIMD builds fuse multiply-adds)
  matmul                     the AVX-512 and AVX2 kernels bit-for-bit against each other (ragged rows and
                             columns, strided operands; padding between rows untouched), and both, the
                             dispatching matmul() and matmul_valid() within 2 (k + 1) 2^-24 (|c| + sum |a b|)
                             of the portable loop (FMA against separate multiply and add)
"""
import platform

import pytest

from kernel_check_util import run_kernel_check

PROGRAM = r"""
#include <algorithm>
#include <array>
#include <cmath>
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

// The matmul kernels on ragged and strided shapes: c (row stride ldc) += a (lda) @ b (ldb). The
// padding after each row is a sentinel no kernel may write. AVX-512 and AVX2 both accumulate
// every element over k in order with fused multiply-adds: identical bits. The portable loop
// multiplies and adds separately: within 2 (k + 1) 2^-24 (|c| + sum |a b|) of them.
static void matmul_paths(std::mt19937& gen, bool avx512, bool avx2) {
  std::uniform_real_distribution<float> val(-4.0f, 4.0f);
  const float sentinel = 12345.0f;
  const std::array<int64_t, 3> shapes[] = {{1, 1, 1},   {3, 3, 3},    {4, 8, 32},   {7, 13, 45},  {64, 32, 64},
                                           {17, 40, 100}, {1, 256, 130}, {5, 9, 48},  {2, 70, 129}, {64, 64, 8},
                                           {37, 50, 70}, {6, 0, 20},    {9, 33, 16}, {4, 5, 17},
                                           {30, 70, 256}, {50, 90, 512},    // these two pack b's panels (pad 0)
                                           // multiples of 8 rows (8-row AVX-512 blocks): tails of 1 / 8 columns
                                           // after a panel, 17-31 and <= 16 column panels, the example's tile
                                           {16, 20, 40}, {8, 5, 33}, {24, 64, 48}, {8, 3, 20}, {16, 7, 8},
                                           {64, 64, 128}, {32, 80, 256}};
  for (const auto& shape : shapes) {
    const int64_t m = shape[0], k = shape[1], n = shape[2];
    for (int64_t pad : {0, 3}) {
      const int64_t ldc = n + pad, lda = k + pad, ldb = n + 2 * pad;
      std::vector<float> a(m * lda + 1, sentinel), b(k * ldb + 1, sentinel), c0(m * ldc + 1, sentinel);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t p = 0; p < k; ++p) a[i * lda + p] = val(gen);
      for (int64_t p = 0; p < k; ++p)
        for (int64_t j = 0; j < n; ++j) b[p * ldb + j] = val(gen);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) c0[i * ldc + j] = val(gen);
      // Reference: the portable loop on packed copies, and the error bound per element.
      std::vector<float> pa(m * k), pb(k * n), ref(m * n), bound(m * n);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t p = 0; p < k; ++p) pa[i * k + p] = a[i * lda + p];
      for (int64_t p = 0; p < k; ++p)
        for (int64_t j = 0; j < n; ++j) pb[p * n + j] = b[p * ldb + j];
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          ref[i * n + j] = c0[i * ldc + j];
          double s = std::fabs(c0[i * ldc + j]);
          for (int64_t p = 0; p < k; ++p) s += std::fabs(double(pa[i * k + p]) * pb[p * n + j]);
          bound[i * n + j] = float(2.0 * double(k + 1) * std::ldexp(1.0, -24) * s);
        }
      matmul_kernel<float, float, float>(ref.data(), pa.data(), pb.data(), m, k, n);
      const auto check = [&](const char* path, const std::vector<float>& got, const std::vector<float>* same) {
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < ldc; ++j) {
            ++checks;
            const float g = got[i * ldc + j];
            const bool ok = j >= n ? std::memcmp(&g, &sentinel, 4) == 0
                                   : std::fabs(g - ref[i * n + j]) <= bound[i * n + j] &&
                                         (!same || std::memcmp(&g, &(*same)[i * ldc + j], 4) == 0);
            if (!ok && bad++ < 10)
              std::printf("matmul %s %lldx%lldx%lld pad %lld [%lld, %lld]: %.9g vs portable %.9g\n", path, (long long)m,
                          (long long)k, (long long)n, (long long)pad, (long long)i, (long long)j, g,
                          j < n ? ref[i * n + j] : sentinel);
          }
      };
      std::vector<float> c512 = c0, c2 = c0;
      if (avx512) {
        matmul_kernel_avx512(c512.data(), ldc, a.data(), lda, b.data(), ldb, m, k, n);
        check("avx512", c512, nullptr);
      }
      if (avx2) {
        matmul_kernel_avx2(c2.data(), ldc, a.data(), lda, b.data(), ldb, m, k, n);
        check("avx2", c2, avx512 ? &c512 : nullptr);
      }
      {  // c = a @ b without reading c (load_c = false; matmul_strided with acc == nullptr, a
         // pending tile.full(0)): the bits of accumulating into a zero fill, whatever c held
         // (NaN here), padding untouched.
        std::vector<float> zero(c0), junk(c0);
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            zero[i * ldc + j] = 0.0f;
            junk[i * ldc + j] = std::nanf("");
          }
        const auto same_bits = [&](const char* path, const std::vector<float>& got, const std::vector<float>& want) {
          for (size_t i = 0; i < got.size(); ++i) {
            ++checks;
            if (std::memcmp(&got[i], &want[i], 4) != 0 && bad++ < 10)
              std::printf("matmul %s %lldx%lldx%lld pad %lld [%zu]: %.9g vs %.9g (zero fill)\n", path, (long long)m,
                          (long long)k, (long long)n, (long long)pad, i, got[i], want[i]);
          }
        };
        for (int isa = 0; isa < 2; ++isa) {
          if (isa == 0 ? !avx512 : !avx2) continue;
          std::vector<float> want = zero, got = junk;
          if (isa == 0) {
            matmul_kernel_avx512(want.data(), ldc, a.data(), lda, b.data(), ldb, m, k, n);
            matmul_kernel_avx512(got.data(), ldc, a.data(), lda, b.data(), ldb, m, k, n, /*load_c=*/false);
          } else {
            matmul_kernel_avx2(want.data(), ldc, a.data(), lda, b.data(), ldb, m, k, n);
            matmul_kernel_avx2(got.data(), ldc, a.data(), lda, b.data(), ldb, m, k, n, /*load_c=*/false);
          }
          same_bits(isa == 0 ? "avx512 load_c=false" : "avx2 load_c=false", got, want);
        }
        std::vector<float> want(m * n + 1, sentinel), got(m * n + 1, sentinel), filled(m * n, 0.0f);
        for (int64_t i = 0; i < m * n; ++i) got[i] = std::nanf("");
        matmul_strided<Storage::F32, float>(want.data(), filled.data(), a.data(), lda, b.data(), ldb, m, k, n);
        matmul_strided<Storage::F32, float>(got.data(), nullptr, a.data(), lda, b.data(), ldb, m, k, n);
        same_bits("matmul_strided acc=nullptr", got, want);
      }
      {  // matmul_strided (a box of a tensor read in place: row strides lda / ldb) into a packed
         // dst: the same bits as the kernels above; the portable loop on the strided operands
         // gives the bits of the packed one.
        std::vector<float> acc(m * n), d(m * n + 1, sentinel), pr(m * n + 1, sentinel);
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) acc[i * n + j] = pr[i * n + j] = c0[i * ldc + j];
        matmul_strided<Storage::F32, float>(d.data(), acc.data(), a.data(), lda, b.data(), ldb, m, k, n);
        matmul_kernel<float, float, float>(pr.data(), a.data(), lda, b.data(), ldb, m, k, n);
        const std::vector<float>* same = avx512 ? &c512 : avx2 ? &c2 : nullptr;
        for (int64_t i = 0; i <= m * n; ++i) {
          ++checks;
          const int64_t r = i / (n ? n : 1), col = i % (n ? n : 1);
          const bool ok = i == m * n ? std::memcmp(&d[i], &sentinel, 4) == 0
                                     : std::fabs(d[i] - ref[i]) <= bound[i] && std::memcmp(&pr[i], &ref[i], 4) == 0 &&
                                           (!same || std::memcmp(&d[i], &(*same)[r * ldc + col], 4) == 0);
          if (!ok && bad++ < 10)
            std::printf("matmul_strided %lldx%lldx%lld pad %lld [%lld]: %.9g / portable %.9g vs %.9g\n", (long long)m,
                        (long long)k, (long long)n, (long long)pad, (long long)i, d[i], pr[i], i < m * n ? ref[i] : sentinel);
        }
      }
      if (pad == 0) {  // the dispatching entry points (packed tiles; valid box = whole tile)
        std::vector<float> d(m * n + 1, sentinel), v(m * n + 1, sentinel);
        matmul<Storage::F32, float>(d.data(), c0.data(), pa.data(), pb.data(), m, k, n);
        check("dispatch", d, avx512 ? &c512 : avx2 ? &c2 : nullptr);
        matmul_valid<Storage::F32, float>(v.data(), c0.data(), pa.data(), pb.data(), m, k, n, m, k, n);
        check("valid", v, avx512 ? &c512 : avx2 ? &c2 : nullptr);
      }
    }
  }
  // matmul_valid on a box inside bigger tiles: rows / columns outside it keep acc's values.
  const int64_t m = 9, k = 12, n = 40, vm = 6, vk = 7, vn = 23;
  std::vector<float> a(m * k), b(k * n), acc(m * n), got(m * n + 1, sentinel), ref(m * n);
  for (auto& x : a) x = val(gen);
  for (auto& x : b) x = val(gen);
  for (auto& x : acc) x = val(gen);
  matmul_valid<Storage::F32, float>(got.data(), acc.data(), a.data(), b.data(), m, k, n, vm, vk, vn);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = acc[i * n + j], mag = std::fabs(s);
      if (i < vm && j < vn)
        for (int64_t p = 0; p < vk; ++p) {
          s += double(a[i * k + p]) * b[p * n + j];
          mag += std::fabs(double(a[i * k + p]) * b[p * n + j]);
        }
      ++checks;
      if (std::fabs(got[i * n + j] - s) > 2.0 * (vk + 1) * std::ldexp(1.0, -24) * mag && bad++ < 10)
        std::printf("matmul_valid box [%lld, %lld]: %.9g vs %.9g\n", (long long)i, (long long)j, got[i * n + j], s);
    }
  ++checks;
  if (std::memcmp(&got[m * n], &sentinel, 4) != 0 && bad++ < 10) std::printf("matmul_valid wrote past the tile\n");
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
    // Rows whose extreme is a zero of both signs (and -1s / +1s around them): max gives +0 and min
    // gives -0 whatever the order (the SIMD lanes met them in another order than the portable
    // loop and gave the other zero on about a third of such rows; tile fuzzer seed 3079).
    std::vector<float> az(m * n);
    std::uniform_int_distribution<int> pick(0, 3);
    for (int mx = 0; mx < 2; ++mx) {
      for (auto& x : az) { const int p = pick(gen); x = p == 0 ? 0.0f : p == 1 ? -0.0f : (mx ? -1.0f : 1.0f); }
      if (mx) row_reduce_portable(ref.data(), az.data(), m, n, Max{}); else row_reduce_portable(ref.data(), az.data(), m, n, Min{});
      for (int64_t i = 0; i < m; ++i) {
        bool pos_zero = false, neg_zero = false;
        for (int64_t j = 0; j < n; ++j) (std::signbit(az[i * n + j]) ? neg_zero : pos_zero) |= az[i * n + j] == 0.0f;
        const bool want_neg = mx ? !pos_zero : neg_zero;   // max: +0 if any; min: -0 if any
        if ((pos_zero || neg_zero) && (ref[i] != 0.0f || std::signbit(ref[i]) != want_neg) && bad++ < 10)
          std::printf("portable %s n=%lld row %lld of zeros gave %g\n", mx ? "row_max" : "row_min", (long long)n, (long long)i, ref[i]);
      }
      if (avx512) { if (mx) row_minmax_f32_avx512<true>(got.data(), az.data(), m, n); else row_minmax_f32_avx512<false>(got.data(), az.data(), m, n); expect(mx ? "row_max zeros" : "row_min zeros", "avx512", n, got, ref, 0); }
      if (avx2) { if (mx) row_minmax_f32_avx2<true>(got.data(), az.data(), m, n); else row_minmax_f32_avx2<false>(got.data(), az.data(), m, n); expect(mx ? "row_max zeros" : "row_min zeros", "avx2", n, got, ref, 0); }
    }
    // NaN rows: the portable functors give the row's first NaN (payload and sign included); the
    // SIMD builds dropped a NaN that sat in the accumulator (row[0], the first vector).
    std::vector<float> an(a);
    const float nan_a = std::nanf("1"), nan_b = -std::nanf("2");
    an[0 * n + 0] = nan_a;                           // row 0: the first element
    an[1 * n + std::min<int64_t>(1, n - 1)] = nan_b;  // row 1: in the first vector
    an[2 * n + n / 2] = nan_a;                       // row 2: the middle
    an[3 * n + n - 1] = nan_b;                       // row 3: the tail
    an[4 * n + std::min<int64_t>(2, n - 1)] = nan_b;  // row 4: two payloads, the first wins
    an[4 * n + n - 1] = nan_a;
    for (int mx = 0; mx < 2; ++mx) {
      if (mx) row_reduce_portable(ref.data(), an.data(), m, n, Max{}); else row_reduce_portable(ref.data(), an.data(), m, n, Min{});
      if (avx512) { if (mx) row_minmax_f32_avx512<true>(got.data(), an.data(), m, n); else row_minmax_f32_avx512<false>(got.data(), an.data(), m, n); expect(mx ? "row_max NaN" : "row_min NaN", "avx512", n, got, ref, 0); }
      if (avx2) { if (mx) row_minmax_f32_avx2<true>(got.data(), an.data(), m, n); else row_minmax_f32_avx2<false>(got.data(), an.data(), m, n); expect(mx ? "row_max NaN" : "row_min NaN", "avx2", n, got, ref, 0); }
      for (int64_t i = 0; i < 5; ++i)
        if (ref[i] == ref[i] && bad++ < 10) std::printf("portable row %lld with a NaN gave %.9g\n", (long long)i, ref[i]);
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
  matmul_paths(gen, avx512, avx2);
  std::printf("paths %d checks %d mismatches %d\n", int(avx512) + int(avx2), checks, bad);
  return bad != 0;
}
"""


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="the SIMD row paths are x86-64 only")
def test_simd_row_and_col_paths_match_the_portable_loops(tmp_path):
    run_kernel_check(tmp_path, "row_paths", PROGRAM)
