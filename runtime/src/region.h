// region.h — the memory region a tensor view touches, and overlap/containment tests.
//
// Overlap is exact for box-shaped views of the same layout (same element size and strides,
// each view's coordinates uniquely recoverable from its offset); otherwise it falls back to
// the conservative byte-interval test.
#pragma once

#include <cstdint>

#include "pto_orchestration_api.h"

namespace pto2::detail {

struct Region {
  int64_t lo = 0, hi = 0;  // byte interval [lo, hi) relative to the storage base
  uint32_t ndims = 0;
  uint32_t elem = 0;
  int64_t offset = 0;
  bool empty = false;
  bool dense = false;      // every byte of [lo, hi) belongs to the view
  bool box = false;        // coordinates below are valid
  int64_t rem = 0;         // residue below the smallest stride
  // Only the first `ndims` entries are meaningful, and only in a region that is not dense
  // (left uninitialized otherwise: Region::of is hot).
  uint32_t shapes[PTO2_MAX_DIMS];
  int64_t strides[PTO2_MAX_DIMS];
  int64_t start[PTO2_MAX_DIMS];  // per-axis start coordinate (box only)

  /// The region `t` views. Inline: the tracker computes one per tracked tensor per task.
  static inline Region of(const Tensor& t);
  /// Single element `idx` of `t`.
  static Region element(const Tensor& t, const int64_t* idx);
  /// The same view moved to element offset `offset` (same shapes and strides).
  Region at_offset(int64_t offset) const;
  /// Same bytes: equal intervals for dense regions, equal layout, offset and shape otherwise.
  bool same_as(const Region& o) const;
  /// Same rank, element size and strides (strided regions only).
  bool same_layout(const Region& o) const;
};

/// Fills the per-axis start coordinates and `box` of a strided region (region.cpp).
void decompose_region(Region& r);

/// The axes of a strided layout ordered by stride, largest first, into `order[0..ndims)`;
/// false unless every stride is positive and no two are equal (then no view is a box).
bool stride_order(uint32_t ndims, const int64_t* strides, uint32_t* order);

/// Decomposes element offset `offset` into per-axis start coordinates `start[d]` and the
/// residue `rem` below the smallest stride, the axes taken in `order` (stride_order). True if
/// the view of `shapes` there is a box: its footprint along the inner axes stays within one
/// period of the next outer axis, so every address maps back to exactly one coordinate tuple.
/// Inline: the tracker's strided-tile fast path calls it once per access.
inline bool decompose_offset(int64_t offset, uint32_t ndims, const uint32_t* shapes, const int64_t* strides,
                             const uint32_t* order, int64_t* start, int64_t& rem) {
  if (offset < 0) return false;
  rem = offset;
  for (uint32_t k = 0; k < ndims; ++k) {
    const uint32_t d = order[k];
    start[d] = rem / strides[d];
    rem %= strides[d];
  }
  int64_t m = rem;
  for (uint32_t k = ndims; k-- > 1;) {
    const uint32_t d = order[k];
    m += (start[d] + static_cast<int64_t>(shapes[d]) - 1) * strides[d];
    if (m >= strides[order[k - 1]]) return false;
  }
  return true;
}

/// a + b * c in int64, wrapping (unsigned arithmetic: defined). The tracker's byte arithmetic on
/// views the API made never wraps; fields written by hand may take it past int64, and such a
/// view is the caller's duty (docs/runtime.md): the tracker must still not be undefined on it.
inline int64_t wrap_mad(int64_t a, int64_t b, int64_t c) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b) * static_cast<uint64_t>(c));
}

/// Bytes per element of `dt`, by table (dtype_size's switch is a chain of branches on the
/// tracker's hot path). `elem_bytes(DataType::FLOAT16) == 2`.
inline uint32_t elem_bytes(DataType dt) {
  static constexpr uint8_t kBytes[16] = {4, 2, 2, 1, 2, 4, 8, 1, 2, 4, 8, 1, 1, 1, 1, 1};
  return kBytes[static_cast<uint8_t>(dt) & 15];
}

inline Region Region::of(const Tensor& t) {
  Region r;
  r.ndims = t.ndims;
  r.elem = elem_bytes(t.dtype);
  r.offset = t.offset;
  // One pass, innermost axis first: extend the byte interval and check row-major contiguity
  // (axes of extent 1 may have any stride) like Tensor::is_contiguous. Unsigned arithmetic: a
  // view the API made spans less than 2^63 bytes (sizes are checked at creation, views stay
  // inside their source), while strides or offsets written by hand may take the sums past
  // int64; they then wrap, defined, and such a view is the caller's duty (docs/runtime.md).
  uint64_t lo = static_cast<uint64_t>(t.offset), hi = lo, dense_stride = 1;
  bool dense = true, empty = false;
  for (uint32_t i = t.ndims; i-- > 0;) {
    const uint32_t sh = t.shapes[i];
    const int64_t st = t.strides[i];
    empty |= sh == 0;
    if (sh != 1 && static_cast<uint64_t>(st) != dense_stride) dense = false;
    dense_stride *= sh;
    if (sh == 0) continue;
    const uint64_t ext = static_cast<uint64_t>(sh - 1) * static_cast<uint64_t>(st);
    if (st < 0) lo += ext; else hi += ext;
  }
  r.empty = empty;
  r.lo = static_cast<int64_t>(lo * r.elem);
  r.hi = static_cast<int64_t>((hi + 1) * r.elem);
  r.dense = dense;
  // A dense region is decided exactly by its byte interval (against other dense regions) or
  // conservatively by it (against strided ones): only strided views need their layout and
  // coordinates, and only they carry them.
  if (!dense) {
    for (uint32_t i = 0; i < t.ndims; ++i) {
      r.shapes[i] = t.shapes[i];
      r.strides[i] = t.strides[i];
    }
    decompose_region(r);
  }
  return r;
}

bool regions_overlap(const Region& a, const Region& b);
/// regions_overlap without its conservative answers, for the race checker (a race it reports
/// fails the run, so it must share an element): views of other layouts (a transpose, a reshape)
/// or a dense view against a strided one are decided by visiting the smaller one's elements —
/// at most `max_elements` of them, past which the answer is regions_overlap's.
bool regions_share_an_element(const Region& a, const Region& b, uint64_t max_elements = uint64_t{1} << 20);
/// The same region with its axes ordered by stride, largest first (a transposed view then has
/// its source's layout, and boxes print in the storage's order); a dense region is unchanged.
Region with_axes_by_stride(const Region& r);
/// True if every byte of `inner` is in `outer` (may answer false when unsure).
bool region_contains(const Region& outer, const Region& inner);

}  // namespace pto2::detail
