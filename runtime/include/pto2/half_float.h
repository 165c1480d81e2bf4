// half_float.h — IEEE binary16 (FP16) and bfloat16 (BF16) <-> float, round to nearest even, for
// the runtime (tensor element reads and writes), generated orchestration code (FP16 / BF16
// scalars) and generated kernels (pypto_kernel_prelude.h): one conversion for every side, so a
// value rounds the same wherever it is computed, and as NumPy's float16 / ml_dtypes' bfloat16.
//
//   pto2::half_to_float(pto2::float_to_half(1.0f + 0x1p-11f)) == 1.0f   // the tie goes to even
//   pto2::round_to_half(70000.0f) == inf;  pto2::round_to_bfloat16(NaN) is a NaN
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace pto2 {

/// `m >> shift` rounded to the nearest integer, a tie to the even one (shift < 64).
/// `shift_right_to_nearest_even(0b1011, 1) == 0b110`, `(0b1001, 1) == 0b100`
inline uint64_t shift_right_to_nearest_even(uint64_t m, unsigned shift) {
  if (shift == 0) return m;
  uint64_t r = m >> shift;
  const uint64_t rem = m & ((uint64_t{1} << shift) - 1), half = uint64_t{1} << (shift - 1);
  if (rem > half || (rem == half && (r & 1))) ++r;
  return r;
}

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
    return static_cast<uint16_t>(sign | shift_right_to_nearest_even(m, shift));
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

/// The BF16 nearest the integer `v` (round to nearest even), rounded once: through float it
/// rounded twice, and 2^30 + 2^22 + 1 (above the midpoint of 2^30 and 2^30 + 2^23) gave 2^30.
/// `pto2::int_to_bfloat16(int32_t{1077936129}) == 0x1.02p30f`
template <class T>
inline float int_to_bfloat16(T v) {
  static_assert(std::is_integral<T>::value, "int_to_bfloat16 takes an integer");
  const bool negative = std::is_signed<T>::value && v < 0;
  // |v| in uint64 (the most negative value included)
  uint64_t m = negative ? uint64_t{0} - static_cast<uint64_t>(static_cast<int64_t>(v)) : static_cast<uint64_t>(v);
  unsigned shift = 0;
  while ((m >> shift) >= (uint64_t{1} << 8)) ++shift;   // keep 8 significant bits (a carry to 256 is exact)
  const float f = std::ldexp(static_cast<float>(shift_right_to_nearest_even(m, shift)), static_cast<int>(shift));
  return negative ? -f : f;
}

/// The value an FP16 (BF16) holds nearest `f`: each FP16 / BF16 scalar op of generated code is
/// rounded with these, so a `pl.Scalar[pl.FP16]` holds an FP16 value as NumPy's float16 does.
inline float round_to_half(float f) { return half_to_float(float_to_half(f)); }
inline float round_to_bfloat16(float f) { return bfloat16_to_float(float_to_bfloat16(f)); }

}  // namespace pto2
