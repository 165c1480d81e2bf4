// pypto_kernel_simd.h — AVX2 and AVX-512 builds of the FP32 row reductions (row_sum, row_max,
// row_min) and row / column broadcasts, chosen at run time by the helpers of
// pypto_kernel_prelude.h like the exp loop (the generated libraries target baseline x86-64).
// Included by the prelude after its element-wise functors.
//
// Agreement with the portable loops (tests/python/test_kernel_row_col_paths.py):
//   row_max / row_min   bit-for-bit (MAXPS / MINPS are `a > b ? a : b` / `a < b ? a : b`, the
//                       functors' own definitions on numbers; only the order of the comparisons
//                       differs, which can change the sign of a zero result); a row with a NaN
//                       gives its first NaN, as the functors (first_nan)
//   row_sum             within 1 ulp of the float result: both sum in double, in a different
//                       association (8 or 16 partial sums instead of one)
//   broadcasts          bit-for-bit (the same single IEEE operation per element), except
//                       expdif, which like exp is within 2 ulp (the SIMD builds fuse multiply-adds)
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

namespace pypto_kernel {

// GCC 12 builds `_mm512_max_ps`, `_mm512_min_ps`, `_mm512_cvtps_pd` and `_mm512_reduce_add_pd` on an
// `_mm512_undefined_*()` placeholder that -Wall reports as uninitialized once inlined, and a
// `#pragma GCC diagnostic` cannot silence it in pypto's builds (GCC drops the pragma from the
// precompiled prelude): a -Werror build failed. The zero-masked forms with every lane selected
// are the same instructions without the placeholder.
__attribute__((target("avx512f"), always_inline)) inline __m512 max_ps_avx512(__m512 a, __m512 b) {
  return _mm512_maskz_max_ps(static_cast<__mmask16>(0xffff), a, b);
}
__attribute__((target("avx512f"), always_inline)) inline __m512 min_ps_avx512(__m512 a, __m512 b) {
  return _mm512_maskz_min_ps(static_cast<__mmask16>(0xffff), a, b);
}
__attribute__((target("avx512f"), always_inline)) inline __m512d cvtps_pd_avx512(__m256 a) {
  return _mm512_maskz_cvtps_pd(static_cast<__mmask8>(0xff), a);
}
// `_mm512_reduce_add_pd`'s association (upper half + lower half, then pairs), its halves taken
// the same way as above.
__attribute__((target("avx512f"), always_inline)) inline double reduce_add_pd_avx512(__m512d a) {
  const __m256d half = _mm256_add_pd(_mm512_maskz_extractf64x4_pd(static_cast<__mmask8>(0xf), a, 1),
                                     _mm512_maskz_extractf64x4_pd(static_cast<__mmask8>(0xf), a, 0));
  const __m128d quarter = _mm_add_pd(_mm256_extractf128_pd(half, 1), _mm256_extractf128_pd(half, 0));
  return quarter[0] + quarter[1];
}

// ---- row reductions -------------------------------------------------------------------------

// MAXPS / MINPS return their second operand when either is NaN, so a NaN already in the
// accumulator is dropped by the next comparison: a row with a NaN reduced to a number or to NaN
// depending on where the NaN sat and on the CPU. The portable functors propagate NaN (a row
// with one reduces to its first NaN, as NumPy's max): the SIMD builds track whether a row has a
// NaN (one unordered compare per vector) and then take its first NaN, the same bits.
inline float first_nan(const float* row, int64_t n) {
  for (int64_t j = 0; j < n; ++j)
    if (row[j] != row[j]) return row[j];
  return row[0];
}

__attribute__((target("avx2"))) inline double hsum_pd256(__m256d v) {
  const __m128d lo = _mm256_castpd256_pd128(v), hi = _mm256_extractf128_pd(v, 1);
  const __m128d s = _mm_add_pd(lo, hi);
  return _mm_cvtsd_f64(s) + _mm_cvtsd_f64(_mm_unpackhi_pd(s, s));
}

__attribute__((target("avx2"))) inline void row_sum_f32_avx2(float* dst, const float* a, int64_t m, int64_t n) {
  for (int64_t i = 0; i < m; ++i) {
    const float* row = a + i * n;
    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
    int64_t j = 0;
    for (; j + 8 <= n; j += 8) {
      s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm_loadu_ps(row + j)));
      s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm_loadu_ps(row + j + 4)));
    }
    double acc = hsum_pd256(_mm256_add_pd(s0, s1));
    for (; j < n; ++j) acc += static_cast<double>(row[j]);
    dst[i] = static_cast<float>(acc);
  }
}

