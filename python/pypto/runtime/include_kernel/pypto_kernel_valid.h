// pypto_kernel_valid.h — valid regions of tiles (spec anchor_features §10): a tile [R, C] whose
// type has a valid shape [vr, vc] is computed, reduced, multiplied and stored only over its box
// [0, vr) x [0, vc). Included by pypto_kernel_prelude.h; same conventions (row-major tiles of the
// compute type, 16-bit floats rounded after each op); it uses pypto_kernel_ops.h's atomic_add_elem.
//
//     int64_t x_valid[2] = {std::min<int64_t>(M - r, 32), 16};
//     if (!pypto_kernel::check_valid(ctx, x_valid, 2, x_dims, "x")) return;
//     if (!pypto_kernel::load_valid<Storage::F32>(ctx, x, ctx->tensors[0], DataType::FLOAT32, 2, off, shp,
//                                                  x_valid, "a")) return;
//     pypto_kernel::row_sum_valid<Storage::F32>(s, x, x_valid[0], x_valid[1], 32, 16);
//     if (!pypto_kernel::store_valid<Storage::F32>(ctx, s, ctx->tensors[1], DataType::FLOAT32, 2, off2, shp2,
//                                                   s_valid, "out")) return;
//
// Valid extents are run-time values: check_valid fails the kernel (ctx->fail) when one is
// negative or larger than the tile, so no helper here indexes outside a tile buffer; the loads
// and stores check and clip their box like load / store do, so none touches outside a tensor.
#pragma once


