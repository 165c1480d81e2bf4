// Task slots keep a few scalars inline (TaskSlot::kInlineScalars) and the rest on the heap,
// a buffer the slot keeps for its later occupants: every count, above and below the inline
// one, in any order a slot sees them, reaches the kernel intact. Their fan-out nodes, inline
// and in a vector, release every consumer after all its producers.
#include <gtest/gtest.h>

#include <memory>

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

namespace {
// Task i (scalar 0) checks that each of its producers (g_producers[i]) has finished, then
// marks itself finished; a task with i % 5 == 0 first busy-waits ~20 us, so that the tasks
// submitted meanwhile find it live and link into its fan-out list.
std::vector<std::vector<uint32_t>> g_producers;
std::unique_ptr<std::atomic<int>[]> g_finished;
std::atomic<int> g_early{0};
void k_after_producers(PTO2KernelContext* ctx) {
  const uint64_t i = ctx->scalars[0];
  if (i % 5 == 0) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
    while (std::chrono::steady_clock::now() < end) {
    }
  }
  for (uint32_t p : g_producers[i])
    if (g_finished[p].load(std::memory_order_acquire) == 0) g_early.fetch_add(1);
  g_finished[i].store(1, std::memory_order_release);
}
}  // namespace

// A task's first TaskSlot::kInlineEdges fan-out nodes are words on its slot's first line, its
// consumer found from the word's address; the others are nodes in a vector that carry it.
// Tasks with 0 to 6 producers (below, at and above the inline count), linked in a rotating
// order while some producers still run, in reused slots of the smallest ring: a node read as
// the wrong consumer or reused while still linked runs a task before a producer (counted in
// g_early), or never (tasks_executed short, or the watchdog).
TEST(TaskSlot, FanInThroughInlineAndVectorNodesInReusedSlots) {
  constexpr uint32_t kTasks = 3000;
  g_producers.assign(kTasks, {});
  for (uint32_t i = 0; i < kTasks; ++i) {
    const uint32_t d = std::min(i, i % 7);  // the last d tasks, starting from a rotating one
    for (uint32_t k = 0; k < d; ++k) g_producers[i].push_back(i - 1 - (k + i) % d);
  }
  for (bool helps : {false, true}) {
    for (uint32_t w = 1; w <= 3; ++w) {
      Watchdog wd{60};
      pto2::Runtime rt{pto2::RuntimeOptions{}.aic_workers(0).aiv_workers(w).task_ring_size(8).inline_below_ns(0).orchestrator_helps(helps)};
      rt.register_kernel(7, "after_producers", pto2::CoreType::AIV, &k_after_producers);
      g_finished.reset(new std::atomic<int>[kTasks]);
      for (uint32_t i = 0; i < kTasks; ++i) g_finished[i].store(0);
      g_early = 0;
      pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
        PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
          std::vector<PTO2TaskId> ids;
          for (uint32_t i = 0; i < kTasks; ++i) {
            Arg a;
            a.add_scalar(i);
            PTO2TaskId deps[8];
            for (size_t k = 0; k < g_producers[i].size(); ++k) deps[k] = ids[g_producers[i][k]];
            if (!g_producers[i].empty()) a.set_dependencies(deps, static_cast<uint32_t>(g_producers[i].size()));
            ids.push_back(rt_submit_aiv_task(7, a).task_id());
          }
        }
      });
      ASSERT_TRUE(r.ok()) << r.message;
      EXPECT_EQ(r.tasks_executed, kTasks) << w << " workers, helps " << helps;
      EXPECT_EQ(g_early.load(), 0) << w << " workers, helps " << helps;
      // The slow producers were live when their consumers were linked: edges on both kinds
      // of node (a task with more than kInlineEdges producers uses the vector).
      EXPECT_GT(r.explicit_edges, kTasks / 5) << w << " workers, helps " << helps;
    }
  }
}
