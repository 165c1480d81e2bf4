// pypto_kernel_matmul.h — the register-blocked FP32 matmul kernels (AVX-512 and AVX2 + FMA)
// that matmul() / matmul_valid() of pypto_kernel_prelude.h choose at run time; the generated
// libraries target baseline x86-64, so each kernel carries its own target attribute.
//
//     c[i, j] += sum over p < k of a[i, p] * b[p, j]     i < m, j < n
//
// with row strides ldc / lda / ldb (a valid box inside a larger tile). Every element of c is
// accumulated in k order with one fused multiply-add per step, in registers, whatever block it
// falls in (full blocks, ragged rows and ragged columns alike): the AVX-512 and AVX2 kernels give
// identical bits, and differ from the portable loop (separate multiply and add) only by the
// rounding of the products, within 2 (k + 1) 2^-24 (|c| + sum |a[i, p] b[p, j]|) of each other
// (tests/python/test_kernel_row_col_paths.py checks both).
//
// Blocks: AVX-512 6 x 32 (twelve zmm accumulators; 8 x 32 when the rows are a multiple of 8),
// AVX2 6 x 16 (twelve ymm accumulators); 4 x 32 (4 x 16) for 4-5 rows left; per k step 2 loads
// of b, 6 (8) broadcasts of a and 12 (16) FMAs.
// (AVX2 4 x 16 blocks, eight accumulators, ran 3-5 % slower on 64 x 64 x 128 .. 128^3 and 30 %
// on 256^3, best of 7 interleaved runs of the AVX2 kernel on an AVX-512 machine.)
// With load_c false the kernels compute c = a @ b without reading c: the accumulators start at
// +0, the bits of accumulating into a zero fill (a pending tile.full(0), kernel_pending_zero.cpp).
// Column panels are outermost so a k x 32 (x 16) panel of b stays in L1 while every row block
// of a streams past it; the AVX2 kernel reads it from a packed copy (matmul_kernel_avx2), the
// AVX-512 one when b's row stride is a multiple of 1 KB. A ragged last
// panel masks its columns (the AVX-512 kernel does a tail of 16 columns or fewer in ymm
// registers, or with the full panel before it when it is 8 columns or fewer); the 1-3 rows
// left over (all of a gemv) go one row at a time with eight accumulators across 128 (64)
// columns. So a 100 x 100 x 100 product runs vectorised to its last row and column: 19.4 us
// against 39 us with the scalar edge loops used before (AVX-512 machine); multiples of the block run at the FMA peak, as fast as OpenBLAS and BLIS
// (docs/kernels.md).
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace pypto_kernel {

// ---- AVX2: MR rows x NV * 8 columns; a ragged block masks its columns ----------------------

template <bool kMasked>
__attribute__((target("avx2,fma"))) inline __m256 load8(const float* p, __m256i mask) {
  if constexpr (kMasked) return _mm256_maskload_ps(p, mask);
  else return _mm256_loadu_ps(p);
}

// With kPackB the block also stores the k x NV * 8 panel of b it reads to `packed` (row stride
// 16, 64-byte aligned; masked-off lanes as +0), for the row blocks after it. kLdb > 0: b's row
// stride is that constant (a packed panel), not ldb.
template <int MR, int NV, bool kMasked, bool kPackB = false, int kLdb = 0>
__attribute__((target("avx2,fma"))) inline void matmul_block_avx2(float* __restrict c, int64_t ldc,
                                                                  const float* __restrict a, int64_t lda,
                                                                  const float* __restrict b, int64_t ldb, int64_t k,
                                                                  __m256i m0, __m256i m1, bool load_c,
                                                                  float* __restrict packed = nullptr) {
  __m256 acc[MR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v)
      acc[r][v] = load_c ? load8<kMasked>(c + r * ldc + 8 * v, (v == 0 ? m0 : m1)) : _mm256_setzero_ps();
  for (int64_t p = 0; p < k; ++p) {
    const float* bp = b + p * (kLdb > 0 ? kLdb : ldb);
    __m256 bv[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
      bv[v] = load8<kMasked>(bp + 8 * v, (v == 0 ? m0 : m1));
      if constexpr (kPackB) _mm256_store_ps(packed + p * 16 + 8 * v, bv[v]);
    }
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m256 av = _mm256_broadcast_ss(a + r * lda + p);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm256_fmadd_ps(av, bv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
      if constexpr (kMasked) _mm256_maskstore_ps(c + r * ldc + 8 * v, (v == 0 ? m0 : m1), acc[r][v]);
      else _mm256_storeu_ps(c + r * ldc + 8 * v, acc[r][v]);
    }
}

// The first min(cols, 8) lanes of a VMASKMOVPS mask.
__attribute__((target("avx2,fma"))) inline __m256i lanes8(int64_t cols) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(8, cols)))), lane);
}

