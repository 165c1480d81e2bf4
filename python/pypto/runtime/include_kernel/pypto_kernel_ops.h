// pypto_kernel_ops.h — the reference tile ops beyond the core set (docs/kernels.md,
// spec/reference_ops.md): broadcasting element-wise ops, bitwise / shift / floor-mod functors,
// packed compare masks and select, column reductions and broadcasts, shape ops, gather /
// scatter, and the matmul family. Included by pypto_kernel_prelude.h; same conventions
// (tiles are row-major arrays of their compute type, 16-bit floats rounded after each op).
//
//     pypto_kernel::binary_bcast<Storage::F32>(dst, a, 16, 32, b, 1, 32, 16, 32, pypto_kernel::Add{});
//     pypto_kernel::cmp_mask(mask, a, 16, 32, b, 16, 32, 16, 32, 32, /*LT*/ 2);
#pragma once

#include <initializer_list>
#include <limits>
#include <type_traits>
#include <vector>

namespace pypto_kernel {

// ---------------------------------------------------------------------------------------------
// Functors of the reference element-wise ops.

// Floor-mod (the sign of the divisor): Python's a % b; b = 0 gives NaN (floats) or 0 (ints).
struct Rem { template <class T> T operator()(T a, T b) const { return pymod(a, b); } };
struct And { template <class T> T operator()(T a, T b) const { return static_cast<T>(a & b); } };
struct Or { template <class T> T operator()(T a, T b) const { return static_cast<T>(a | b); } };
struct Xor { template <class T> T operator()(T a, T b) const { return static_cast<T>(a ^ b); } };
// Shifts: a count >= the bit width gives 0 (-1 for a negative signed value under >>), a negative
// count shifts by 0.
// Shift counts of another integer dtype (tile.shl / tile.shr of two tiles: the result has the
// shifted tile's dtype T) as T, clamped: a negative count stays negative (or 0 for an unsigned T:
// both leave the value as it is) and a count past T's range stays past T's width, so the shift
// gives what it would with the original count.
template <class T, class V>
inline void shift_counts_as(T* dst, const V* src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const V v = src[i];
    if constexpr (std::is_signed<V>::value) {
      if (v < V{0}) {
        dst[i] = std::is_signed<T>::value ? static_cast<T>(-1) : T{0};
        continue;
      }
    }
    const bool past = static_cast<uint64_t>(v) > static_cast<uint64_t>(std::numeric_limits<T>::max());
    dst[i] = past ? std::numeric_limits<T>::max() : static_cast<T>(v);
  }
}

struct Shl {
  template <class T> T operator()(T a, T c) const {
    using U = typename std::make_unsigned<T>::type;
    if (c < T{0}) return a;
    if (static_cast<uint64_t>(c) >= sizeof(T) * 8) return T{0};
    return static_cast<T>(static_cast<U>(static_cast<U>(a) << static_cast<int>(c)));
  }
};
struct Shr {
  template <class T> T operator()(T a, T c) const {
    if (c < T{0}) return a;
    if (static_cast<uint64_t>(c) >= sizeof(T) * 8) return (std::is_signed<T>::value && a < T{0}) ? static_cast<T>(-1) : T{0};
    return static_cast<T>(a >> static_cast<int>(c));
  }
};
// Leaky / parametric relu: x > 0 ? x : x * slope.
struct LRelu { template <class T> T operator()(T a, T s) const { return a > T{0} ? a : static_cast<T>(a * s); } };
// The broadcast operand itself (row_expand / col_expand without an op).
struct Second { template <class T> T operator()(T, T b) const { return b; } };
// exp(a - b), the softmax numerator step, computed in float.
struct ExpDif {
  template <class T> T operator()(T a, T b) const {
    return static_cast<T>(fast_exp(static_cast<float>(a) - static_cast<float>(b)));
  }
};
// sels: the whole of the first operand when `first`, else the second.
struct Pick {
  bool first;
  template <class T> T operator()(T a, T b) const { return first ? a : b; }
};
struct Sin { float operator()(float a) const { return std::sin(a); } };
struct Cos { float operator()(float a) const { return std::cos(a); } };
struct Not { template <class T> T operator()(T a) const { return static_cast<T>(~a); } };