namespace pypto_kernel {

// `p` itself, through an empty asm that hides which array it points into. GCC 12 reports writes
// past a tile buffer on loop iterations that a run-time valid extent never runs
// (-Wstringop-overflow, a failed -Werror build: INT8 row reductions, an assembled FP16 column),
// even with the bound said again; a pragma does not survive the precompiled prelude. The valid
// helpers below bound their boxes by the tile (check_valid did already), then write through this.
template <class T>
inline T* unbounded_view(T* p) {
#if defined(__GNUC__)
  asm("" : "+r"(p));
#endif
  return p;
}

// The largest tile a kernel allocates (bytes): a run-time shape beyond it fails the kernel.
constexpr int64_t kMaxTileBytes = int64_t{1} << 32;

// The element count of a tile whose shape is known at run time: every extent >= 0 and the tile at
// most kMaxTileBytes, else ctx->fail naming the tile and -1 (so the allocation and every loop over
// the tile use a count that cannot have wrapped). elem_bytes is the dtype's (2 for FP16, though the
// CPU computes it in float), as VerifyKernelProgram counts a constant shape's.
inline int64_t tile_elements(const PTO2KernelContext* ctx, const int64_t* dims, int rank, int64_t elem_bytes,
                             const char* name) {
  int64_t n = 1;
  bool too_big = false;
  for (int a = 0; a < rank; ++a) {
    if (dims[a] < 0) {
      fail_fmt(ctx, "tile '%s': extent %lld of axis %d at run time is negative", name,
               static_cast<long long>(dims[a]), a);
      return -1;
    }
    too_big = too_big || __builtin_mul_overflow(n, dims[a], &n);
  }
  if (too_big || n > kMaxTileBytes / elem_bytes) {
    char shape[160];
    int used = 0;
    for (int a = 0; a < rank && used < static_cast<int>(sizeof shape) - 24; ++a) {
      used += std::snprintf(shape + used, sizeof shape - static_cast<size_t>(used), "%s%lld", a ? ", " : "",
                            static_cast<long long>(dims[a]));
    }
    fail_fmt(ctx, "tile '%s': run-time shape [%s] holds more than %lld bytes, the most a kernel tile can", name, shape,
             static_cast<long long>(kMaxTileBytes));
    return -1;
  }
  return n;
}

// 0 <= valid[a] <= dims[a] on every axis, else ctx->fail naming the tile; true when it holds.
inline bool check_valid(const PTO2KernelContext* ctx, const int64_t* valid, int rank, const int64_t* dims,
                        const char* name) {
  for (int a = 0; a < rank; ++a) {
    if (valid[a] < 0 || valid[a] > dims[a]) {
      fail_fmt(ctx, "tile '%s': valid extent %lld of axis %d is outside [0, %lld]", name,
               static_cast<long long>(valid[a]), a, static_cast<long long>(dims[a]));
      return false;
    }
  }
  return true;
}

// Loads the valid box [off, off + valid) of a tile of shape `shp` (tensor coordinates): the box is
// checked against the declared extents `decl` (or the tensor's) and clipped to the run-time extent;
// every other tile element is 0.
template <Storage S, class C>
inline bool load_valid(const PTO2KernelContext* ctx, C* tile, const Tensor& t, DataType want, int rank,
                       const int64_t* off, const int64_t* shp, const int64_t* valid, const char* name,
                       const int64_t* decl = nullptr) {
  if (!check_box(ctx, t, want, rank, off, valid, "load", name, decl)) return false;
  int64_t n = 1;
  for (int a = 0; a < rank; ++a) n *= shp[a];
  std::fill(tile, tile + n, C{});
  int64_t vis[PTO2_MAX_DIMS];
  clip_box(t, rank, off, valid, vis);
  if (__builtin_expect(pto2_race_checking(), 0)) pto2_note_access(ctx, t, rank, off, vis, false);  // race checker
  const int64_t last_stride = t.strides[rank - 1];
  for_each_visible_row(t, rank, off, vis, shp, [&](int64_t e, int64_t ti, int64_t m) {
    if constexpr (S == Storage::F32 && std::is_same<C, float>::value) {
      if (last_stride == 1) {   // contiguous FP32 rows: one copy per row, like load
        std::memcpy(tile + ti, static_cast<const float*>(t.data) + e, static_cast<size_t>(m) * sizeof(float));
        return;
      }
    }
    for (int64_t j = 0; j < m; ++j) tile[ti + j] = read_elem<S, C>(t.data, e + j * last_stride);
  });
  return true;
}

// Stores the valid box of a tile of shape `shp` at `off` (checked and clipped like store).
// `atomic_add`: adds into the tensor element by element, atomically (tile.store atomic=Add).
template <Storage S, class C>
inline bool store_valid(const PTO2KernelContext* ctx, const C* tile, const Tensor& t, DataType want, int rank,
                        const int64_t* off, const int64_t* shp, const int64_t* valid, const char* name,
                        const int64_t* decl = nullptr, bool atomic_add = false) {
  if (!check_box(ctx, t, want, rank, off, valid, "store", name, decl)) return false;
  int64_t vis[PTO2_MAX_DIMS];
  clip_box(t, rank, off, valid, vis);
  if (__builtin_expect(pto2_race_checking(), 0)) {   // an atomic add commutes with another (store_add)
    if (atomic_add) pto2_note_atomic_add(ctx, t, rank, off, vis);
    else pto2_note_access(ctx, t, rank, off, vis, true);
  }
  const int64_t last_stride = t.strides[rank - 1];
  for_each_visible_row(t, rank, off, vis, shp, [&](int64_t e, int64_t ti, int64_t m) {
    if constexpr (S == Storage::F32 && std::is_same<C, float>::value) {
      if (last_stride == 1 && !atomic_add) {   // contiguous FP32 rows: one copy per row, like store
        std::memcpy(static_cast<float*>(t.data) + e, tile + ti, static_cast<size_t>(m) * sizeof(float));
        return;
      }
    }
    for (int64_t j = 0; j < m; ++j) {
      const int64_t ei = e + j * t.strides[rank - 1];
      if (atomic_add) atomic_add_elem<S, C>(t.data, ei, tile[ti + j]);
      else write_elem<S, C>(t.data, ei, tile[ti + j]);
    }
  });
  return true;
}

// fillpad: dst = a inside the valid box [0, vr) x [0, vc) of an [m, n] tile, the pad value outside
// it. mode 0 zero, 1 max (+inf, the integer maximum), 2 min (-inf, the integer minimum).
template <class C>
inline void fillpad_valid(C* dst, const C* a, int64_t m, int64_t n, int64_t vr, int64_t vc, int mode) {
  C pad = C{0};
  if (mode == 1) pad = std::numeric_limits<C>::has_infinity ? std::numeric_limits<C>::infinity() : std::numeric_limits<C>::max();
  if (mode == 2) pad = std::numeric_limits<C>::has_infinity ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::lowest();
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) dst[i * n + j] = i < vr && j < vc ? a[i * n + j] : pad;
  }
}