// MR rows x `cols` <= 16 columns. Full blocks load and store unmasked (VMASKMOVPS stores are
// slow on some cores); a block of at most 8 columns uses one register per row.
// kPack: 0 reads b in place; 1 also packs the panel it reads into `packed` (matmul_block_avx2:
// 16 floats a row whatever `cols` is, the lanes from `cols` on +0); 2 reads such a packed panel
// (b = packed, row stride 16). Distinct instantiations per mode keep the in-place path's call
// sites as they were, so a kernel with constant shapes still gets it specialised (GCC's
// constant propagation: one shared instantiation lost it and ran the GEMM example 4-8 % slower).
template <int MR, int kPack = 0>
__attribute__((target("avx2,fma"))) inline void matmul_narrow_avx2(float* c, int64_t ldc, const float* a, int64_t lda,
                                                                   const float* b, int64_t ldb, int64_t k,
                                                                   int64_t cols, bool load_c, float* packed = nullptr) {
  const __m256i m0 = lanes8(cols), m1 = lanes8(cols - 8);
  constexpr bool kStore = kPack == 1;
  constexpr int kLdb = kPack == 2 ? 16 : 0;
  if (cols == 16) matmul_block_avx2<MR, 2, false, kStore, kLdb>(c, ldc, a, lda, b, ldb, k, m0, m1, load_c, packed);
  else if (cols > 8) matmul_block_avx2<MR, 2, true, kStore, kLdb>(c, ldc, a, lda, b, ldb, k, m0, m1, load_c, packed);
  else if (cols == 8) matmul_block_avx2<MR, 1, false, kStore, kLdb>(c, ldc, a, lda, b, ldb, k, m0, m1, load_c, packed);
  else matmul_block_avx2<MR, 1, true, kStore, kLdb>(c, ldc, a, lda, b, ldb, k, m0, m1, load_c, packed);
}

// Rows [0, m6) (a multiple of 6) in 6-row blocks, then rows [m6, m4) (none or 4) in one 4-row
// block, x `cols` <= 16 columns.
__attribute__((target("avx2,fma"))) inline void matmul_panel16_avx2(float* c, int64_t ldc, const float* a, int64_t lda,
                                                                    const float* b, int64_t ldb, int64_t m6, int64_t m4,
                                                                    int64_t k, int64_t cols, bool load_c) {
  for (int64_t i = 0; i < m6; i += 6) matmul_narrow_avx2<6>(c + i * ldc, ldc, a + i * lda, lda, b, ldb, k, cols, load_c);
  if (m4 > m6) matmul_narrow_avx2<4>(c + m6 * ldc, ldc, a + m6 * lda, lda, b, ldb, k, cols, load_c);
}

// A panel of b packed for the AVX2 kernel: at most kPackRowsAvx2 rows of 16 columns (16 KB,
// half of a 32 KB L1), row stride 16, 64-byte aligned, one buffer per thread (kernels run on
// several workers at once) that lives as long as the thread.
inline constexpr int64_t kPackRowsAvx2 = 256;
inline float* packed_panel_avx2() {
  thread_local float raw[kPackRowsAvx2 * 16 + 16];
  return reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(raw) + 63) & ~static_cast<uintptr_t>(63));
}

