// float_python_ops.h — Python's float `//` and `%`, shared by generated orchestration / HOST
// code (pto2/orchestration.h, in double) and generated kernels (pypto_kernel_prelude.h, in the
// tile's own float type): one algorithm for both sides.
#pragma once

#include <cmath>

/// Python's `a // b` on floats: from fmod, not floor(a / b), whose rounded quotient can reach the
/// next integer (1.0 // 0.1 in FP32 is 9, floor(1.0f / 0.1f) is 10), and an infinite `a` gives
/// NaN. A zero divisor keeps IEEE's floor(a / 0) (Python raises).
/// `float q = (float)pto2_float_floordiv((double)x, (double)y);  // 9.0 for (1.0, 0.1)`
template <typename T>
inline T pto2_float_floordiv(T a, T b) {
  if (b == 0) return std::floor(a / b);
  const T mod = std::fmod(a, b);
  T div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
  if (div == 0) return std::copysign(T(0), a / b);
  T fl = std::floor(div);
  if (div - fl > T(0.5)) fl += 1;
  return fl;
}

/// Python's `a % b` on floats: the sign of the divisor, and a zero remainder takes the divisor's
/// sign (-0.0 % 1.0 is 0.0). A zero divisor gives fmod's NaN (Python raises); an infinite
/// divisor keeps a finite `a` of its sign (-1.0 % inf is inf, as Python).
/// `float r = (float)pto2_float_mod((double)x, (double)y);  // 1.0 for (-7.0, 2.0)`
template <typename T>
inline T pto2_float_mod(T a, T b) {
  T r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  if (r == 0) r = std::copysign(T(0), b);
  return r;
}