// Row reductions over the valid box of a [rows, cols] tile: dst[i] = op over a[i, 0..vc) for
// i < vr. An empty row (vc = 0) gives the identity. The box bounded by the tile and dst written
// through unbounded_view (an INT8 / UINT8 dst failed its -Werror build).
template <Storage S, class C, class Op>
inline void row_reduce_valid(C* dst, const C* a, int64_t vr, int64_t vc, int64_t rows, int64_t cols, Op op) {
  vr = std::min(vr, rows);
  vc = std::min(vc, cols);
  dst = unbounded_view(dst);
  if (vc == cols) {   // whole rows: the vectorised reduction over the valid rows
    row_reduce<S>(dst, a, vr, cols, op);
    return;
  }
  for (int64_t i = 0; i < vr; ++i) {
    const C* row = a + i * cols;
    C acc = reduce_identity<C, Op>();
    for (int64_t j = 0; j < vc; ++j) acc = op(acc, row[j]);
    acc = signed_zero_extreme<Op>(acc, row, vc, 1);
    dst[i] = acc;
  }
  round_to<S>(dst, vr);
}

// Row sums over the valid box (float tiles accumulate in double, like row_sum).
template <Storage S, class C>
inline void row_sum_valid(C* dst, const C* a, int64_t vr, int64_t vc, int64_t rows, int64_t cols) {
  vr = std::min(vr, rows);   // as in row_reduce_valid
  vc = std::min(vc, cols);
  dst = unbounded_view(dst);
  if (vc == cols) {   // whole rows: the vectorised sum over the valid rows
    row_sum<S>(dst, a, vr, cols);
    return;
  }
  for (int64_t i = 0; i < vr; ++i) {
    const C* row = a + i * cols;
    if constexpr (std::is_floating_point<C>::value) {
      double acc = 0.0;
      for (int64_t j = 0; j < vc; ++j) acc += static_cast<double>(row[j]);
      dst[i] = static_cast<C>(acc);
    } else {
      C acc = 0;
      for (int64_t j = 0; j < vc; ++j) acc = static_cast<C>(acc + row[j]);
      dst[i] = acc;
    }
  }
  round_to<S>(dst, vr);
}

// dst[M, N] = (acc +) a[M, K] @ b[K, N] over the valid box: dst[i, j] for i < vm, j < vn sums
// k < vk only; the other elements of dst are 0 (or acc's). `dst` may alias `acc`.
template <Storage S, class C, class A, class B>
inline void matmul_valid(C* dst, const C* acc, const A* a, const B* b, int64_t m, int64_t k, int64_t n, int64_t vm,
                         int64_t vk, int64_t vn) {
  if (acc == nullptr) {
    std::fill(dst, dst + m * n, C{0});
  } else if (acc != dst) {
    std::copy(acc, acc + m * n, dst);
  }
#ifdef PYPTO_HAVE_MATMUL_SIMD
  if constexpr (std::is_same<C, float>::value && std::is_same<A, float>::value && std::is_same<B, float>::value) {
    // The valid box is a strided [vm, vk] @ [vk, vn] product inside the full tiles.
    if (matmul_f32_simd(dst, n, a, k, b, n, vm, vk, vn)) {
      round_to<S>(dst, m * n);
      return;
    }
  }
#endif
  for (int64_t i = 0; i < vm; ++i) {
    C* out = dst + i * n;
    for (int64_t p = 0; p < vk; ++p) {
      const C ap = static_cast<C>(a[i * k + p]);
      const B* brow = b + p * n;
      for (int64_t j = 0; j < vn; ++j) out[j] += ap * static_cast<C>(brow[j]);
    }
  }
  round_to<S>(dst, m * n);
}

