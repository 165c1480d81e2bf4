// Region overlap: exact for boxes of the same layout, conservative otherwise.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>

#include "../src/region.h"
#include "test_util.h"

using pto2::detail::Region;
using pto2::detail::region_contains;
using pto2::detail::regions_overlap;

namespace {
Tensor base2d(uint32_t r, uint32_t c) {
  static float storage[64 * 64];
  uint32_t sh[2] = {r, c};
  return make_tensor_external(storage, sh, 2, DataType::FLOAT32);
}
Tensor sub(const Tensor& t, uint32_t r0, uint32_t c0, uint32_t nr, uint32_t nc) {
  uint32_t sh[2] = {nr, nc}, off[2] = {r0, c0};
  return t.view(sh, off);
}
}  // namespace

TEST(Region, BoxesExact) {
  Tensor t = base2d(16, 16);
  Region a = Region::of(sub(t, 0, 0, 8, 8));
  Region b = Region::of(sub(t, 0, 8, 8, 8));   // byte ranges interleave, boxes disjoint
  Region c = Region::of(sub(t, 4, 4, 8, 8));
  Region d = Region::of(sub(t, 8, 0, 8, 16));
  EXPECT_TRUE(a.box && b.box && c.box);
  EXPECT_FALSE(regions_overlap(a, b));
  EXPECT_TRUE(regions_overlap(a, c));
  EXPECT_TRUE(regions_overlap(b, c));
  EXPECT_FALSE(regions_overlap(a, d));
  EXPECT_TRUE(regions_overlap(c, d));
  Region whole = Region::of(t);
  EXPECT_TRUE(region_contains(whole, a));
  EXPECT_TRUE(region_contains(whole, c));
  EXPECT_FALSE(region_contains(a, c));
  EXPECT_TRUE(region_contains(Region::of(sub(t, 0, 0, 12, 12)), c));
}

TEST(Region, ColumnsOfRowMajor) {
  Tensor t = base2d(4, 4);
  Region c0 = Region::of(sub(t, 0, 0, 4, 1));
  Region c1 = Region::of(sub(t, 0, 1, 4, 1));
  EXPECT_FALSE(regions_overlap(c0, c1));
  EXPECT_TRUE(regions_overlap(c0, Region::of(sub(t, 2, 0, 1, 4))));
}

TEST(Region, TransposeAndDtypeAreConservative) {
  Tensor t = base2d(8, 8);
  Region a = Region::of(sub(t, 0, 0, 4, 4));
  Region tr = Region::of(sub(t, 0, 4, 4, 4).transpose(0, 1));
  EXPECT_TRUE(regions_overlap(a, tr));  // different layout: byte-interval test
  Tensor far = sub(t, 6, 0, 2, 8);
  EXPECT_FALSE(regions_overlap(a, Region::of(far.transpose(0, 1))));  // disjoint byte ranges
}

TEST(Region, EmptyNeverOverlaps) {
  Tensor t = base2d(8, 8);
  Region e = Region::of(sub(t, 0, 0, 0, 8));
  EXPECT_TRUE(e.empty);
  EXPECT_FALSE(regions_overlap(e, Region::of(t)));
}

TEST(Region, ThreeDimensional) {
  static float s[4 * 4 * 4];
  uint32_t sh[3] = {4, 4, 4};
  Tensor t = make_tensor_external(s, sh, 3, DataType::FLOAT32);
  uint32_t vs[3] = {2, 2, 2}, o1[3] = {0, 0, 0}, o2[3] = {0, 2, 0}, o3[3] = {1, 1, 1};
  Region a = Region::of(t.view(vs, o1)), b = Region::of(t.view(vs, o2)), c = Region::of(t.view(vs, o3));
  EXPECT_FALSE(regions_overlap(a, b));
  EXPECT_TRUE(regions_overlap(a, c));
  EXPECT_TRUE(regions_overlap(b, c));
}

TEST(TensorOps, ViewTransposeNumel) {
  Tensor t = base2d(6, 10);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.numel(), 60);
  Tensor v = sub(t, 1, 2, 3, 4);
  EXPECT_EQ(v.offset, 12);
  EXPECT_FALSE(v.is_contiguous());
  Tensor tr = t.transpose(0, 1);
  EXPECT_EQ(tr.shapes[0], 10u);
  EXPECT_EQ(tr.strides[0], 1);
  EXPECT_EQ(tr.ptr<float>(), t.ptr<float>());
  uint32_t bad_sh[2] = {7, 1}, off[2] = {0, 0};
  EXPECT_THROW(t.view(bad_sh, off), std::out_of_range);
}

