// The run-time checks generated orchestration calls (dsl_checks.cpp): full-width slice ranges,
// dynamic call-argument extents, run-time tensor extents, Python range trip counts and scalar
// arguments of integer parameters, each failure naming the DSL line.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "pto_orchestration_api.h"
#include "test_util.h"

namespace {

}  // namespace

TEST(DslChecks, ViewAtCheckedAtFullWidth) {
  std::vector<float> buf(64 * 8);
  uint32_t sh[2] = {64, 8};
  Tensor t = make_tensor_external(buf.data(), sh, 2, DataType::FLOAT32);
  int64_t vs[2] = {16, 8}, vo[2] = {16, 0};
  Tensor v = pto2_view_at(t, 2, vs, vo, "v", "prog.py", 12);
  EXPECT_EQ(v.shapes[0], 16u);
  EXPECT_EQ(v.offset, 16 * 8);
  int64_t far[2] = {(int64_t{1} << 32) + 16, 0};   // would select row 16 once narrowed
  std::string m = message_of([&] { pto2_view_at(t, 2, vs, far, "v", "prog.py", 12); });
  EXPECT_NE(m.find("prog.py:12: pl.tensor.slice 'v': offset 4294967312 + shape 16 on axis 0"), std::string::npos) << m;
  int64_t neg[2] = {-1, 0}, max[2] = {INT64_MAX, 0}, big[2] = {INT64_MAX, 8};
  EXPECT_NE(message_of([&] { pto2_view_at(t, 2, vs, neg, "v", "prog.py", 12); }), "");
  EXPECT_NE(message_of([&] { pto2_view_at(t, 2, vs, max, "v", "prog.py", 12); }), "");
  EXPECT_NE(message_of([&] { pto2_view_at(t, 2, big, vo, "v", "prog.py", 12); }), "");
  EXPECT_NE(message_of([&] { pto2_view_at(t, 1, vs, vo, "v", "prog.py", 12); }).find("rank 2"), std::string::npos);
}

TEST(DslChecks, ArgExtent) {
  std::vector<float> buf(32 * 8);
  uint32_t sh[2] = {32, 8};
  Tensor t = make_tensor_external(buf.data(), sh, 2, DataType::FLOAT32);
  pto2_check_arg_extent(t, 1, 8, "k", "x", "prog.py", 3);
  std::string m = message_of([&] { pto2_check_arg_extent(t, 0, 16, "k", "x", "prog.py", 3); });
  EXPECT_NE(m.find("prog.py:3: argument 'x' of 'k' has extent 32 on axis 0"), std::string::npos) << m;
}

TEST(DslChecks, ArgExtentAcceptsASmallerClampedView) {
  std::vector<float> buf(32 * 8);
  uint32_t sh[2] = {10, 8};
  Tensor t = make_tensor_external(buf.data(), sh, 2, DataType::FLOAT32);
  pto2_check_arg_extent(t, 0, 16, "k", "x", "prog.py", 3);   // the kernel clips (anchor_features §18)
}

TEST(DslChecks, SliceEntriesCheckedAtFullWidth) {
  std::vector<float> buf(64 * 8);
  uint32_t sh[2] = {64, 8};
  Tensor t = make_tensor_external(buf.data(), sh, 2, DataType::FLOAT32);
  EXPECT_EQ(pto2_slice_u32(49, "offset", t, 0, "v", "prog.py", 12), 49u);
  EXPECT_EQ(pto2_slice_u32(UINT32_MAX, "shape", t, 0, "v", "prog.py", 12), UINT32_MAX);
  std::string m = message_of([&] { pto2_slice_u32((int64_t{1} << 32) + 16, "offset", t, 0, "v", "prog.py", 12); });
  EXPECT_NE(m.find("prog.py:12: pl.tensor.slice 'v': offset 4294967312 on axis 0"), std::string::npos) << m;
  EXPECT_NE(m.find("extent 64"), std::string::npos) << m;
  EXPECT_NE(message_of([&] { pto2_slice_u32(-1, "shape", t, 1, "v", "prog.py", 12) ; }).find("shape -1 on axis 1"),
            std::string::npos);
}

TEST(DslChecks, ZeroExtentViewAnywhere) {
  std::vector<float> buf(16 * 8);
  uint32_t sh[2] = {16, 8};
  Tensor t = make_tensor_external(buf.data(), sh, 2, DataType::FLOAT32);
  uint32_t vs[2] = {0, 8}, vo[2] = {40, 0};
  Tensor v = t.view(vs, vo);   // a clamped slice past the end: empty, address kept inside t
  EXPECT_EQ(v.numel(), 0);
  EXPECT_EQ(v.offset, 16 * 8);
  uint32_t bad[2] = {1, 8};
  EXPECT_NE(message_of([&] { t.view(bad, vo); }), "");   // a non-empty overhang still throws
}