// part_add / part_mul / part_max / part_min (reference_ops.md §3, ISA TPARTADD): over the [m, n]
// result, op(a, b) where both operands are valid, a copy of the only valid one where just one is,
// 0 where neither is. Operand x is [xr, xc] (xr in {1, m}, xc in {1, n}, broadcast as in
// binary_bcast) with the valid box [0, xvr) x [0, xvc). Equal, fully valid operands take the
// vectorised binary path.
template <Storage S, class C, class Op>
inline void part_binary(C* dst, const C* a, int64_t ar, int64_t ac, int64_t avr, int64_t avc, const C* b, int64_t br,
                        int64_t bc, int64_t bvr, int64_t bvc, int64_t m, int64_t n, Op op) {
  if (avr == ar && avc == ac && bvr == br && bvc == bc) {
    binary_bcast<S>(dst, a, ar, ac, b, br, bc, m, n, op);
    return;
  }
  if (ar == m && ac == n && br == m && bc == n) {   // equal shapes: per row, three runs of columns
    for (int64_t i = 0; i < m; ++i) {
      const int64_t ea = i < avr ? avc : 0, eb = i < bvr ? bvc : 0;   // valid columns of this row
      const int64_t lo = std::min(ea, eb), hi = std::max(ea, eb);
      const C* ra = a + i * n;
      const C* rb = b + i * n;
      const C* rl = ea > eb ? ra : rb;   // the longer valid run
      C* out = dst + i * n;
      for (int64_t j = 0; j < lo; ++j) out[j] = op(ra[j], rb[j]);   // both valid (vectorised)
      // The copy and the fill as calls, not loops: on a run-time row count GCC 12 -O3 reported
      // "iteration 4611686018427387903 invokes undefined behavior" in a copy loop here
      // (-Waggressive-loop-optimizations, an error under -Werror; valid-region fuzz seed 251).
      if (hi > lo) std::copy(rl + lo, rl + hi, out + lo);
      if (n > hi) std::fill(out + hi, out + n, C{0});
    }
    round_to<S>(dst, m * n);
    return;
  }
  Unaliased<C> ua(a, dst, ar * ac), ub(b, dst, br * bc);
  for (int64_t i = 0; i < m; ++i) {
    const int64_t ia = ar == 1 ? 0 : i, ib = br == 1 ? 0 : i;
    const C* ra = ua.p + ia * ac;
    const C* rb = ub.p + ib * bc;
    C* out = dst + i * n;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t ja = ac == 1 ? 0 : j, jb = bc == 1 ? 0 : j;
      const bool va = ia < avr && ja < avc, vb = ib < bvr && jb < bvc;
      out[j] = va && vb ? op(ra[ja], rb[jb]) : va ? ra[ja] : vb ? rb[jb] : C{0};
    }
  }
  round_to<S>(dst, m * n);
}

// assemble of a source with a valid region: dst = target with the box [0, vr) x [0, vc) of the
// [h, w] source written at (r0, c0); the whole [h, w] block must fit (checked as in assemble).
template <class C>
inline bool assemble_valid(const PTO2KernelContext* ctx, C* dst, const C* target, int64_t tr, int64_t tc,
                           const C* source, int64_t h, int64_t w, int64_t vr, int64_t vc, int64_t r0, int64_t c0,
                           const char* what) {
  if (r0 < 0 || c0 < 0 || h > tr || w > tc || r0 > tr - h || c0 > tc - w) {
    return assemble(ctx, dst, target, tr, tc, source, h, w, r0, c0, what);   // fails the run with its message
  }
  Unaliased<C> us(source, dst, h * w);
  if (dst != target) std::memmove(dst, target, static_cast<size_t>(tr * tc) * sizeof(C));
  // check_valid bounds the valid box by [h, w]; said again here so GCC sees the bound (without
  // it, -Wstringop-overflow reported writes past dst on iterations that never run).
  vr = std::min(vr, h);
  vc = std::min(vc, w);
  C* out = unbounded_view(dst);   // the bound alone stopped being enough (an FP16 column, GCC 12)
  for (int64_t i = 0; i < vr; ++i) {
    std::memmove(out + (r0 + i) * tc + c0, us.p + i * w, static_cast<size_t>(vc) * sizeof(C));
  }
  return true;
}

// gather over the valid box [0, vr) x [0, vc) of the [m, n] indices: dst[i, j] = src.flat[idx[i, j]]
// there (an index outside src fails the run), 0 elsewhere; indices outside the box are not read.
template <class C, class I>
inline bool gather_valid(const PTO2KernelContext* ctx, C* dst, const C* src, int64_t src_n, const I* idx, int64_t m,
                         int64_t n, int64_t vr, int64_t vc, const char* what) {
  Unaliased<C> us(src, dst, src_n);
  std::vector<I> ucopy;
  const I* ip = idx;
  if (static_cast<const void*>(idx) == static_cast<const void*>(dst)) {
    ucopy.assign(idx, idx + m * n);
    ip = ucopy.data();
  }
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      if (i >= vr || j >= vc) {
        dst[i * n + j] = C{0};
        continue;
      }
      const int64_t k = static_cast<int64_t>(ip[i * n + j]);
      if (k < 0 || k >= src_n) return index_fail(ctx, what, "flat index", k, src_n);
      dst[i * n + j] = us.p[k];
    }
  }
  return true;
}