// A private copy of `src` when the destination buffer is the same memory (ops whose output
// element reads other input positions must not overwrite their input as they go). `dst` is
// only compared, never read; it is not a pointer to const because GCC takes a const pointer
// argument for a read, and warns (-Wmaybe-uninitialized, an error under -Werror) when the
// destination is a fresh, not yet written tile buffer.
template <class C>
struct Unaliased {
  std::unique_ptr<C[]> copy;   // not a std::vector: vector<bool> has no data() (a BOOL tile)
  const C* p;
  Unaliased(const C* src, void* dst, int64_t n) : p(src) {
    if (static_cast<const void*>(src) == dst && n > 0) {
      copy.reset(new C[static_cast<size_t>(n)]);
      std::copy(src, src + n, copy.get());
      p = copy.get();
    }
  }
};

// ---------------------------------------------------------------------------------------------
// Broadcasting element-wise ops over 2-D views: operand x is [xr, xc] with xr in {1, m} and xc
// in {1, n}; dst is [m, n]. Equal shapes take the flat (vectorised) path.

template <Storage S, class C, class Op>
inline void binary_bcast(C* dst, const C* a, int64_t ar, int64_t ac, const C* b, int64_t br, int64_t bc, int64_t m,
                         int64_t n, Op op) {
  if (ar == m && ac == n && br == m && bc == n) {
    binary<S>(dst, a, b, m * n, op);
    return;
  }
  Unaliased<C> ua(a, dst, ar * ac), ub(b, dst, br * bc);
  for (int64_t i = 0; i < m; ++i) {
    const C* ra = ua.p + (ar == 1 ? 0 : i * ac);
    const C* rb = ub.p + (br == 1 ? 0 : i * bc);
    C* out = dst + i * n;
    if (ac == n && bc == n) {
      for (int64_t j = 0; j < n; ++j) out[j] = op(ra[j], rb[j]);
    } else if (bc == 1 && ac == n) {
      const C s = rb[0];
      for (int64_t j = 0; j < n; ++j) out[j] = op(ra[j], s);
    } else if (ac == 1 && bc == n) {
      const C s = ra[0];
      for (int64_t j = 0; j < n; ++j) out[j] = op(s, rb[j]);
    } else {
      for (int64_t j = 0; j < n; ++j) out[j] = op(ra[ac == 1 ? 0 : j], rb[bc == 1 ? 0 : j]);
    }
  }
  round_to<S>(dst, m * n);
}

// dst = op1(op1(a, s), c) for addsc / subsc (s a scalar, c a broadcast tile).
template <Storage S, class C, class Op>
inline void binary_scalar_tile(C* dst, const C* a, int64_t ar, int64_t ac, C s, const C* c, int64_t cr, int64_t cc,
                               int64_t m, int64_t n, Op op) {
  Unaliased<C> uc(c, dst, cr * cc);
  std::vector<C> t(static_cast<size_t>(ar * ac));
  binary_scalar<S>(t.data(), a, s, ar * ac, op);
  binary_bcast<S>(dst, t.data(), ar, ac, uc.p, cr, cc, m, n, op);
}

// ---------------------------------------------------------------------------------------------
// Compare into a packed predicate mask and select with one. Mask row i holds the predicates of
// row i: element j is bit j % 8 (least significant first) of byte j / 8; unused bits are 0;
// a mask row is `mcols` bytes. Modes: EQ=0 NE=1 LT=2 LE=3 GT=4 GE=5.

template <class C>
inline bool cmp_pred(C a, C b, int mode) {
  switch (mode) {
    case 0: return a == b;
    case 1: return a != b;
    case 2: return a < b;
    case 3: return a <= b;
    case 4: return a > b;
    default: return a >= b;
  }
}

template <class C>
inline void cmp_mask(uint8_t* dst, const C* a, int64_t ar, int64_t ac, const C* b, int64_t br, int64_t bc, int64_t m,
                     int64_t n, int64_t mcols, int mode) {
  std::vector<uint8_t> out(static_cast<size_t>(m * mcols), 0);  // dst may alias a UINT8 operand
  for (int64_t i = 0; i < m; ++i) {
    const C* ra = a + (ar == 1 ? 0 : i * ac);
    const C* rb = b + (br == 1 ? 0 : i * bc);
    uint8_t* row = out.data() + i * mcols;
    for (int64_t j = 0; j < n; ++j) {
      if (cmp_pred(ra[ac == 1 ? 0 : j], rb[bc == 1 ? 0 : j], mode)) row[j >> 3] |= static_cast<uint8_t>(1u << (j & 7));
    }
  }
  if (m * mcols > 0) std::memcpy(dst, out.data(), static_cast<size_t>(m * mcols));
}

