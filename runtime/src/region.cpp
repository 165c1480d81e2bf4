#include "region.h"

#include <algorithm>
#include <cstring>

namespace pto2::detail {

bool stride_order(uint32_t ndims, const int64_t* strides, uint32_t* order) {
  if (ndims == 0 || ndims > PTO2_MAX_DIMS) return false;
  for (uint32_t i = 0; i < ndims; ++i) {
    if (strides[i] <= 0) return false;
    order[i] = i;
  }
  // insertion sort by stride, largest first (ndims <= 8)
  for (uint32_t i = 1; i < ndims; ++i)
    for (uint32_t j = i; j > 0 && strides[order[j]] > strides[order[j - 1]]; --j) std::swap(order[j], order[j - 1]);
  for (uint32_t k = 1; k < ndims; ++k)
    if (strides[order[k]] == strides[order[k - 1]]) return false;
  return true;
}

void decompose_region(Region& r) {
  uint32_t order[PTO2_MAX_DIMS] = {};
  r.box = stride_order(r.ndims, r.strides, order) &&
          decompose_offset(r.offset, r.ndims, r.shapes, r.strides, order, r.start, r.rem);
}

Region Region::at_offset(int64_t new_offset) const {
  Region r = *this;
  const int64_t delta = wrap_mad(0, static_cast<int64_t>(static_cast<uint64_t>(new_offset) - static_cast<uint64_t>(offset)), elem);
  r.offset = new_offset;
  r.lo = wrap_mad(r.lo, delta, 1);
  r.hi = wrap_mad(r.hi, delta, 1);
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
