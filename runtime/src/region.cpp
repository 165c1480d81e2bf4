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

namespace {

// The number of elements `r` covers, saturating at UINT64_MAX.
uint64_t element_count(const Region& r) {
  if (r.dense) return static_cast<uint64_t>(r.hi - r.lo) / (r.elem ? r.elem : 1);
  uint64_t n = 1;
  for (uint32_t d = 0; d < r.ndims; ++d)
    if (__builtin_mul_overflow(n, uint64_t{r.shapes[d]}, &n)) return UINT64_MAX;
  return n;
}

// Whether element offset `e` belongs to `r` (false when `r` is neither dense nor a box: unknown).
bool holds_element(const Region& r, int64_t e) {
  if (r.dense) return e * r.elem >= r.lo && e * r.elem < r.hi;
  uint32_t order[PTO2_MAX_DIMS];
  if (!r.box || e < 0 || !stride_order(r.ndims, r.strides, order)) return false;
  // A box's elements decompose (largest stride first) to its start plus in-range coordinates
  // and its residue, and only they do (decompose_offset's box property).
  int64_t rem = e;
  for (uint32_t k = 0; k < r.ndims; ++k) {
    const uint32_t d = order[k];
    const int64_t c = rem / r.strides[d];
    rem %= r.strides[d];
    if (c < r.start[d] || c >= r.start[d] + static_cast<int64_t>(r.shapes[d])) return false;
  }
  return rem == r.rem;
}

// Calls `f(e)` on every element offset of `r` until it returns true; whether one did.
template <class F>
bool any_element(const Region& r, F&& f) {
  if (r.dense) {
    for (int64_t e = r.lo / r.elem; e < r.hi / r.elem; ++e)
      if (f(e)) return true;
    return false;
  }
  uint32_t idx[PTO2_MAX_DIMS] = {};
  int64_t e = r.offset;
  for (;;) {
    if (f(e)) return true;
    uint32_t d = r.ndims;
    while (d-- > 0) {   // the next index, innermost axis first
      if (++idx[d] < r.shapes[d]) {
        e += r.strides[d];
        break;
      }
      e -= static_cast<int64_t>(idx[d] - 1) * r.strides[d];
      idx[d] = 0;
    }
    if (d == UINT32_MAX) return false;
  }
}

}  // namespace

bool regions_share_an_element(const Region& a, const Region& b, uint64_t max_elements) {
  if (a.empty || b.empty || a.hi <= b.lo || b.hi <= a.lo) return false;
  if ((a.dense && b.dense) || a.elem != b.elem) return regions_overlap(a, b);
  if (a.box && b.box && a.same_layout(b)) return regions_overlap(a, b);   // exact already
  const bool a_member = a.dense || a.box, b_member = b.dense || b.box;
  const uint64_t na = element_count(a), nb = element_count(b);
  // Visit the smaller one's elements, testing each in the other (which must be dense or a box).
  if (b_member && na <= max_elements && (na <= nb || !a_member || nb > max_elements))
    return any_element(a, [&](int64_t e) { return holds_element(b, e); });
  if (a_member && nb <= max_elements) return any_element(b, [&](int64_t e) { return holds_element(a, e); });
  return regions_overlap(a, b);
}

Region with_axes_by_stride(const Region& r) {
  if (r.dense) return r;
  Region s = r;
  uint32_t order[PTO2_MAX_DIMS];
  for (uint32_t i = 0; i < r.ndims; ++i) order[i] = i;
  std::stable_sort(order, order + r.ndims, [&](uint32_t x, uint32_t y) { return r.strides[x] > r.strides[y]; });
  for (uint32_t k = 0; k < r.ndims; ++k) {
    s.shapes[k] = r.shapes[order[k]];
    s.strides[k] = r.strides[order[k]];
    s.start[k] = r.start[order[k]];
  }
  return s;
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