template <Storage S, class C>
inline void select_mask(C* dst, const uint8_t* mask, int64_t mcols, const C* a, int64_t ar, int64_t ac, const C* b,
                        int64_t br, int64_t bc, int64_t m, int64_t n) {
  Unaliased<C> ua(a, dst, ar * ac), ub(b, dst, br * bc);
  for (int64_t i = 0; i < m; ++i) {
    const C* ra = ua.p + (ar == 1 ? 0 : i * ac);
    const C* rb = ub.p + (br == 1 ? 0 : i * bc);
    const uint8_t* mrow = mask + i * mcols;
    for (int64_t j = 0; j < n; ++j) {
      const bool bit = (mrow[j >> 3] >> (j & 7)) & 1u;
      dst[i * n + j] = bit ? ra[ac == 1 ? 0 : j] : rb[bc == 1 ? 0 : j];
    }
  }
  round_to<S>(dst, m * n);
}

// ---------------------------------------------------------------------------------------------
// Reductions with an identity for empty rows / columns, and column broadcasts.

// [m, n] -> [1, n], accumulating rows in order in the compute type.
template <Storage S, class C, class Op>
inline void col_reduce(C* dst, const C* a, int64_t m, int64_t n, Op op) {
  if (m == 0) {
    for (int64_t j = 0; j < n; ++j) dst[j] = reduce_identity<C, Op>();
    return;
  }
  // Max / min re-sign a zero result (signed_zero_extreme), which needs row 0 as it was: the fold
  // overwrites it when dst is a.
  constexpr bool kExtreme = std::is_floating_point<C>::value && (std::is_same<Op, Max>::value || std::is_same<Op, Min>::value);
  std::vector<C> row0;
  if (kExtreme && dst == a) row0.assign(a, a + n);
  if (dst != a) std::memmove(dst, a, static_cast<size_t>(n) * sizeof(C));
  for (int64_t i = 1; i < m; ++i) {
    const C* row = a + i * n;
    for (int64_t j = 0; j < n; ++j) dst[j] = op(dst[j], row[j]);
  }
  if constexpr (kExtreme) {
    const C* first = dst == a ? row0.data() : a;
    for (int64_t j = 0; j < n; ++j)
      if (dst[j] == C(0)) dst[j] = signed_zero_extreme<Op>(signed_zero_extreme<Op>(dst[j], first + j, 1, 1), a + n + j, m - 1, n);
  }
  round_to<S>(dst, n);
}

// dst[i, j] = op(a[i, j], c[0, j]).
template <class C, class Op>
inline void col_expand_portable(C* dst, const C* a, const C* c, int64_t m, int64_t n, Op op) {
  for (int64_t i = 0; i < m; ++i) {
    const C* src = a + i * n;
    C* out = dst + i * n;
    for (int64_t j = 0; j < n; ++j) out[j] = op(src[j], c[j]);
  }
}

template <Storage S, class C, class Op>
inline void col_expand(C* dst, const C* a, const C* c, int64_t m, int64_t n, Op op) {
#ifdef PYPTO_HAVE_ROW_SIMD
  if constexpr (std::is_same<C, float>::value) {
    if (cpu_has_avx512f()) {
      col_expand_f32_avx512(dst, a, c, m, n, op);
      round_to<S>(dst, m * n);
      return;
    }
    if (cpu_has_avx2()) {
      col_expand_f32_avx2(dst, a, c, m, n, op);
      round_to<S>(dst, m * n);
      return;
    }
  }
#endif
  col_expand_portable(dst, a, c, m, n, op);
  round_to<S>(dst, m * n);
}

// ---------------------------------------------------------------------------------------------
// Shape ops.

template <class C>
inline void transpose(C* dst, const C* a, int64_t m, int64_t n) {
  Unaliased<C> ua(a, dst, m * n);
  constexpr int64_t B = 16;
  for (int64_t i0 = 0; i0 < m; i0 += B) {
    for (int64_t j0 = 0; j0 < n; j0 += B) {
      const int64_t i1 = std::min(m, i0 + B), j1 = std::min(n, j0 + B);
      for (int64_t i = i0; i < i1; ++i) {
        for (int64_t j = j0; j < j1; ++j) dst[j * m + i] = ua.p[i * n + j];
      }
    }
  }
}