TEST(DslChecks, ExtentU32) {
  EXPECT_EQ(pto2_extent_u32(0, "p.py", 1), 0u);
  EXPECT_EQ(pto2_extent_u32(UINT32_MAX, "p.py", 1), UINT32_MAX);
  EXPECT_NE(message_of([] { pto2_extent_u32(int64_t{1} << 32, "p.py", 1); }).find("p.py:1: tensor extent"), std::string::npos);
  EXPECT_NE(message_of([] { pto2_extent_u32(-1, "p.py", 1); }), "");
}

TEST(DslChecks, RangeCountFollowsPython) {
  auto count = [](int64_t a, int64_t b, int64_t s) { return pto2_range_count(a, b, s, "p.py", 1); };
  EXPECT_EQ(count(0, 10, 1), 10u);
  EXPECT_EQ(count(0, 10, 3), 4u);
  EXPECT_EQ(count(10, 0, -3), 4u);
  EXPECT_EQ(count(0, 10, -1), 0u);
  EXPECT_EQ(count(10, 0, 1), 0u);
  EXPECT_EQ(count(5, 5, 2), 0u);
  EXPECT_EQ(count(INT64_MIN, INT64_MAX, 1), UINT64_MAX);
  EXPECT_EQ(count(INT64_MAX, INT64_MIN, INT64_MIN), 2u);
  EXPECT_EQ(count(0, INT64_MAX, INT64_MAX), 1u);
  EXPECT_NE(message_of([] { pto2_range_count(0, 10, 0, "p.py", 7); }).find("p.py:7: pl.range() step is 0"), std::string::npos);
}

// The divisor of a DSL `//` / `%` not known to be non-zero (a C++ division by 0 is SIGFPE).
TEST(DslChecks, DivisorZeroThrowsNamingTheLine) {
  EXPECT_EQ(pto2_divisor(int64_t{-3}, "p.py", 1), -3);
  EXPECT_EQ(pto2_divisor(uint64_t{1} << 63, "p.py", 1), uint64_t{1} << 63);   // the divisor's own type
  EXPECT_NE(message_of([] { pto2_divisor(int32_t{0}, "p.py", 5); }).find("p.py:5: integer division or modulo by zero"),
            std::string::npos);
}

// Python's // and % on operands that may be negative: floor rounding, MIN // -1 refused (it
// would trap), % -1 is 0, and no intermediate overflows (the old inline `((a % d) + d) % d`
// gave a negative 5 % INT64_MAX).
TEST(DslChecks, FloorDivisionAndModuloFollowPythonWithoutTrapping) {
  const int64_t vals[] = {INT64_MIN, INT64_MIN + 1, -7, -2, -1, 0, 1, 2, 7, INT64_MAX - 1, INT64_MAX};
  for (int64_t a : vals) {
    for (int64_t d : vals) {
      if (d == 0 || (a == INT64_MIN && d == -1)) continue;
      // Python semantics computed in 128 bits.
      const __int128 A = a, D = d;
      __int128 q = A / D;
      if (A % D != 0 && ((A < 0) != (D < 0))) --q;
      const __int128 r = A - q * D;
      EXPECT_EQ(pto2_floordiv<int64_t>(a, d, "p.py", 1), static_cast<int64_t>(q)) << a << " // " << d;
      EXPECT_EQ(pto2_mod<int64_t>(a, d, "p.py", 1), static_cast<int64_t>(r)) << a << " % " << d;
    }
  }
  EXPECT_EQ(pto2_mod<int64_t>(INT64_MIN, -1, "p.py", 1), 0);
  EXPECT_EQ(pto2_floordiv<int32_t>(-7, 2, "p.py", 1), -4);
  EXPECT_EQ(pto2_mod<int32_t>(-7, 2, "p.py", 1), 1);
  EXPECT_EQ(pto2_floordiv<uint64_t>(UINT64_MAX, UINT64_MAX, "p.py", 1), 1u);   // unsigned: no -1 case
  // MIN // -1 wraps to MIN (Python's 2^63 wrapped, as kernels compute it); it used to throw
  EXPECT_EQ(pto2_floordiv<int64_t>(INT64_MIN, -1, "p.py", 4), INT64_MIN);
  EXPECT_EQ(pto2_floordiv<int32_t>(INT32_MIN, -1, "p.py", 4), INT32_MIN);
  EXPECT_EQ(pto2_floordiv<int64_t>(INT64_MAX, -1, "p.py", 4), -INT64_MAX);
  EXPECT_NE(message_of([] { pto2_mod<int64_t>(3, 0, "p.py", 6); }).find("p.py:6: integer division or modulo by zero"),
            std::string::npos);
  EXPECT_NE(message_of([] { pto2_floordiv<int64_t>(3, 0, "p.py", 6); }).find("p.py:6: integer division"),
            std::string::npos);
}