// Tensor::view builds its axes in registers and stores them in 16-byte words (types.h): every
// rank, each axis its own extent and offset, the axes past the rank and every other field as
// the source's, and an empty view past the end clamped on each axis.
TEST(TensorOps, ViewOfEveryRankChangesOnlyItsAxesAndOffset) {
  static float storage[1 << 16];
  for (uint32_t rank = 1; rank <= PTO2_MAX_DIMS; ++rank) {
    uint32_t sh[PTO2_MAX_DIMS], vs[PTO2_MAX_DIMS], off[PTO2_MAX_DIMS];
    for (uint32_t d = 0; d < rank; ++d) {
      sh[d] = 3 + (d % 2);
      vs[d] = 1 + (d % 3 == 1);
      off[d] = sh[d] - vs[d] - (d % 2);
    }
    Tensor t = make_tensor_external(storage, sh, rank, DataType::INT16);
    for (uint32_t d = rank; d < PTO2_MAX_DIMS; ++d) t.shapes[d] = 100 + d;  // kept by a view
    t.offset = 5;
    Tensor want = t;
    int64_t at = t.offset;
    for (uint32_t d = 0; d < rank; ++d) {
      want.shapes[d] = vs[d];
      at += static_cast<int64_t>(off[d]) * t.strides[d];
    }
    want.offset = at;
    const Tensor v = t.view(vs, off);
    EXPECT_EQ(std::memcmp(&v, &want, sizeof v), 0) << "rank " << rank;
    EXPECT_EQ(v.data, t.data);
    EXPECT_EQ(v.offset, at) << "rank " << rank;
    for (uint32_t d = 0; d < PTO2_MAX_DIMS; ++d) EXPECT_EQ(v.shapes[d], want.shapes[d]) << "rank " << rank << " axis " << d;
    // An empty view past the end of the last axis: clamped there (offset = its extent).
    uint32_t past[PTO2_MAX_DIMS], zero[PTO2_MAX_DIMS];
    for (uint32_t d = 0; d < rank; ++d) past[d] = off[d], zero[d] = vs[d];
    past[rank - 1] = sh[rank - 1] + 7;
    zero[rank - 1] = 0;
    const Tensor e = t.view(zero, past);
    EXPECT_EQ(e.offset, at + static_cast<int64_t>(sh[rank - 1] - off[rank - 1]) * t.strides[rank - 1]) << "rank " << rank;
    EXPECT_EQ(e.numel(), 0);
    zero[rank - 1] = 1;  // not empty: out of range
    EXPECT_THROW(t.view(zero, past), std::out_of_range) << "rank " << rank;
  }
}

// The reference view: every axis in order, as the first Tensor::view did. Returns the axis of
// the first error (-1: none).
int reference_view(const Tensor& t, const uint32_t* vs, const uint32_t* vo, Tensor& out) {
  out = t;
  uint64_t at = static_cast<uint64_t>(t.offset);
  for (uint32_t i = 0; i < t.ndims; ++i) {
    uint32_t off = vo[i];
    if (static_cast<uint64_t>(off) + vs[i] > t.shapes[i]) {
      if (vs[i] != 0) return static_cast<int>(i);
      off = t.shapes[i];
    }
    at += static_cast<uint64_t>(off) * static_cast<uint64_t>(t.strides[i]);
    out.shapes[i] = vs[i];
  }
  out.offset = static_cast<int64_t>(at);
  return -1;
}

// Tensor::view is straight-line for ranks up to 4 and redoes anything unusual (a rank above 4,
// an axis outside the source) out of line: random ranks 0..8, extents and views — inside,
// empty past the end, out of range on one or several axes, strides and offsets written by hand
// (the sum wraps) — against the reference, field for field and the first failing axis named.
TEST(TensorOps, ViewMatchesTheAxisByAxisReference) {
  static float storage[16];
  uint64_t rng = 0x243F6A8885A308D3ull;
  auto next = [&rng](uint32_t n) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>((rng >> 33) % n);
  };
  int errors = 0, clamped = 0;
  for (int c = 0; c < 20000; ++c) {
    const uint32_t rank = next(PTO2_MAX_DIMS + 1);
    uint32_t sh[PTO2_MAX_DIMS] = {1};
    for (uint32_t d = 0; d < rank; ++d) sh[d] = next(6);
    Tensor t = make_tensor_external(storage, sh, rank, DataType::FLOAT32);
    for (uint32_t d = 0; d < rank; ++d)  // extents near 2^32 (written by hand: no storage holds them)
      if (next(8) == 0) t.shapes[d] = sh[d] += 0xFFFFFFF0u;
    if (next(4) == 0) {  // fields written by hand
      t.offset = static_cast<int64_t>(next(1u << 30)) * (next(2) ? 1 : -1) * 977;
      for (uint32_t d = 0; d < rank; ++d) t.strides[d] = static_cast<int64_t>(next(1u << 31)) << next(33);
    }
    uint32_t vs[PTO2_MAX_DIMS], vo[PTO2_MAX_DIMS];
    for (uint32_t d = 0; d < rank; ++d) {
      const uint32_t kind = next(10);
      vs[d] = kind == 0 ? 0 : next(sh[d] + 1 > sh[d] ? sh[d] + 1 : sh[d]);
      vo[d] = kind == 1 ? sh[d] + next(5) : kind == 2 ? 0xFFFFFFFFu - next(3) : next(sh[d] - vs[d] + 1 > 0 ? sh[d] - vs[d] + 1 : 1);
    }
    Tensor want = t;
    const int bad = reference_view(t, vs, vo, want);
    if (bad >= 0) {
      ++errors;
      try {
        (void)t.view(vs, vo);
        ADD_FAILURE() << "case " << c << ": no error, the reference refuses axis " << bad;
      } catch (const std::out_of_range& e) {
        EXPECT_NE(std::string(e.what()).find("axis " + std::to_string(bad) + " "), std::string::npos)
            << "case " << c << ": " << e.what();
      }
      continue;
    }
    for (uint32_t d = 0; d < rank; ++d) clamped += vs[d] == 0 && vo[d] > sh[d];
    const Tensor v = t.view(vs, vo);
    ASSERT_EQ(std::memcmp(&v, &want, sizeof v), 0) << "case " << c << " rank " << rank;
  }
  EXPECT_GT(errors, 1000);   // the generator reaches every branch
  EXPECT_GT(clamped, 500);
}