// Copies the [h, w] block of src [sr, sc] at (r0, c0) into dst; false (with ctx->fail) when the
// block is not inside src. Overflow-proof: r0 <= sr - h, not r0 + h <= sr. `what` names the op
// and its source in DSL terms ("tile.slice of tile 'ta'", see gather's) so that
// pypto.runtime.dsl_terms locates the failure at the op's line.
template <class C>
inline bool extract_block(const PTO2KernelContext* ctx, C* dst, const C* src, int64_t sr, int64_t sc, int64_t r0,
                          int64_t c0, int64_t h, int64_t w, const char* what) {
  if (r0 < 0 || c0 < 0 || h > sr || w > sc || r0 > sr - h || c0 > sc - w) {
    fail_fmt(ctx, "%s: a [%lld, %lld] block at (%lld, %lld) is outside the [%lld, %lld] tile", what,
             static_cast<long long>(h), static_cast<long long>(w), static_cast<long long>(r0),
             static_cast<long long>(c0), static_cast<long long>(sr), static_cast<long long>(sc));
    return false;
  }
  Unaliased<C> us(src, dst, sr * sc);
  for (int64_t i = 0; i < h; ++i) std::memmove(dst + i * w, us.p + (r0 + i) * sc + c0, static_cast<size_t>(w) * sizeof(C));
  return true;
}

// dst = target with source [h, w] written at (r0, c0).
template <class C>
inline bool assemble(const PTO2KernelContext* ctx, C* dst, const C* target, int64_t tr, int64_t tc, const C* source,
                     int64_t h, int64_t w, int64_t r0, int64_t c0, const char* what) {
  if (r0 < 0 || c0 < 0 || h > tr || w > tc || r0 > tr - h || c0 > tc - w) {
    fail_fmt(ctx, "%s: a [%lld, %lld] source at (%lld, %lld) does not fit in the [%lld, %lld] target", what,
             static_cast<long long>(h), static_cast<long long>(w), static_cast<long long>(r0),
             static_cast<long long>(c0), static_cast<long long>(tr), static_cast<long long>(tc));
    return false;
  }
  Unaliased<C> us(source, dst, h * w);
  if (dst != target) std::memmove(dst, target, static_cast<size_t>(tr * tc) * sizeof(C));
  for (int64_t i = 0; i < h; ++i) std::memmove(dst + (r0 + i) * tc + c0, us.p + i * w, static_cast<size_t>(w) * sizeof(C));
  return true;
}

// [r, c0] | [r, c1] -> [r, c0 + c1].
template <class C>
inline void concat_cols(C* dst, const C* a, int64_t c0, const C* b, int64_t c1, int64_t r) {
  const int64_t n = c0 + c1;
  for (int64_t i = 0; i < r; ++i) {
    std::memcpy(dst + i * n, a + i * c0, static_cast<size_t>(c0) * sizeof(C));
    std::memcpy(dst + i * n + c0, b + i * c1, static_cast<size_t>(c1) * sizeof(C));
  }
}

// out[0, k] = start + k (start - k when descending), wrapping in the tile's integer type.
template <class C>
inline void arange(C* dst, int64_t start, int64_t n, bool descending) {
  for (int64_t k = 0; k < n; ++k) {
    const uint64_t v = descending ? static_cast<uint64_t>(start) - static_cast<uint64_t>(k)
                                  : static_cast<uint64_t>(start) + static_cast<uint64_t>(k);
    dst[k] = static_cast<C>(v);
  }
}

// ---------------------------------------------------------------------------------------------
// Gather / scatter. Indices are checked; an index outside the indexed tile fails the run.
// `what` names the op and its tiles in DSL terms, a literal of the generated call ("gather of tile
// 'ta' by indices 'ti'"), so that pypto.runtime.dsl_terms locates the failure at the op's DSL line;
// it is read on the failing path only (the loops' machine code is that of a message without it).

inline bool index_fail(const PTO2KernelContext* ctx, const char* what, const char* unit, int64_t idx, int64_t n) {
  fail_fmt(ctx, "%s: %s %lld is outside [0, %lld)", what, unit, static_cast<long long>(idx),
           static_cast<long long>(n));
  return false;
}

// dst[k] = src.flat[idx[k]] for k < n (the index row-major over src's src_n elements).
template <class C, class I>
inline bool gather(const PTO2KernelContext* ctx, C* dst, const C* src, int64_t src_n, const I* idx, int64_t n,
                   const char* what) {
  Unaliased<C> us(src, dst, src_n);
  for (int64_t k = 0; k < n; ++k) {
    const int64_t i = static_cast<int64_t>(idx[k]);
    if (i < 0 || i >= src_n) return index_fail(ctx, what, "flat index", i, src_n);
    dst[k] = us.p[i];
  }
  return true;
}