TEST(DslChecks, ChunkStrideIsCheckedForInt64Overflow) {
  EXPECT_EQ(pto2_chunk_stride(3, 4, "p.py", 1), 12);
  EXPECT_EQ(pto2_chunk_stride(-3, 4, "p.py", 1), -12);
  EXPECT_EQ(pto2_chunk_stride(INT64_MIN / 2, 2, "p.py", 1), INT64_MIN);   // the edge still fits
  EXPECT_EQ(pto2_chunk_stride(INT64_MAX / 3, 3, "p.py", 1), INT64_MAX / 3 * 3);
  const std::string m = message_of([] { pto2_chunk_stride(INT64_C(1) << 62, 4, "p.py", 9); });
  EXPECT_NE(m.find("p.py:9: pl.auto_chunk: step * chunk = 4611686018427387904 * 4 overflows int64"), std::string::npos) << m;
  EXPECT_FALSE(message_of([] { pto2_chunk_stride(-(INT64_C(1) << 62) - 1, 2, "p.py", 9); }).empty());
}

namespace {

// pto2_int_arg of `v` into `to`: the message, "" when it fits (then `slot` is the scalar slot).
template <typename V>
std::string int_arg(V v, DataType to, uint64_t* slot = nullptr) {
  return message_of([&] {
    const uint64_t s = pto2_int_arg(v, to, "kernel_addk", "k", "t.py", 13);
    if (slot) *slot = s;
  });
}

struct IntEdge {
  DataType to;
  int64_t lo;
  uint64_t hi;
};

const IntEdge kIntEdges[] = {
    {DataType::INT8, INT8_MIN, INT8_MAX},       {DataType::INT16, INT16_MIN, INT16_MAX},
    {DataType::INT32, INT32_MIN, INT32_MAX},    {DataType::INT64, INT64_MIN, INT64_MAX},
    {DataType::UINT8, 0, UINT8_MAX},            {DataType::UINT16, 0, UINT16_MAX},
    {DataType::UINT32, 0, UINT32_MAX},          {DataType::UINT64, 0, UINT64_MAX},
};

}  // namespace

TEST(DslChecks, IntArgFromIntegersAtTheEdgesOfEachDtype) {
  for (const IntEdge& e : kIntEdges) {
    const std::string name = dtype_name(e.to);
    uint64_t slot = 1;
    EXPECT_EQ(int_arg(e.lo, e.to, &slot), "") << name;
    EXPECT_EQ(slot, static_cast<uint64_t>(e.lo)) << name;
    EXPECT_EQ(int_arg(e.hi, e.to, &slot), "") << name;
    EXPECT_EQ(slot, e.hi) << name;
    if (e.lo != INT64_MIN) { EXPECT_NE(int_arg(e.lo - 1, e.to), "") << name; }
    if (e.hi != UINT64_MAX) { EXPECT_NE(int_arg(e.hi + 1, e.to), "") << name; }
    if (e.hi <= INT64_MAX) {   // the same edges given as int64_t
      EXPECT_EQ(int_arg(static_cast<int64_t>(e.hi), e.to), "") << name;
      if (e.hi < INT64_MAX) { EXPECT_NE(int_arg(static_cast<int64_t>(e.hi) + 1, e.to), "") << name; }
    }
    if (e.hi < UINT64_MAX) { EXPECT_NE(int_arg(uint64_t{UINT64_MAX}, e.to), "") << name; }
    if (e.lo < 0) { EXPECT_EQ(int_arg(INT64_MIN, e.to).empty(), e.lo == INT64_MIN) << name; }
  }
  EXPECT_NE(int_arg(int64_t{-1}, DataType::UINT64), "");   // not 18446744073709551615
  uint64_t slot = 0;
  EXPECT_EQ(int_arg(int64_t{-5}, DataType::INT8, &slot), "");
  EXPECT_EQ(slot, static_cast<uint64_t>(int64_t{-5}));   // sign-extended, as the callee reads it
  const std::string m = int_arg((int64_t{1} << 40) + 7, DataType::INT32);
  EXPECT_EQ(m, "t.py:13: argument 'k' of 'kernel_addk' = 1099511627783 does not fit pl.INT32 (range "
               "-2147483648..2147483647): pass a value in range, or convert it with pl.cast");
  EXPECT_NE(int_arg(int64_t{-1}, DataType::UINT32).find("= -1 does not fit pl.UINT32 (range 0..4294967295)"),
            std::string::npos);
  EXPECT_NE(int_arg(uint64_t{UINT64_MAX}, DataType::INT64)
                .find("= 18446744073709551615 does not fit pl.INT64 (range -9223372036854775808..9223372036854775807)"),
            std::string::npos);
}

