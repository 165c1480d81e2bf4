// half_float.h — IEEE binary16 (FP16) and bfloat16 (BF16) <-> float, round to nearest even, for
// the runtime (tensor element reads and writes), generated orchestration code (FP16 / BF16
// scalars) and generated kernels (pypto_kernel_prelude.h): one conversion for every side, so a
// value rounds the same wherever it is computed, and as NumPy's float16 / ml_dtypes' bfloat16.
//
//   pto2::half_to_float(pto2::float_to_half(1.0f + 0x1p-11f)) == 1.0f   // the tie goes to even
//   pto2::round_to_half(70000.0f) == inf;  pto2::round_to_bfloat16(NaN) is a NaN
#pragma once

#include <cstdint>
#include <cstring>

namespace pto2 {

inline float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t man = h & 0x3FFu;
  uint32_t bits;
  if (exp == 0x1Fu) {
    bits = sign | 0x7F800000u | (man << 13);   // inf / NaN
  } else if (exp != 0) {
    bits = sign | ((exp + 112u) << 23) | (man << 13);
  } else if (man == 0) {
    bits = sign;
  } else {   // a subnormal half is a normal float
    int e = -1;
    do {
      ++e;
      man <<= 1;
    } while ((man & 0x400u) == 0);
    bits = sign | (static_cast<uint32_t>(112 - e) << 23) | ((man & 0x3FFu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t absx = x & 0x7FFFFFFFu;
  if (absx >= 0x7F800000u) return static_cast<uint16_t>(sign | 0x7C00u | (absx > 0x7F800000u ? 0x200u : 0u));
  if (absx >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);   // rounds to inf
  if (absx < 0x38800000u) {   // a subnormal half or zero
    if (absx < 0x33000000u) return static_cast<uint16_t>(sign);   // below half the smallest subnormal
    const uint32_t e = absx >> 23;
    const uint32_t m = (absx & 0x7FFFFFu) | 0x800000u;
    const uint32_t shift = 126u - e;   // in [14, 24]
    uint32_t r = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return static_cast<uint16_t>(sign | r);
  }
  uint32_t r = absx - 0x38000000u;   // rebias the exponent, 127 -> 15
  r = (r + 0xFFFu + ((r >> 13) & 1u)) >> 13;
  return static_cast<uint16_t>(sign | r);
}

inline float bfloat16_to_float(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t float_to_bfloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);   // a quiet NaN stays NaN
  x += 0x7FFFu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

/// The value an FP16 (BF16) holds nearest `f`: each FP16 / BF16 scalar op of generated code is
/// rounded with these, so a `pl.Scalar[pl.FP16]` holds an FP16 value as NumPy's float16 does.
inline float round_to_half(float f) { return half_to_float(float_to_half(f)); }
inline float round_to_bfloat16(float f) { return bfloat16_to_float(float_to_bfloat16(f)); }

}  // namespace pto2