// out = dst with out.flat[idx[k]] = src[k] in order (last write wins).
template <class C, class I>
inline bool scatter(const PTO2KernelContext* ctx, C* out, const C* dst, int64_t dst_n, const C* src, const I* idx,
                    int64_t n, const char* what) {
  Unaliased<C> us(src, out, n);
  std::vector<I> ucopy;
  const I* ip = idx;
  if (static_cast<const void*>(idx) == static_cast<const void*>(out)) {
    ucopy.assign(idx, idx + n);
    ip = ucopy.data();
  }
  if (out != dst) std::memmove(out, dst, static_cast<size_t>(dst_n) * sizeof(C));
  for (int64_t k = 0; k < n; ++k) {
    const int64_t i = static_cast<int64_t>(ip[k]);
    if (i < 0 || i >= dst_n) return index_fail(ctx, what, "flat index", i, dst_n);
    out[i] = us.p[k];
  }
  return true;
}

// Mask patterns of gather_mask / scatter_mask: 1/2 even/odd columns, 3..6 c % 4 == 0..3, 7 all.
inline int64_t mask_stride(int pattern) { return pattern <= 2 ? 2 : pattern <= 6 ? 4 : 1; }
inline int64_t mask_first(int pattern) { return pattern <= 2 ? pattern - 1 : pattern <= 6 ? pattern - 3 : 0; }

// Reinterprets the stored bits of a value of storage SS as storage DS (same width).
template <Storage SS, Storage DS, class CS, class CD>
inline CD reinterpret_elem(CS v) {
  if constexpr (SS == DS) {
    return static_cast<CD>(v);
  } else {
    uint64_t bits = 0;
    write_elem<SS, CS>(&bits, 0, v);
    return read_elem<DS, CD>(&bits, 0);
  }
}

template <Storage SS, Storage DS, class CS, class CD>
inline void gather_mask(CD* dst, const CS* src, int64_t m, int64_t n, int pattern) {
  const int64_t stride = mask_stride(pattern), first = mask_first(pattern), w = n / stride;
  Unaliased<CS> us(src, dst, m * n);   // dst may be src (in place)
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t k = 0; k < w; ++k) dst[i * w + k] = reinterpret_elem<SS, DS, CS, CD>(us.p[i * n + first + k * stride]);
  }
}

template <class C>
inline void scatter_mask(C* out, const C* dst, const C* src, int64_t m, int64_t n, int pattern) {
  const int64_t stride = mask_stride(pattern), first = mask_first(pattern), w = n / stride;
  Unaliased<C> us(src, out, m * w);
  if (out != dst) std::memmove(out, dst, static_cast<size_t>(m * n) * sizeof(C));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t k = 0; k < w; ++k) out[i * n + first + k * stride] = us.p[i * w + k];
  }
}

// out = input [rows, d] with out[idx.flat[k], :] = src[k, :] for k < nidx (last write wins).
template <class C, class I>
inline bool scatter_update(const PTO2KernelContext* ctx, C* out, const C* input, int64_t rows, int64_t d,
                           const I* idx, int64_t nidx, const C* src, const char* what) {
  Unaliased<C> us(src, out, nidx * d);
  if (out != input) std::memmove(out, input, static_cast<size_t>(rows * d) * sizeof(C));
  for (int64_t k = 0; k < nidx; ++k) {
    const int64_t r = static_cast<int64_t>(idx[k]);
    if (r < 0 || r >= rows) return index_fail(ctx, what, "row", r, rows);
    std::memmove(out + r * d, us.p + k * d, static_cast<size_t>(d) * sizeof(C));
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Matmul family on top of matmul(): bias rows and batches.

// dst = a @ b + bias[0, :] on every row (accumulated in the compute type, then rounded).
template <Storage S, class C>
inline void matmul_bias(C* dst, const C* a, const C* b, const C* bias, int64_t m, int64_t k, int64_t n) {
  Unaliased<C> ua(a, dst, m * k), ub(b, dst, k * n), ubias(bias, dst, n);
  matmul<Storage::F32, C, C, C>(dst, nullptr, ua.p, ub.p, m, k, n);   // no rounding before the bias
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) dst[i * n + j] += ubias.p[j];
  }
  round_to<S>(dst, m * n);
}