// scatter over the valid box [0, vr) x [0, vc) of the [m, n] src (and indexes): out = dst with
// out.flat[idx[i, j]] = src[i, j] in row-major order (last write wins); src elements outside the
// box are not written and their indices not read.
template <class C, class I>
inline bool scatter_valid(const PTO2KernelContext* ctx, C* out, const C* dst, int64_t dst_n, const C* src,
                          const I* idx, int64_t m, int64_t n, int64_t vr, int64_t vc, const char* what) {
  Unaliased<C> us(src, out, m * n);
  std::vector<I> ucopy;
  const I* ip = idx;
  if (static_cast<const void*>(idx) == static_cast<const void*>(out)) {
    ucopy.assign(idx, idx + m * n);
    ip = ucopy.data();
  }
  if (out != dst) std::memmove(out, dst, static_cast<size_t>(dst_n) * sizeof(C));
  for (int64_t i = 0; i < vr; ++i) {
    for (int64_t j = 0; j < vc; ++j) {
      const int64_t k = static_cast<int64_t>(ip[i * n + j]);
      if (k < 0 || k >= dst_n) return index_fail(ctx, what, "flat index", k, dst_n);
      out[k] = us.p[i * n + j];
    }
  }
  return true;
}

// gather_mask over the valid box [0, vr) x [0, vc) of the [m, n] src: the selected columns below
// vc of the rows below vr, packed left into dst [m, n / stride]; the rest of dst is 0 (§1.5).
//   src valid [2, 5], pattern 1 (even columns)  ->  dst[i, 0..2] = src[i, 0], src[i, 2], src[i, 4] for i < 2
template <Storage SS, Storage DS, class CS, class CD>
inline void gather_mask_valid(CD* dst, const CS* src, int64_t m, int64_t n, int64_t vr, int64_t vc, int pattern) {
  const int64_t stride = mask_stride(pattern), first = mask_first(pattern), w = n / stride;
  // Written in place (no temporary the size of dst: GCC 12 took the one this had, with a run-time
  // m, for a free of a non-heap pointer, a -Werror build failure).
  Unaliased<CS> us(src, dst, m * n);   // dst may be src (in place)
  std::fill(dst, dst + m * w, CD{0});
  for (int64_t i = 0; i < vr; ++i) {
    for (int64_t k = 0, c = first; k < w && c < vc; ++k, c += stride) {
      dst[i * w + k] = reinterpret_elem<SS, DS, CS, CD>(us.p[i * n + c]);
    }
  }
}

// scatter_mask over the valid box [0, vr) x [0, vc) of the [m, n / stride] src: out = dst [m, n]
// with the k-th element of src row i (i < vr, k < vc) in the k-th selected column; the rest of
// dst is unchanged (§1.5).
template <class C>
inline void scatter_mask_valid(C* out, const C* dst, const C* src, int64_t m, int64_t n, int64_t vr, int64_t vc,
                               int pattern) {
  const int64_t stride = mask_stride(pattern), first = mask_first(pattern), w = n / stride;
  Unaliased<C> us(src, out, m * w);
  if (out != dst) std::memmove(out, dst, static_cast<size_t>(m * n) * sizeof(C));
  for (int64_t i = 0; i < vr; ++i) {
    for (int64_t k = 0; k < vc && k < w; ++k) out[i * n + first + k * stride] = us.p[i * w + k];
  }
}

// scatter_update over valid boxes: out = input [rows, d] with out[idx[i, j], 0:svc] = src[k, 0:svc]
// for the index entries (i, j) of idx's valid box [0, ivr) x [0, ivc) (idx is [im, in]), where
// k = i * in + j is the src row, taken only while k < svr (src's valid rows); last write wins.
//   idx [2, 2] valid [1, 2], src valid [4, 3]  ->  rows idx[0, 0] and idx[0, 1] get src rows 0, 1, columns 0..2
template <class C, class I>
inline bool scatter_update_valid(const PTO2KernelContext* ctx, C* out, const C* input, int64_t rows, int64_t d,
                                 const I* idx, int64_t in, int64_t ivr, int64_t ivc, const C* src, int64_t src_rows,
                                 int64_t svr, int64_t svc, const char* what) {
  Unaliased<C> us(src, out, src_rows * d);
  std::vector<I> ucopy;
  const I* ip = idx;
  if (static_cast<const void*>(idx) == static_cast<const void*>(out)) {
    ucopy.assign(idx, idx + ivr * in);
    ip = ucopy.data();
  }
  if (out != input) std::memmove(out, input, static_cast<size_t>(rows * d) * sizeof(C));
  for (int64_t i = 0; i < ivr; ++i) {
    for (int64_t j = 0; j < ivc; ++j) {
      const int64_t k = i * in + j;
      if (k >= svr) return true;   // row-major order: every later k is past src's valid rows too
      const int64_t r = static_cast<int64_t>(ip[k]);
      if (r < 0 || r >= rows) return index_fail(ctx, what, "row", r, rows);
      std::memmove(out + r * d, us.p + k * d, static_cast<size_t>(svc) * sizeof(C));
    }
  }
  return true;
}

}  // namespace pypto_kernel