// Whether a k x 16 panel of b read in place (row stride ldb floats) may not stay in a 32 KB
// 8-way L1 (64 sets of 64-byte lines) while the row blocks pass. A row of it takes one line
// when 64-byte aligned, else two (in consecutive sets); a stride that is a multiple of 64 bytes
// puts the rows' first lines in only 64 / gcd(stride / 64, 64) sets. An aligned panel is worth
// packing when it needs more lines than those sets hold (the GEMM example's 64 x 64 x 128 steps,
// 64 rows in 8 sets of 8 ways, ran 3-7 % slower packed); a misaligned one when it needs more
// than half of them, since the copy also ends its loads that straddle two lines (the same steps
// with b 16 bytes off alignment: 3-7 % faster). Otherwise the copy only costs.
inline bool panel_spills_l1(const float* b, int64_t ldb, int64_t k) {
  const int64_t stride = ldb * static_cast<int64_t>(sizeof(float));
  const bool aligned = stride % 64 == 0 && reinterpret_cast<uintptr_t>(b) % 64 == 0;
  int64_t sets = 64;
  if (stride % 64 == 0) {
    int64_t g = 64, s = (stride / 64) % 64;   // gcd(stride / 64, 64); s = 0: one set
    while (s != 0) {
      const int64_t t = g % s;
      g = s;
      s = t;
    }
    sets = std::min<int64_t>(64, (64 / g) * (aligned ? 1 : 2));
  }
  return aligned ? k > sets * 8 : 2 * k > sets * 8 / 2;
}

/// c[m, n] (row stride ldc) += a[m, k] (lda) @ b[k, n] (ldb), AVX2 + FMA; c = a @ b when
/// !load_c (c is not read: its accumulators start at +0, the bits of adding into a zero fill).
__attribute__((target("avx2,fma"))) inline void matmul_kernel_avx2(float* c, int64_t ldc, const float* a, int64_t lda,
                                                                   const float* b, int64_t ldb, int64_t m, int64_t k,
                                                                   int64_t n, bool load_c = true) {
  // Rows 6 at a time (twelve ymm accumulators, two registers of b and one broadcast of a: 15 of
  // the 16 ymm registers; 2 FMA ports x 4 cycles of latency want at least eight chains, which
  // a 4 x 16 block has with none to spare), then one 4-row block if 4 or 5 are left.
  const int64_t m6 = m - m % 6, m4 = m6 + (m % 6 >= 4 ? 4 : 0);
  // Each k x 16 panel of b is read once per row block. In place, a row of it that is not
  // 64-byte aligned (NumPy aligns arrays to 16 bytes) spans two cache lines, and a row stride of
  // 512 B or 1 KB puts all its rows in 8 or 4 of L1's 64 sets. So with two or more row blocks
  // to share it, the first block stores the panel it reads into a per-thread buffer (packed,
  // aligned, row stride 16) and the others read that copy: no extra pass over b. At most
  // kPackRowsAvx2 rows of k go at a time; a longer k goes in chunks, each adding into c what the
  // chunks before it left there, so every element still gets its FMAs in k order (same bits).
  // Zen 3, C++ loop, median of 15 interleaved rounds' ratios to reading b in place, b 16 bytes
  // off alignment: 256^3 0.83, 128^3 0.93, the GEMM example's task (64 x 192 x 128 in three k
  // steps, ld 192 / 128) 0.92; b aligned: 256^3 0.89, the rest 0.98-1.02 (control +-3 %).
  // Packed only where panel_spills_l1 says so (docs/kernels.md, performance notes).
  if (m4 >= 12 && k > 0 && panel_spills_l1(b, ldb, k)) {
    float* const packed = packed_panel_avx2();
    const int64_t chunks = (k + kPackRowsAvx2 - 1) / kPackRowsAvx2, kc = (k + chunks - 1) / chunks;
    for (int64_t p0 = 0; p0 < k; p0 += kc) {
      const int64_t rows = std::min<int64_t>(kc, k - p0);
      for (int64_t j = 0; j < n; j += 16) {
        const int64_t cols = std::min<int64_t>(16, n - j);
        const bool lc = load_c || p0 > 0;
        // The first row block reads the panel in place and packs it as it goes; the others read the copy.
        matmul_narrow_avx2<6, 1>(c + j, ldc, a + p0, lda, b + p0 * ldb + j, ldb, rows, cols, lc, packed);
        for (int64_t i = 6; i < m6; i += 6)
          matmul_narrow_avx2<6, 2>(c + i * ldc + j, ldc, a + i * lda + p0, lda, packed, 16, rows, cols, lc);
        if (m4 > m6) matmul_narrow_avx2<4, 2>(c + m6 * ldc + j, ldc, a + m6 * lda + p0, lda, packed, 16, rows, cols, lc);
      }
    }
  } else {
    for (int64_t j = 0; j < n; j += 16)
      matmul_panel16_avx2(c + j, ldc, a, lda, b + j, ldb, m6, m4, k, std::min<int64_t>(16, n - j), load_c);
  }
  // The 1-3 rows left (all of a gemv): one row at a time, 64 columns (eight accumulators, as
  // many FMA chains as a 4 x 16 block) per pass, the rest 16 columns at a time.
  const __m256i all = _mm256_set1_epi32(-1);
  for (int64_t i = m4; i < m; ++i) {
    float* ci = c + i * ldc;
    const float* ai = a + i * lda;
    int64_t j = 0;
    for (; j + 64 <= n; j += 64) matmul_block_avx2<1, 8, false>(ci + j, ldc, ai, lda, b + j, ldb, k, all, all, load_c);
    for (; j < n; j += 16) matmul_narrow_avx2<1>(ci + j, ldc, ai, lda, b + j, ldb, k, std::min<int64_t>(16, n - j), load_c);
  }
}