__attribute__((target("avx512f"))) inline void row_sum_f32_avx512(float* dst, const float* a, int64_t m, int64_t n) {
  for (int64_t i = 0; i < m; ++i) {
    const float* row = a + i * n;
    __m512d s0 = _mm512_setzero_pd(), s1 = _mm512_setzero_pd();
    int64_t j = 0;
    for (; j + 16 <= n; j += 16) {
      s0 = _mm512_add_pd(s0, cvtps_pd_avx512(_mm256_loadu_ps(row + j)));
      s1 = _mm512_add_pd(s1, cvtps_pd_avx512(_mm256_loadu_ps(row + j + 8)));
    }
    double acc = reduce_add_pd_avx512(_mm512_add_pd(s0, s1));
    for (; j < n; ++j) acc += static_cast<double>(row[j]);
    dst[i] = static_cast<float>(acc);
  }
}

// row max (kMax) / min over n >= 1 elements per row.
template <bool kMax>
__attribute__((target("avx2"))) inline void row_minmax_f32_avx2(float* dst, const float* a, int64_t m, int64_t n) {
  for (int64_t i = 0; i < m; ++i) {
    const float* row = a + i * n;
    float acc = row[0];
    int64_t j = 1;
    bool nan = row[0] != row[0];
    if (n >= 9) {
      __m256 v = _mm256_loadu_ps(row + 1);
      __m256 unordered = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
      for (j = 9; j + 8 <= n; j += 8) {
        const __m256 x = _mm256_loadu_ps(row + j);
        v = kMax ? _mm256_max_ps(v, x) : _mm256_min_ps(v, x);
        unordered = _mm256_or_ps(unordered, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
      }
      nan = nan || _mm256_movemask_ps(unordered) != 0;
      alignas(32) float lanes[8];
      _mm256_store_ps(lanes, v);
      for (float l : lanes) acc = kMax ? (acc > l ? acc : l) : (acc < l ? acc : l);
    }
    for (; j < n; ++j) {
      nan = nan || row[j] != row[j];
      acc = kMax ? (acc > row[j] ? acc : row[j]) : (acc < row[j] ? acc : row[j]);
    }
    dst[i] = nan ? first_nan(row, n) : signed_zero_extreme<std::conditional_t<kMax, Max, Min>>(acc, row, n, 1);
  }
}

template <bool kMax>
__attribute__((target("avx512f"))) inline void row_minmax_f32_avx512(float* dst, const float* a, int64_t m, int64_t n) {
  for (int64_t i = 0; i < m; ++i) {
    const float* row = a + i * n;
    float acc = row[0];
    int64_t j = 1;
    bool nan = row[0] != row[0];
    if (n >= 17) {
      __m512 v = _mm512_loadu_ps(row + 1);
      __mmask16 unordered = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
      for (j = 17; j + 16 <= n; j += 16) {
        const __m512 x = _mm512_loadu_ps(row + j);
        v = kMax ? max_ps_avx512(v, x) : min_ps_avx512(v, x);
        unordered = static_cast<__mmask16>(unordered | _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q));
      }
      if (j < n) {   // the tail in one masked load: lanes past the row keep v's own values
        const __mmask16 tail = static_cast<__mmask16>((1u << (n - j)) - 1);
        const __m512 x = _mm512_mask_loadu_ps(v, tail, row + j);
        v = kMax ? max_ps_avx512(v, x) : min_ps_avx512(v, x);
        unordered = static_cast<__mmask16>(unordered | _mm512_mask_cmp_ps_mask(tail, x, x, _CMP_UNORD_Q));
        j = n;
      }
      nan = nan || unordered != 0;
      alignas(64) float lanes[16];
      _mm512_store_ps(lanes, v);
      for (float l : lanes) acc = kMax ? (acc > l ? acc : l) : (acc < l ? acc : l);
    }
    for (; j < n; ++j) {
      nan = nan || row[j] != row[j];
      acc = kMax ? (acc > row[j] ? acc : row[j]) : (acc < row[j] ? acc : row[j]);
    }
    dst[i] = nan ? first_nan(row, n) : signed_zero_extreme<std::conditional_t<kMax, Max, Min>>(acc, row, n, 1);
  }
}

