// get_tensor_data waits for the producers of the element, then reads it.
#include <cmath>
#include <cstring>
#include <gtest/gtest.h>

#include "test_util.h"

TEST(GetTensorData, WaitsForProducer) {
  std::vector<float> x(16, 0);
  float seen = -1;
  sweep([&](const ChipStorageTaskArgs&) {
    std::fill(x.begin(), x.end(), 0.f);
    submit_fill(ext1d(x), 42, 30);
    int64_t idx[1] = {5};
    seen = get_tensor_data<float>(ext1d(x), 1, idx);
  }, [&](const pto2::RunResult& r, uint32_t) {
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_EQ(seen, 42.f);
  });
}

TEST(GetTensorData, ConvertsDtypesAndWaitsForManualWriters) {
  std::vector<int32_t> v(8, 0);
  int64_t seen = 0;
  double seen_d = 0;
  sweep([&](const ChipStorageTaskArgs&) {
    PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
      Arg f;
      f.add_output(ext1d(v));
      rt_submit_aiv_task(20, f);  // untracked writer (manual scope): flag[2] = 5 after 10 ms
    }
    int64_t idx[1] = {2};
    seen = get_tensor_data<int64_t>(ext1d(v), 1, idx);
    seen_d = get_tensor_data<double>(ext1d(v), 1, idx);
  }, [&](const pto2::RunResult& r, uint32_t) {
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_EQ(seen, 5);
    EXPECT_EQ(seen_d, 5.0);
  }, 2);
}

// More untracked writers between two reads than the orchestrator's list keeps before it drops
// the retired ones (untracked_writers.h, 4096), in a ring large enough that a slow early writer
// is still live when the list is compacted: it must be kept, and the read must wait for it.
TEST(GetTensorData, WaitsForAnEarlyManualWriterAfterThousandsOfOthers) {
  std::vector<float> x(6000, 0);
  float seen = -1;
  Watchdog wd(60);
  // Every task queued (no short path, no throttle): the slow one stays with a worker.
  pto2::Runtime rt(
      pto2::RuntimeOptions{}.aic_workers(0).aiv_workers(2).task_ring_size(8192).inline_below_ns(0).help_threshold(1u << 30));
  register_std(rt);
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    const Tensor all = ext1d(x);
    PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
      for (uint32_t i = 0; i < 6000; ++i) {
        uint32_t sh[1] = {1}, off[1] = {i};
        submit_fill(all.view(sh, off), static_cast<float>(i + 1), i == 3 ? 200 : 0);   // x[3] = 4 after 200 ms
      }
    }
    int64_t idx[1] = {3};
    seen = get_tensor_data<float>(all, 1, idx);
  });
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(seen, 4.f);
  EXPECT_EQ(x[5999], 6000.f);
}

TEST(GetTensorData, HalfPrecisionConversions) {
  EXPECT_EQ(pto2::half_to_float(pto2::float_to_half(1.5f)), 1.5f);
  EXPECT_EQ(pto2::bfloat16_to_float(pto2::float_to_bfloat16(-2.0f)), -2.0f);
  uint16_t h = pto2::float_to_half(3.0f);
  uint32_t sh[1] = {1};
  Tensor t = make_tensor_external(&h, sh, 1, DataType::FLOAT16);
  int64_t idx[1] = {0};
  EXPECT_EQ(get_tensor_data<float>(t, 1, idx), 3.0f);  // outside a run: plain read
  EXPECT_EQ(get_tensor_data<int32_t>(t, 1, idx), 3);
}