TEST(DslChecks, IntArgFromFloatsTruncatesTowardZeroAndRefusesNanInfAndOutOfRange) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  uint64_t slot = 0;
  EXPECT_EQ(int_arg(3.7, DataType::INT32, &slot), "");
  EXPECT_EQ(slot, 3u);
  EXPECT_EQ(int_arg(-3.7, DataType::INT32, &slot), "");
  EXPECT_EQ(slot, static_cast<uint64_t>(int64_t{-3}));
  EXPECT_EQ(int_arg(-0.0, DataType::UINT8, &slot), "");   // -0.0 and -0.5 are 0, not negative
  EXPECT_EQ(slot, 0u);
  EXPECT_EQ(int_arg(-0.5, DataType::UINT64, &slot), "");
  EXPECT_EQ(slot, 0u);
  EXPECT_NE(int_arg(-1.0, DataType::UINT64), "");
  for (const IntEdge& e : kIntEdges) {
    const std::string name = dtype_name(e.to);
    EXPECT_NE(int_arg(nan, e.to), "") << name;
    EXPECT_NE(int_arg(inf, e.to), "") << name;
    EXPECT_NE(int_arg(-inf, e.to), "") << name;
    if (e.hi < (uint64_t{1} << 53)) {   // the edges are exact doubles: x.9 truncates onto them
      EXPECT_EQ(int_arg(static_cast<double>(e.hi) + 0.9, e.to, &slot), "") << name;
      EXPECT_EQ(slot, e.hi) << name;
      EXPECT_NE(int_arg(static_cast<double>(e.hi) + 1.0, e.to), "") << name;
      EXPECT_EQ(int_arg(static_cast<double>(e.lo) - 0.9, e.to, &slot), "") << name;
      EXPECT_EQ(slot, static_cast<uint64_t>(e.lo)) << name;
      EXPECT_NE(int_arg(static_cast<double>(e.lo) - 1.0, e.to), "") << name;
    }
  }
  const double two63 = 9223372036854775808.0, two64 = 18446744073709551616.0;
  EXPECT_NE(int_arg(two63, DataType::INT64), "");                // 2**63 does not fit INT64 ...
  EXPECT_EQ(int_arg(-two63, DataType::INT64, &slot), "");        // ... -2**63 does
  EXPECT_EQ(slot, static_cast<uint64_t>(INT64_MIN));
  EXPECT_EQ(int_arg(two63, DataType::UINT64, &slot), "");        // and 2**63 fits UINT64
  EXPECT_EQ(slot, uint64_t{1} << 63);
  EXPECT_NE(int_arg(two64, DataType::UINT64), "");
  EXPECT_EQ(int_arg(std::nextafter(two64, 0.0), DataType::UINT64, &slot), "");   // the largest double below 2**64
  EXPECT_EQ(slot, UINT64_MAX - 2047);
  EXPECT_EQ(int_arg(nan, DataType::INT32), "t.py:13: argument 'k' of 'kernel_addk' = nan does not fit pl.INT32 (range "
                                           "-2147483648..2147483647): pass a value in range, or convert it with pl.cast");
  EXPECT_NE(int_arg(-inf, DataType::UINT8).find("= -inf does not fit pl.UINT8 (range 0..255)"), std::string::npos);
  EXPECT_NE(int_arg(1e20, DataType::INT64).find("= 1e+20 does not fit pl.INT64"), std::string::npos);
  EXPECT_NE(int_arg(3000000000.0, DataType::INT32).find("= 3000000000.0 does not fit"), std::string::npos);
}

TEST(DslChecks, IntArgRefusesANonIntegerParameterDtype) {
  EXPECT_NE(int_arg(int64_t{1}, DataType::FLOAT32).find("is not an integer"), std::string::npos);
}