// ---- row / column broadcasts: the portable loops compiled for wider vectors ----------------

template <class Op>
__attribute__((target("avx2,fma"))) inline void row_expand_f32_avx2(float* dst, const float* a, const float* r,
                                                                    int64_t m, int64_t n, Op op) {
  for (int64_t i = 0; i < m; ++i) {
    const float ri = r[i];
    const float* src = a + i * n;
    float* out = dst + i * n;
    for (int64_t j = 0; j < n; ++j) out[j] = op(src[j], ri);
  }
}

template <class Op>
__attribute__((target("avx512f,fma"))) inline void row_expand_f32_avx512(float* dst, const float* a, const float* r,
                                                                         int64_t m, int64_t n, Op op) {
  for (int64_t i = 0; i < m; ++i) {
    const float ri = r[i];
    const float* src = a + i * n;
    float* out = dst + i * n;
    for (int64_t j = 0; j < n; ++j) out[j] = op(src[j], ri);
  }
}

template <class Op>
__attribute__((target("avx2,fma"))) inline void col_expand_f32_avx2(float* dst, const float* a, const float* c,
                                                                    int64_t m, int64_t n, Op op) {
  for (int64_t i = 0; i < m; ++i) {
    const float* src = a + i * n;
    float* out = dst + i * n;
    for (int64_t j = 0; j < n; ++j) out[j] = op(src[j], c[j]);
  }
}

template <class Op>
__attribute__((target("avx512f,fma"))) inline void col_expand_f32_avx512(float* dst, const float* a, const float* c,
                                                                         int64_t m, int64_t n, Op op) {
  for (int64_t i = 0; i < m; ++i) {
    const float* src = a + i * n;
    float* out = dst + i * n;
    for (int64_t j = 0; j < n; ++j) out[j] = op(src[j], c[j]);
  }
}

// ---- element-wise loops (same-shape binary, tile x scalar, unary in the tile's own type) ------
// One IEEE operation per element and no multiply-add to fuse: bit-identical to the portable loops.

template <class Op>
__attribute__((target("avx512f"))) inline void binary_f32_avx512(float* dst, const float* a, const float* b, int64_t n,
                                                                  Op op) {
  for (int64_t i = 0; i < n; ++i) dst[i] = op(a[i], b[i]);
}
template <class Op>
__attribute__((target("avx2"))) inline void binary_f32_avx2(float* dst, const float* a, const float* b, int64_t n, Op op) {
  for (int64_t i = 0; i < n; ++i) dst[i] = op(a[i], b[i]);
}
template <class Op>
__attribute__((target("avx512f"))) inline void binary_scalar_f32_avx512(float* dst, const float* a, float s, int64_t n,
                                                                         Op op, bool scalar_left) {
  if (scalar_left) {
    for (int64_t i = 0; i < n; ++i) dst[i] = op(s, a[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = op(a[i], s);
  }
}
template <class Op>
__attribute__((target("avx2"))) inline void binary_scalar_f32_avx2(float* dst, const float* a, float s, int64_t n, Op op,
                                                                   bool scalar_left) {
  if (scalar_left) {
    for (int64_t i = 0; i < n; ++i) dst[i] = op(s, a[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = op(a[i], s);
  }
}
template <class Op>
__attribute__((target("avx512f"))) inline void unary_f32_avx512(float* dst, const float* a, int64_t n, Op op) {
  for (int64_t i = 0; i < n; ++i) dst[i] = op(a[i]);
}
template <class Op>
__attribute__((target("avx2"))) inline void unary_f32_avx2(float* dst, const float* a, int64_t n, Op op) {
  for (int64_t i = 0; i < n; ++i) dst[i] = op(a[i]);
}

inline bool cpu_has_avx512f() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
  return has;
}
inline bool cpu_has_avx2() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}

}  // namespace pypto_kernel

#define PYPTO_HAVE_ROW_SIMD 1
#endif
