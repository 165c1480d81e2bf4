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

namespace {
// Task-less of tensors: scalar 0 is the task's index i; g_echo[i] = (scalar count, weighted
// sum). A task with no argument at all counts itself in g_bare. A task with its one-element
// tensor writes there, as k_weighted_sum does.
std::vector<std::pair<int64_t, int64_t>> g_echo;
std::atomic<int> g_bare{0};
void k_echo(PTO2KernelContext* ctx) {
  if (ctx->tensor_count == 1) return k_weighted_sum(ctx);
  int64_t sum = 0;
  for (uint32_t k = 0; k < ctx->scalar_count; ++k) sum += static_cast<int64_t>((k + 1) * ctx->scalars[k]);
  if (ctx->tensor_count == 0 && ctx->scalar_count == 0 && ctx->tensors == nullptr) g_bare.fetch_add(1);
  else if (ctx->tensor_count == 0 && ctx->scalars[0] < g_echo.size()) g_echo[ctx->scalars[0]] = {ctx->scalar_count, sum};
}
}  // namespace

// A task with no tensor, or with few scalars (kept on the slot's first line), leaves the
// slot's tensor and scalar vectors as the previous occupant left them: its kernel must see
// exactly its own arguments — none of the stale ones — through every mix in reused slots.
TEST(TaskSlot, FewScalarsAndNoTensorsSeeOnlyTheirOwnArguments) {
  Watchdog wd{60};
  pto2::Runtime rt{pto2::RuntimeOptions{}.aic_workers(0).aiv_workers(2).task_ring_size(8).inline_below_ns(0)};
  rt.register_kernel(7, "echo", pto2::CoreType::AIV, &k_echo);
  constexpr uint32_t kTasks = 330;
  std::vector<int32_t> cells(2 * kTasks, -1);
  g_echo.assign(kTasks, {-1, -1});
  g_bare = 0;
  // Task i: a tensor when i % 3 == 0; (i * 7) % 6 scalars (0..5: none, line-0 counts, vector
  // counts), scalar k = i + k; every (tensor, count) pair recurs in every slot.
  auto count = [](uint32_t i) { return (i * 7) % 6; };
  auto has_tensor = [](uint32_t i) { return i % 3 == 0; };
  uint32_t bare = 0;
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    for (uint32_t i = 0; i < kTasks; ++i) {
      Arg a;
      uint32_t sh[1] = {2}, off[1] = {2 * i};
      if (has_tensor(i)) a.add_output(ext1d(cells).view(sh, off));
      for (uint32_t k = 0; k < count(i); ++k) a.add_scalar(i + k);
      bare += !has_tensor(i) && count(i) == 0;
      rt_submit_aiv_task(7, a);
    }
  });
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.tasks_undeferred, 0u);
  EXPECT_EQ(g_bare.load(), static_cast<int>(bare));
  for (uint32_t i = 0; i < kTasks; ++i) {
    int64_t want = 0;
    for (uint32_t k = 0; k < count(i); ++k) want += (k + 1) * (i + k);
    if (has_tensor(i)) {
      EXPECT_EQ(cells[2 * i], static_cast<int32_t>(count(i))) << "task " << i;
      EXPECT_EQ(cells[2 * i + 1], static_cast<int32_t>(want)) << "task " << i;
    } else if (count(i) > 0) {
      EXPECT_EQ(g_echo[i].first, static_cast<int64_t>(count(i))) << "task " << i;
      EXPECT_EQ(g_echo[i].second, want) << "task " << i;
    } else {
      EXPECT_EQ(cells[2 * i], -1) << "task " << i << " (no arguments) wrote a stale tensor";
    }
  }
}