// ---- AVX-512: MR rows x NV * 16 columns; a ragged block masks its last register ------------

template <bool kMasked>
__attribute__((target("avx512f,fma"))) inline __m512 load16(const float* p, __mmask16 mask) {
  if constexpr (kMasked) return _mm512_maskz_loadu_ps(mask, p);
  else return _mm512_loadu_ps(p);
}

template <int MR, int NV, bool kMaskLast>
__attribute__((target("avx512f,fma"))) inline void matmul_block_avx512(float* __restrict c, int64_t ldc,
                                                                       const float* __restrict a, int64_t lda,
                                                                       const float* __restrict b, int64_t ldb,
                                                                       int64_t k, __mmask16 last, bool load_c) {
  __m512 acc[MR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v)
      acc[r][v] = !load_c ? _mm512_setzero_ps()
                  : v == NV - 1 ? load16<kMaskLast>(c + r * ldc + 16 * v, last) : load16<false>(c + r * ldc + 16 * v, last);
  for (int64_t p = 0; p < k; ++p) {
    const float* bp = b + p * ldb;
    __m512 bv[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) bv[v] = v == NV - 1 ? load16<kMaskLast>(bp + 16 * v, last) : load16<false>(bp + 16 * v, last);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m512 av = _mm512_set1_ps(a[r * lda + p]);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_fmadd_ps(av, bv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
      if (kMaskLast && v == NV - 1) _mm512_mask_storeu_ps(c + r * ldc + 16 * v, last, acc[r][v]);
      else _mm512_storeu_ps(c + r * ldc + 16 * v, acc[r][v]);
    }
}

// MR rows x `cols` <= 32 columns: 17-32 columns in two zmm registers per row (the second
// masked unless full); at most 16 columns in ymm registers (the AVX2 block: half the FMA cost
// of a zmm register for a tail of 8 columns or fewer, on cores that split zmm FMAs).
template <int MR>
__attribute__((target("avx512f,fma"))) inline void matmul_narrow_avx512(float* c, int64_t ldc, const float* a,
                                                                        int64_t lda, const float* b, int64_t ldb,
                                                                        int64_t k, int64_t cols, bool load_c) {
  if (cols == 32) matmul_block_avx512<MR, 2, false>(c, ldc, a, lda, b, ldb, k, 0, load_c);
  else if (cols > 16)
    matmul_block_avx512<MR, 2, true>(c, ldc, a, lda, b, ldb, k, static_cast<__mmask16>((1u << (cols - 16)) - 1u), load_c);
  else matmul_narrow_avx2<MR>(c, ldc, a, lda, b, ldb, k, cols, load_c);
}

// MR rows x (32 + `tail` <= 8) columns: two zmm and one masked ymm register per row. A tail
// that narrow alone would be bound by its broadcasts of a (one per row per k step for a single
// ymm FMA); sharing them with the 32 columns before it makes it cost half a zmm FMA per row.
template <int MR>
__attribute__((target("avx512f,fma"))) inline void matmul_block40_avx512(float* __restrict c, int64_t ldc,
                                                                         const float* __restrict a, int64_t lda,
                                                                         const float* __restrict b, int64_t ldb,
                                                                         int64_t k, __m256i tail, bool load_c) {
  __m512 acc[MR][2];
  __m256 acct[MR];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    acc[r][0] = load_c ? _mm512_loadu_ps(c + r * ldc) : _mm512_setzero_ps();
    acc[r][1] = load_c ? _mm512_loadu_ps(c + r * ldc + 16) : _mm512_setzero_ps();
    acct[r] = load_c ? _mm256_maskload_ps(c + r * ldc + 32, tail) : _mm256_setzero_ps();
  }
  for (int64_t p = 0; p < k; ++p) {
    const float* bp = b + p * ldb;
    const __m512 b0 = _mm512_loadu_ps(bp), b1 = _mm512_loadu_ps(bp + 16);
    const __m256 bt = _mm256_maskload_ps(bp + 32, tail);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const float ar = a[r * lda + p];
      const __m512 av = _mm512_set1_ps(ar);
      acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
      // (not _mm512_castps512_ps256(av): GCC 12 builds it on an `_mm512_undefined_pd()` that
      // -Wall reports as uninitialized, unsilenceable in the precompiled prelude; the same
      // broadcast register either way)
      acct[r] = _mm256_fmadd_ps(_mm256_set1_ps(ar), bt, acct[r]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    _mm512_storeu_ps(c + r * ldc, acc[r][0]);
    _mm512_storeu_ps(c + r * ldc + 16, acc[r][1]);
    _mm256_maskstore_ps(c + r * ldc + 32, tail, acct[r]);
  }
}

/// c[m, n] (row stride ldc) += a[m, k] (lda) @ b[k, n] (ldb), AVX-512F + FMA; c = a @ b when
/// !load_c (as matmul_kernel_avx2).
__attribute__((target("avx512f,fma"))) inline void matmul_kernel_avx512(float* c, int64_t ldc, const float* a,
                                                                        int64_t lda, const float* b, int64_t ldb,
                                                                        int64_t m, int64_t k, int64_t n,
                                                                        bool load_c = true) {
  // Column panels outermost: a k x 32 panel of b stays in L1 while the row blocks pass. Rows
  // go 6 at a time (twelve zmm accumulators: 2 FMA ports x 4 cycles of latency need at least
  // eight chains, and 6 x 32 ran the 64 x 64 x 128 tiles of the GEMM example at 62.7 GFMA/s
  // against 54.6 with 4 x 32 blocks), then one 4-row block if 4 or 5 are left. A multiple of 8
  // rows goes 8 at a time instead (sixteen accumulators, 28 of the 32 zmm registers with a
  // tail block40): no 4-row block, and the loads of c and the loop's start and exit spread over
  // a third more FMAs, which counts for the short k of tiles (best of 7 interleaved runs,
  // 6 x 32 -> 8 x 32: 64 x 64 x 128 8.60 -> 8.41 us, 64^3 4.16 -> 4.04, 128^3 34.8 -> 32.9,
  // 256^3 268 -> 265).
  const bool by8 = m >= 8 && m % 8 == 0;
  const int64_t m6 = by8 ? 0 : m - m % 6, m4 = by8 ? m : m6 + (m % 6 >= 4 ? 4 : 0);
  // A tail of 1-8 columns after a full panel joins it (matmul_block40_avx512).
  const int64_t tail = n > 32 && n % 32 <= 8 ? n % 32 : 0;
  const int64_t n_panels = n - (tail ? 32 + tail : 0);
  // A row stride of b that is a multiple of 1 KB puts every row of a panel in the same few L1
  // sets (a 48 KB 12-way L1 then holds 6 KB of it): such a panel is copied into a packed buffer
  // (row stride 32) once and read by all the row blocks. 256^3: 360 -> 268 us; the copy costs
  // k x 128 bytes per panel, so only for k > 64 and at least 24 rows (four blocks) to share it.
  // The buffer stays with the thread (k x 128 bytes at most).
  const bool pack = m4 >= 24 && k > 64 && (ldb * 4) % 1024 == 0;
  thread_local std::vector<float> packed;
  if (pack && static_cast<int64_t>(packed.size()) < k * 32) packed.resize(static_cast<size_t>(k * 32));
  for (int64_t j = 0; j < n_panels; j += 32) {
    const int64_t cols = std::min<int64_t>(32, n_panels - j);
    const float* bj = b + j;
    int64_t ldbj = ldb;
    if (pack && cols == 32) {
      for (int64_t p = 0; p < k; ++p) std::memcpy(packed.data() + p * 32, b + p * ldb + j, 32 * sizeof(float));
      bj = packed.data();
      ldbj = 32;
    }
    if (by8) {   // 8-row blocks over 17-32 columns; a panel of 16 or fewer in 4-row ymm blocks
      const __mmask16 last = static_cast<__mmask16>(cols >= 32 ? 0xFFFFu : (1u << (cols > 16 ? cols - 16 : 0)) - 1u);
      for (int64_t i = 0; i < m; i += 8) {
        float* ci = c + i * ldc + j;
        const float* ai = a + i * lda;
        if (cols == 32) matmul_block_avx512<8, 2, false>(ci, ldc, ai, lda, bj, ldbj, k, last, load_c);
        else if (cols > 16) matmul_block_avx512<8, 2, true>(ci, ldc, ai, lda, bj, ldbj, k, last, load_c);
        else {
          matmul_narrow_avx512<4>(ci, ldc, ai, lda, bj, ldbj, k, cols, load_c);
          matmul_narrow_avx512<4>(ci + 4 * ldc, ldc, ai + 4 * lda, lda, bj, ldbj, k, cols, load_c);
        }
      }
      continue;
    }
    for (int64_t i = 0; i < m6; i += 6)
      matmul_narrow_avx512<6>(c + i * ldc + j, ldc, a + i * lda, lda, bj, ldbj, k, cols, load_c);
    if (m4 > m6) matmul_narrow_avx512<4>(c + m6 * ldc + j, ldc, a + m6 * lda, lda, bj, ldbj, k, cols, load_c);
  }
  if (tail) {
    const __m256i mask = lanes8(tail);
    for (int64_t i = 0; by8 && i < m; i += 8)
      matmul_block40_avx512<8>(c + i * ldc + n_panels, ldc, a + i * lda, lda, b + n_panels, ldb, k, mask, load_c);
    for (int64_t i = 0; i < m6; i += 6)
      matmul_block40_avx512<6>(c + i * ldc + n_panels, ldc, a + i * lda, lda, b + n_panels, ldb, k, mask, load_c);
    if (!by8 && m4 > m6)
      matmul_block40_avx512<4>(c + m6 * ldc + n_panels, ldc, a + m6 * lda, lda, b + n_panels, ldb, k, mask, load_c);
  }
  // The 1-3 rows left (all of a gemv): one row at a time, 128 columns (eight accumulators, as
  // many FMA chains as a 4 x 32 block) per pass, the rest 32 columns at a time.
  for (int64_t i = m4; i < m; ++i) {
    float* ci = c + i * ldc;
    const float* ai = a + i * lda;
    int64_t j = 0;
    for (; j + 128 <= n; j += 128) matmul_block_avx512<1, 8, false>(ci + j, ldc, ai, lda, b + j, ldb, k, 0, load_c);
    for (; j < n; j += 32)
      matmul_narrow_avx512<1>(ci + j, ldc, ai, lda, b + j, ldb, k, std::min<int64_t>(32, n - j), load_c);
  }
}

inline bool cpu_has_avx512f_fma() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
  return has;
}
inline bool cpu_has_avx2_fma() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}

/// The fastest FP32 kernel this CPU runs: c (ldc) += a (lda) @ b (ldb), or c = a @ b without
/// reading c when !load_c; false (nothing done) when it has neither AVX-512F nor AVX2 with FMA.
inline bool matmul_f32_simd(float* c, int64_t ldc, const float* a, int64_t lda, const float* b, int64_t ldb, int64_t m,
                            int64_t k, int64_t n, bool load_c = true) {
  if (cpu_has_avx512f_fma()) {
    matmul_kernel_avx512(c, ldc, a, lda, b, ldb, m, k, n, load_c);
    return true;
  }
  if (cpu_has_avx2_fma()) {
    matmul_kernel_avx2(c, ldc, a, lda, b, ldb, m, k, n, load_c);
    return true;
  }
  return false;
}

}  // namespace pypto_kernel

#define PYPTO_HAVE_MATMUL_SIMD 1
#endif
