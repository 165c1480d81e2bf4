#include "region.h"

#include <algorithm>
#include <cstring>

namespace pto2::detail {

// Decompose the offset into per-axis coordinates, axes ordered by stride (largest first).
void decompose_region(Region& r) {
  r.box = false;
  if (r.ndims == 0 || r.ndims > PTO2_MAX_DIMS) return;
  uint32_t order[PTO2_MAX_DIMS] = {};
  for (uint32_t i = 0; i < r.ndims; ++i) {
    if (r.strides[i] <= 0) return;
    order[i] = i;
  }
  // insertion sort by stride, largest first (ndims <= 8)
  for (uint32_t i = 1; i < r.ndims; ++i)
    for (uint32_t j = i; j > 0 && r.strides[order[j]] > r.strides[order[j - 1]]; --j) std::swap(order[j], order[j - 1]);
  for (uint32_t k = 1; k < r.ndims; ++k)
    if (r.strides[order[k]] == r.strides[order[k - 1]]) return;
  if (r.offset < 0) return;
  int64_t rem = r.offset;
  for (uint32_t k = 0; k < r.ndims; ++k) {
    const uint32_t d = order[k];
    r.start[d] = rem / r.strides[d];
    rem %= r.strides[d];
  }
  r.rem = rem;
  // Unique decomposition: the footprint of the inner axes stays inside one period of the
  // next outer axis, so an address maps back to exactly one coordinate tuple.
  int64_t m = rem;
  for (uint32_t k = r.ndims; k-- > 1;) {
    const uint32_t d = order[k];
    m += (r.start[d] + static_cast<int64_t>(r.shapes[d]) - 1) * r.strides[d];
    if (m >= r.strides[order[k - 1]]) return;
  }
  r.box = true;
}

Region Region::at_offset(int64_t new_offset) const {
  Region r = *this;
  const int64_t delta = (new_offset - offset) * elem;
  r.offset = new_offset;
  r.lo += delta;
  r.hi += delta;
  if (!r.dense) decompose_region(r);
  return r;
}

Region Region::element(const Tensor& t, const int64_t* idx) {
  Tensor e = t;
  e.offset = t.element_offset(idx);
  for (uint32_t i = 0; i < t.ndims; ++i) e.shapes[i] = 1;
  return of(e);
}

bool Region::same_layout(const Region& o) const {
  if (ndims != o.ndims || elem != o.elem) return false;
  for (uint32_t i = 0; i < ndims; ++i)
    if (strides[i] != o.strides[i]) return false;
  return true;
}

bool Region::same_as(const Region& o) const {
  if (dense || o.dense) return dense == o.dense && lo == o.lo && hi == o.hi;  // same bytes
  if (!same_layout(o) || offset != o.offset) return false;
  for (uint32_t i = 0; i < ndims; ++i)
    if (shapes[i] != o.shapes[i]) return false;
  return true;
}

bool regions_overlap(const Region& a, const Region& b) {
  if (a.empty || b.empty) return false;
  if (a.hi <= b.lo || b.hi <= a.lo) return false;
  if (a.dense || b.dense) return true;
  if (a.box && b.box && a.same_layout(b)) {
    if (a.rem != b.rem) return false;
    for (uint32_t i = 0; i < a.ndims; ++i) {
      const int64_t a0 = a.start[i], a1 = a.start[i] + a.shapes[i];
      const int64_t b0 = b.start[i], b1 = b.start[i] + b.shapes[i];
      if (a1 <= b0 || b1 <= a0) return false;
    }
    return true;
  }
  return true;  // conservative
}

bool region_contains(const Region& outer, const Region& inner) {
  if (inner.empty) return true;
  if (outer.empty) return false;
  if (outer.dense) return outer.lo <= inner.lo && inner.hi <= outer.hi;
  if (outer.box && inner.box && outer.same_layout(inner) && outer.rem == inner.rem) {
    for (uint32_t i = 0; i < outer.ndims; ++i) {
      if (inner.start[i] < outer.start[i]) return false;
      if (inner.start[i] + inner.shapes[i] > outer.start[i] + outer.shapes[i]) return false;
    }
    return true;
  }
  return false;
}

}  // namespace pto2::detail