TEST(Region, ElemBytesMatchesDtypeSize) {
  for (DataType dt : {DataType::FLOAT32, DataType::FLOAT16, DataType::BFLOAT16, DataType::INT8, DataType::INT16,
                      DataType::INT32, DataType::INT64, DataType::UINT8, DataType::UINT16, DataType::UINT32,
                      DataType::UINT64, DataType::BOOL})
    EXPECT_EQ(pto2::detail::elem_bytes(dt), dtype_size(dt)) << dtype_name(dt);
}

// regions_share_an_element (the race checker's test) against the element sets themselves, on
// random views of one 12 x 12 storage: slices of the tensor, of its transpose and of reshapes
// ([6, 24], [36, 4], [4, 3, 12]), slices with a step (a reshape then a slice), in both orders
// of arguments. regions_overlap may say true where they share none; this one may not, either way.
TEST(Region, SharingAnElementIsExactForViewsOfOtherLayouts) {
  std::mt19937 rng(7);
  static float storage[144];
  uint32_t base_sh[2] = {12, 12};
  const Tensor base = make_tensor_external(storage, base_sh, 2, DataType::FLOAT32);
  auto random_view = [&]() {
    Tensor t = base;
    switch (rng() % 5) {
      case 1: t = base.transpose(0, 1); break;
      case 2: { uint32_t s[2] = {6, 24}; t = base.reshape(s, 2); break; }
      case 3: { uint32_t s[2] = {36, 4}; t = base.reshape(s, 2).transpose(0, 1); break; }
      case 4: { uint32_t s[3] = {4, 3, 12}; t = base.reshape(s, 3); break; }
      default: break;
    }
    uint32_t sh[3], off[3];
    for (uint32_t d = 0; d < t.ndims; ++d) {
      off[d] = rng() % t.shapes[d];
      sh[d] = 1 + rng() % (t.shapes[d] - off[d]);
    }
    return t.view(sh, off);
  };
  auto elements = [](const Tensor& t) {
    std::set<int64_t> s;
    int64_t idx[3] = {0, 0, 0};
    for (;;) {
      s.insert(t.element_offset(idx));
      uint32_t d = t.ndims;
      while (d-- > 0 && ++idx[d] == static_cast<int64_t>(t.shapes[d])) idx[d] = 0;
      if (d == UINT32_MAX) return s;
    }
  };
  int shared = 0, apart = 0;
  for (int i = 0; i < 4000; ++i) {
    const Tensor a = random_view(), b = random_view();
    const std::set<int64_t> ea = elements(a), eb = elements(b);
    bool expect = false;
    for (int64_t e : ea) expect |= eb.count(e) > 0;
    (expect ? shared : apart)++;
    const Region ra = Region::of(a), rb = Region::of(b);
    ASSERT_EQ(pto2::detail::regions_share_an_element(ra, rb), expect) << "case " << i;
    ASSERT_EQ(pto2::detail::regions_share_an_element(rb, ra), expect) << "case " << i;
    ASSERT_EQ(pto2::detail::regions_share_an_element(pto2::detail::with_axes_by_stride(ra),
                                                     pto2::detail::with_axes_by_stride(rb)), expect) << "case " << i;
    if (!expect) continue;
    ASSERT_TRUE(regions_overlap(ra, rb)) << "case " << i;   // the tracker's test stays conservative
  }
  EXPECT_GT(shared, 400);
  EXPECT_GT(apart, 400);
}
