// float_to_int.h — the scalar float -> integer conversion of a DSL `pl.cast`, shared by
// generated orchestration / HOST code (pto2/orchestration.h) and generated kernels
// (pypto_kernel_prelude.h): one rule for both sides.
#pragma once

#include <limits>

/// A scalar float -> integer `pl.cast`: toward zero, out-of-range values saturated, NaN gives 0
/// (a tile cast's rule; the plain C++ conversion of those is undefined behaviour).
/// `int64_t n = pto2_float_to_int<int64_t>(x);`
template <typename T>
inline T pto2_float_to_int(double v) {
  if (v != v) return T(0);
  if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}