// dst[p, q] = (acc[p, q] +) a[p * as0 + q * as1] @ b[p * bs0 + q * bs1] over batch dims [d0, d1]
// (matrix indices; a stride is 0 along a dim the operand broadcasts).
template <Storage S, class C, class A, class B>
inline void batch_matmul(C* dst, const C* acc, const A* a, int64_t as0, int64_t as1, const B* b, int64_t bs0,
                         int64_t bs1, int64_t d0, int64_t d1, int64_t m, int64_t k, int64_t n) {
  for (int64_t p = 0; p < d0; ++p) {
    for (int64_t q = 0; q < d1; ++q) {
      const int64_t r = p * d1 + q;
      matmul<S, C, A, B>(dst + r * m * n, acc ? acc + r * m * n : nullptr, a + (p * as0 + q * as1) * m * k,
                         b + (p * bs0 + q * bs1) * k * n, m, k, n);
    }
  }
}

}  // namespace pypto_kernel

namespace pypto_kernel {

// dst = op(op(a, b), c) with all three broadcast to [m, n] (addc / subc).
template <Storage S, class C, class Op>
inline void ternary_bcast(C* dst, const C* a, int64_t ar, int64_t ac, const C* b, int64_t br, int64_t bc, const C* c,
                          int64_t cr, int64_t cc, int64_t m, int64_t n, Op op) {
  Unaliased<C> uc(c, dst, cr * cc);
  binary_bcast<S>(dst, a, ar, ac, b, br, bc, m, n, op);
  binary_bcast<S>(dst, dst, m, n, uc.p, cr, cc, m, n, op);
}

}  // namespace pypto_kernel

namespace pypto_kernel {

// ---------------------------------------------------------------------------------------------
// tile.cast with a rounding mode (float -> integer): none/trunc toward zero, rint to nearest
// even, round to nearest away from zero, floor, ceil, odd to nearest with ties to the odd
// integer. Out-of-range values saturate, NaN gives 0. Other conversions ignore the mode.
//
//     pypto_kernel::cast_mode<Storage::I32>(dst, src, 512, /*round*/ 2);
inline double round_mode(double v, int mode) {
  switch (mode) {
    case 1: return std::nearbyint(v);   // the default FE_TONEAREST: ties to even
    case 2: return std::round(v);
    case 3: return std::floor(v);
    case 4: return std::ceil(v);
    case 6: {
      const double f = std::floor(v);
      if (v - f != 0.5) return std::round(v);
      return std::fmod(f, 2.0) != 0.0 ? f : f + 1.0;   // the odd neighbour
    }
    default: return std::trunc(v);      // 0 none, 5 trunc
  }
}

template <Storage S, class D, class Src>
inline void cast_mode(D* dst, const Src* src, int64_t n, int mode) {
  if constexpr (std::is_floating_point<Src>::value && std::is_integral<D>::value) {
    const double lo = static_cast<double>(std::numeric_limits<D>::lowest());
    const double hi = static_cast<double>(std::numeric_limits<D>::max());
    for (int64_t i = 0; i < n; ++i) {
      const double v = static_cast<double>(src[i]);
      if (v != v) {
        dst[i] = D{0};
        continue;
      }
      const double r = round_mode(v, mode);
      dst[i] = r <= lo ? std::numeric_limits<D>::lowest() : r >= hi ? std::numeric_limits<D>::max() : static_cast<D>(r);
    }
    round_to<S>(dst, n);
  } else {
    (void)mode;
    cast<S>(dst, src, n);
  }
}

// ---------------------------------------------------------------------------------------------
// tile.read / tile.write: one element at a run-time index. Every index is checked against its
// own axis (a flat-only check would let [0, 40] on a [16, 32] tile read element [1, 8]); one
// outside fails the run naming the DSL line, op, axis, index and extent (the read then gives 0,
// the write is dropped). The check runs once per access, never inside an element loop.
//
//     float v = pypto_kernel::tile_at(ctx, t, "k.py", 7, {i, j}, {16, 32});
//     if (!pypto_kernel::tile_set<Storage::F32>(ctx, t, "k.py", 8, {i, j}, {16, 32}, v)) return;

// Row-major flat index of `idx` in a tile (or tensor) of extents `dims` (equal lengths: the
// generated call passes one index per axis); -1 after ctx->fail when an index is outside its axis.
// Also the per-axis check of a kernel's tensor.write, before its one-element store.
inline int64_t element_flat_index(const PTO2KernelContext* ctx, const char* file, int line, const char* op,
                               std::initializer_list<int64_t> idx, std::initializer_list<int64_t> dims) {
  int64_t flat = 0;
  int axis = 0;
  const int64_t* d = dims.begin();
  for (const int64_t i : idx) {
    const int64_t n = d[axis];
    if (i < 0 || i >= n) {
      fail_fmt(ctx, "%s:%d: %s: index %lld of axis %d is outside [0, %lld)", file, line, op, static_cast<long long>(i),
               axis, static_cast<long long>(n));
      return -1;
    }
    flat = flat * n + i;
    ++axis;
  }
  return flat;
}

template <class C>
inline C tile_at(const PTO2KernelContext* ctx, const C* t, const char* file, int line,
                 std::initializer_list<int64_t> idx, std::initializer_list<int64_t> dims) {
  const int64_t flat = element_flat_index(ctx, file, line, "tile.read", idx, dims);
  return flat < 0 ? C{} : t[flat];
}

template <Storage S, class C, class V>
inline bool tile_set(const PTO2KernelContext* ctx, C* t, const char* file, int line,
                     std::initializer_list<int64_t> idx, std::initializer_list<int64_t> dims, V v) {
  const int64_t flat = element_flat_index(ctx, file, line, "tile.write", idx, dims);
  if (flat < 0) return false;
  t[flat] = static_cast<C>(v);
  round_to<S>(t + flat, 1);
  return true;
}

}  // namespace pypto_kernel

