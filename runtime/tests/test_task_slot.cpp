// Task slots keep a few scalars inline (TaskSlot::kInlineScalars) and the rest on the heap,
// a buffer the slot keeps for its later occupants: every count, above and below the inline
// one, in any order a slot sees them, reaches the kernel intact.
#include <gtest/gtest.h>

#include "test_util.h"

namespace {
// t0 (out, one element) = the scalar count, then sum over k of (k + 1) * s_k.
void k_weighted_sum(PTO2KernelContext* ctx) {
  uint64_t sum = 0;
  for (uint32_t k = 0; k < ctx->scalar_count; ++k) sum += (k + 1) * ctx->scalars[k];
  int32_t* out = static_cast<int32_t*>(ctx->tensors[0].data) + ctx->tensors[0].offset;
  out[0] = static_cast<int32_t>(ctx->scalar_count);
  out[1] = static_cast<int32_t>(sum);
}
}  // namespace

TEST(TaskSlot, EveryScalarCountReachesTheKernelThroughReusedSlots) {
  Watchdog wd{60};
  // The smallest ring (8 slots) and no undeferred runs: 200 tasks reuse each slot 25 times,
  // and every task goes through its slot.
  pto2::Runtime rt{pto2::RuntimeOptions{}.aic_workers(0).aiv_workers(2).task_ring_size(8).inline_below_ns(0)};
  rt.register_kernel(7, "weighted_sum", pto2::CoreType::AIV, &k_weighted_sum);
  constexpr uint32_t kTasks = 200;
  std::vector<int32_t> cells(2 * kTasks, -1);
  // Task i has 1 + (i * 5) % 11 scalars (1..11: below, at and above the inline count, in a
  // different order per slot); scalar k is i + k.
  auto count = [](uint32_t i) { return 1 + (i * 5) % 11; };
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    for (uint32_t i = 0; i < kTasks; ++i) {
      uint32_t sh[1] = {2}, off[1] = {2 * i};
      Arg a;
      a.add_output(ext1d(cells).view(sh, off));
      for (uint32_t k = 0; k < count(i); ++k) a.add_scalar(i + k);
      rt_submit_aiv_task(7, a);
    }
  });
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.tasks_undeferred, 0u);
  for (uint32_t i = 0; i < kTasks; ++i) {
    uint64_t want = 0;
    for (uint32_t k = 0; k < count(i); ++k) want += (k + 1) * (i + k);
    EXPECT_EQ(cells[2 * i], static_cast<int32_t>(count(i))) << "task " << i;
    EXPECT_EQ(cells[2 * i + 1], static_cast<int32_t>(want)) << "task " << i;
  }
}