// The runtime rounded a tie away from zero (1 + 2^-11 became 1 + 2^-10, where NumPy and the
// kernels give 1) and turned a BF16 NaN into inf: one conversion now serves every side.
TEST(GetTensorData, HalfPrecisionRoundsTiesToEvenAndKeepsNaN) {
  const float tie = 1.0f + std::ldexp(1.0f, -11);                      // between 1 and 1 + 2^-10
  EXPECT_EQ(pto2::round_to_half(tie), 1.0f);
  EXPECT_EQ(pto2::round_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 1.0f + std::ldexp(1.0f, -9));   // odd: up
  EXPECT_EQ(pto2::round_to_half(std::ldexp(1.0f, -25)), 0.0f);         // half the smallest subnormal: even 0
  EXPECT_EQ(pto2::round_to_half(3 * std::ldexp(1.0f, -25)), std::ldexp(1.0f, -23));
  EXPECT_TRUE(std::isinf(pto2::round_to_half(65520.0f)));
  EXPECT_EQ(pto2::round_to_half(65519.0f), 65504.0f);
  EXPECT_EQ(pto2::round_to_bfloat16(1.0f + std::ldexp(1.0f, -8)), 1.0f);
  EXPECT_TRUE(std::isnan(pto2::round_to_bfloat16(std::nanf(""))));
  uint32_t nan_bits = 0x7f800001u;                                      // a NaN whose rounding carry made inf
  float nan;
  std::memcpy(&nan, &nan_bits, 4);
  EXPECT_TRUE(std::isnan(pto2::round_to_bfloat16(nan)));
  // An integer rounds to BF16 once (through float it rounded twice: 2^30 + 2^22 + 1 gave 2^30).
  EXPECT_EQ(pto2::int_to_bfloat16(int32_t{1077936129}), std::ldexp(1.0f, 30) + std::ldexp(1.0f, 23));
  EXPECT_EQ(pto2::int_to_bfloat16(int32_t{(1 << 30) + (1 << 22)}), std::ldexp(1.0f, 30));   // a tie: even
  EXPECT_EQ(pto2::int_to_bfloat16(257), 256.0f);
  EXPECT_EQ(pto2::int_to_bfloat16(259), 260.0f);
  EXPECT_EQ(pto2::int_to_bfloat16(-259), -260.0f);
  EXPECT_EQ(pto2::int_to_bfloat16(0), 0.0f);
  EXPECT_EQ(pto2::int_to_bfloat16(INT64_MIN), -std::ldexp(1.0f, 63));
  EXPECT_EQ(pto2::int_to_bfloat16(INT64_MAX), std::ldexp(1.0f, 63));
  EXPECT_EQ(pto2::int_to_bfloat16(UINT64_MAX), std::ldexp(1.0f, 64));
  for (int64_t v = 1; v <= 200000; v += 3) {   // the nearest BF16, an even one on a tie
    const float f = pto2::int_to_bfloat16(v);
    const uint16_t b = pto2::float_to_bfloat16(f);
    ASSERT_EQ(pto2::bfloat16_to_float(b), f) << v;
    const double err = std::fabs(f - static_cast<double>(v));
    const double below = std::fabs(pto2::bfloat16_to_float(static_cast<uint16_t>(b - 1)) - static_cast<double>(v));
    const double above = std::fabs(pto2::bfloat16_to_float(static_cast<uint16_t>(b + 1)) - static_cast<double>(v));
    ASSERT_TRUE(err < below || (err == below && (b & 1) == 0)) << v;
    ASSERT_TRUE(err < above || (err == above && (b & 1) == 0)) << v;
  }
  uint16_t h[2] = {0, 0};
  uint32_t sh[1] = {2};
  Tensor t = make_tensor_external(h, sh, 1, DataType::FLOAT16);
  int64_t idx[1] = {1};
  set_tensor_data<float>(t, 1, idx, tie);                               // an orchestration's pl.tensor.write
  EXPECT_EQ(get_tensor_data<float>(t, 1, idx), 1.0f);
}

// Outside a run there is nothing to wait for, but the element is still read or written: indices
// out of range threw nothing and accessed memory outside the tensor (found by test_api_fuzz).
TEST(GetTensorData, OutsideARunIndicesOutOfRangeThrowNamingTheCall) {
  std::vector<float> x(4 * 4, 0);
  uint32_t sh[2] = {4, 4};
  const Tensor t = make_tensor_external(x.data(), sh, 2, DataType::FLOAT32);
  const int64_t far[2] = {1000000, 0}, neg[2] = {0, -1}, ok[2] = {3, 3};
  try {
    (void)get_tensor_data<float>(t, 2, far, "prog.py", 9);
    ADD_FAILURE() << "get_tensor_data read far outside the tensor";
  } catch (const std::out_of_range& e) {
    EXPECT_STREQ(e.what(), "prog.py:9: get_tensor_data: index 1000000 out of range on axis 0 (extent 4)");
  }
  try {
    set_tensor_data<float>(t, 2, neg, 1.0f);
    ADD_FAILURE() << "set_tensor_data wrote before the tensor";
  } catch (const std::out_of_range& e) {
    EXPECT_STREQ(e.what(), "set_tensor_data: index -1 out of range on axis 1 (extent 4)");
  }
  EXPECT_THROW(get_tensor_data<float>(t, 1, ok), std::out_of_range);  // rank mismatch
  set_tensor_data<float>(t, 2, ok, 2.5f);
  EXPECT_EQ(get_tensor_data<float>(t, 2, ok), 2.5f);
  EXPECT_EQ(x[15], 2.5f);
}

// Generated code keeps the spec's signature and names the line before the call: the next access
// uses the site and clears it, so a later call without one names none (not a stale line).
TEST(GetTensorData, ElementSiteNamesTheNextAccessOnly) {
  std::vector<float> x(4, 0);
  uint32_t sh[1] = {4};
  const Tensor t = make_tensor_external(x.data(), sh, 1, DataType::FLOAT32);
  const int64_t far[1] = {4}, ok[1] = {1};
  try {
    PTO2_ELEMENT_SITE("prog.py", 12);
    set_tensor_data<float>(t, 1, far, 1.0f);
    ADD_FAILURE() << "set_tensor_data wrote past the tensor";
  } catch (const std::out_of_range& e) {
    EXPECT_STREQ(e.what(), "prog.py:12: set_tensor_data: index 4 out of range on axis 0 (extent 4)");
  }
  PTO2_ELEMENT_SITE("prog.py", 13);
  EXPECT_EQ(get_tensor_data<float>(t, 1, ok), 0.0f);   // used up by a successful access too
  try {
    (void)get_tensor_data<float>(t, 1, far);
    ADD_FAILURE() << "get_tensor_data read past the tensor";
  } catch (const std::out_of_range& e) {
    EXPECT_STREQ(e.what(), "get_tensor_data: index 4 out of range on axis 0 (extent 4)");
  }
  PTO2_ELEMENT_SITE("prog.py", 14);   // an explicit site wins
  EXPECT_THROW(
      {
        try {
          (void)get_tensor_data<float>(t, 1, far, "other.py", 3);
        } catch (const std::out_of_range& e) {
          EXPECT_STREQ(e.what(), "other.py:3: get_tensor_data: index 4 out of range on axis 0 (extent 4)");
          throw;
        }
      },
      std::out_of_range);
}