namespace pypto_kernel {

// ---------------------------------------------------------------------------------------------
// store(atomic=Add): adds the tile into the tensor box element by element with a compare-and-
// swap on the element's storage bits, so concurrent kernels adding into one tensor (split-K)
// never lose an update.
//
//     if (!pypto_kernel::store_add<Storage::F32>(ctx, t, ctx->tensors[2], DataType::FLOAT32, 2, off, shp, "c")) return;
template <Storage S, class C>
inline void atomic_add_elem(void* base, int64_t i, C v) {
  constexpr int kBytes = elem_bytes<S>();
  using U = typename std::conditional<kBytes == 4, uint32_t,
            typename std::conditional<kBytes == 2, uint16_t,
            typename std::conditional<kBytes == 8, uint64_t, uint8_t>::type>::type>::type;
  U* p = static_cast<U*>(base) + i;
  U old = __atomic_load_n(p, __ATOMIC_RELAXED);
  for (;;) {
    U next = old;
    write_elem<S, C>(&next, 0, static_cast<C>(read_elem<S, C>(&old, 0) + v));
    if (__atomic_compare_exchange_n(p, &old, next, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return;
  }
}

template <Storage S, class C>
inline bool store_add(const PTO2KernelContext* ctx, const C* tile, const Tensor& t, DataType want, int rank,
                      const int64_t* off, const int64_t* shp, const char* name, const int64_t* decl = nullptr) {
  if (!check_box(ctx, t, want, rank, off, shp, "store", name, decl)) return false;
  int64_t vis[PTO2_MAX_DIMS];
  if (!decl || !clip_box(t, rank, off, shp, vis)) std::copy(shp, shp + rank, vis);   // clipped: §18
  // (to the race checker an atomic add, which another atomic add does not conflict with)
  if (__builtin_expect(pto2_race_checking(), 0)) pto2_note_atomic_add(ctx, t, rank, off, vis);
  const int64_t last_stride = t.strides[rank - 1];
  for_each_visible_row(t, rank, off, vis, shp, [&](int64_t e, int64_t ti, int64_t n) {
    for (int64_t j = 0; j < n; ++j) atomic_add_elem<S, C>(t.data, e + j * last_stride, tile[ti + j]);
  });
  return true;
}

// mscatter's failure for an index outside the tensor, worded as check_box's ("mscatter of tensor
// 'o': ...") so that pypto.runtime.dsl_terms locates it at the pl.mscatter line. The tensor's name
// is a literal of the call: the kernel's machine code is that of index_fail but for the message.
inline bool mscatter_index_fail(const PTO2KernelContext* ctx, const char* name, int64_t idx, int64_t n) {
  fail_fmt(ctx, "mscatter of tensor '%s': index %lld is outside [0, %lld)", name, static_cast<long long>(idx),
           static_cast<long long>(n));
  return false;
}

// mscatter: out.flat[idx[k]] = src[k] for k in [0, n), flat row-major over the tensor's logical
// shape, in order (the last write wins). An index outside the tensor fails the run before any
// element is written (the indices are checked first: a failed mscatter leaves the tensor as it
// was, as a failed load / store does). With `decl`
// (the parameter's declared extents) indices are flat over the declared shape and an element
// outside a smaller run-time tensor is dropped (a clamped slice, spec anchor_features §18).
template <Storage S, class C, class I>
inline bool mscatter(const PTO2KernelContext* ctx, const C* src, const I* idx, int64_t n, const Tensor& t,
                     DataType want, const char* name, const int64_t* decl = nullptr, int decl_rank = 0) {
  const int rank = decl ? decl_rank : static_cast<int>(t.ndims);
  int64_t off[PTO2_MAX_DIMS] = {}, shp[PTO2_MAX_DIMS] = {}, vis[PTO2_MAX_DIMS] = {};
  int64_t total = 1;
  for (int a = 0; a < rank; ++a) {
    shp[a] = decl ? decl[a] : static_cast<int64_t>(t.shapes[a]);
    total *= shp[a];
  }
  if (!check_box(ctx, t, want, rank, off, shp, "mscatter", name, decl)) return false;
  const bool clipped = decl && clip_box(t, rank, off, shp, vis);
  for (int64_t k = 0; k < n; ++k) {
    const int64_t flat = static_cast<int64_t>(idx[k]);
    if (flat < 0 || flat >= total) return mscatter_index_fail(ctx, name, flat, total);
  }
  if (__builtin_expect(pto2_race_checking(), 0)) pto2_note_access(ctx, t, rank, off, clipped ? vis : shp, true);
  for (int64_t k = 0; k < n; ++k) {
    int64_t flat = static_cast<int64_t>(idx[k]);
    int64_t e = t.offset;
    bool inside = true;
    for (int a = rank - 1; a >= 0; --a) {
      const int64_t i = flat % shp[a];
      inside = inside && (!clipped || i < vis[a]);
      e += i * t.strides[a];
      flat /= shp[a];
    }
    if (inside) write_elem<S, C>(t.data, e, src[k]);
  }
  return true;
}

// gather_row: dst[do0 + i, do1 + j] = t[so0 + i, so1 + j] for the [r, c] block (transposed:
// dst[do0 + j, do1 + i]), written into dst in place; out (if another buffer) gets a copy.
// `decl` (nullptr: none) is the parameter's declared shape; the block is checked against it and
// clipped to a smaller run-time tensor.
template <Storage S, class C>
inline bool gather_row(const PTO2KernelContext* ctx, C* out, C* dst, int64_t dr, int64_t dc, const Tensor& t,
                       DataType want, int64_t do0, int64_t do1, int64_t so0, int64_t so1, int64_t r, int64_t c,
                       const int64_t* decl, bool transpose, const char* name) {
  const int64_t off[2] = {so0, so1}, shp[2] = {r, c};
  if (!check_box(ctx, t, want, 2, off, shp, "gather_row", name, decl)) return false;
  // With `decl` the block may overhang a smaller run-time tensor: those elements read 0 (§18).
  int64_t vis[2] = {r, c};
  if (decl) clip_box(t, 2, off, shp, vis);
  const int64_t pr = transpose ? c : r, pc = transpose ? r : c;
  if (do0 < 0 || do1 < 0 || pr > dr - do0 || pc > dc - do1) {
    fail_fmt(ctx, "gather_row of tensor '%s': a [%lld, %lld] block at (%lld, %lld) is outside the [%lld, %lld] tile",
             name, static_cast<long long>(pr), static_cast<long long>(pc), static_cast<long long>(do0),
             static_cast<long long>(do1), static_cast<long long>(dr), static_cast<long long>(dc));
    return false;
  }
  if (__builtin_expect(pto2_race_checking(), 0)) pto2_note_access(ctx, t, 2, off, vis, false);  // race checker
  for (int64_t i = 0; i < r; ++i) {
    for (int64_t j = 0; j < c; ++j) {
      const C v = i < vis[0] && j < vis[1]
                      ? read_elem<S, C>(t.data, t.offset + (so0 + i) * t.strides[0] + (so1 + j) * t.strides[1])
                      : C{};
      if (transpose) dst[(do0 + j) * dc + do1 + i] = v;
      else dst[(do0 + i) * dc + do1 + j] = v;
    }
  }
  copy(out, dst, dr * dc);
  return true;
}

}  // namespace pypto_kernel
