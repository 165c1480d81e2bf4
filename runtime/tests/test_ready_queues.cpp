// Ready queues: what a worker's retirement makes ready goes to that worker's own queue (its
// next slot aside); the other workers steal from it, parked workers wake for it, and the
// orchestrator's throttle counts it.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>

#include "test_util.h"

namespace {
// scalars: s0 = the task's flags (std::atomic<int>*), s1 = this task's index, s2 = its
// producer's index + 1 (0: none), s3 = sleep ms. Counts its own run; a producer not run yet
// is counted in flags[0] (a violation).
void k_mark(PTO2KernelContext* ctx) {
  auto* flags = reinterpret_cast<std::atomic<int>*>(ctx->scalars[0]);
  if (ctx->scalars[3]) sleep_ms(static_cast<int>(ctx->scalars[3]));
  if (ctx->scalars[2] && flags[ctx->scalars[2]].load() == 0) flags[0].fetch_add(1);  // flags[producer + 1]
  flags[ctx->scalars[1] + 1].fetch_add(1);
}

PTO2TaskId submit_mark(bool aic, std::vector<std::atomic<int>>& flags, uint64_t i, const PTO2TaskId* producer,
                       uint64_t producer_idx, int sleep = 0) {
  Arg p;
  p.add_scalar(reinterpret_cast<uint64_t>(flags.data()));
  p.add_scalar(i);
  p.add_scalar(producer ? producer_idx + 1 : 0);
  p.add_scalar(static_cast<uint64_t>(sleep));
  if (producer) p.set_dependencies(producer, 1);
  return aic ? rt_submit_aic_task(71, p).task_id() : rt_submit_aiv_task(70, p).task_id();
}
}  // namespace

// A tree of fan-out 6 (MANUAL: explicit dependencies) whose tasks are readied by the workers'
// retirements: every retirement fills the retiring worker's own queue, the other workers
// steal from it, and (spin 1 us) parked workers must be woken for it. One child in six is an
// AIC task readied by an AIV worker (the shared queue) and vice versa. Every task runs once,
// after its producer.
TEST(ReadyQueues, WorkerReadiedFanOutRunsOnceAfterProducers) {
  const int kFan = 6, kDepth = 5;  // 1 + 6 + ... + 6^5 = 9331 tasks
  for (uint32_t w = 1; w <= 3; ++w) {
    for (int round = 0; round < scaled(10); ++round) {
      Watchdog wd(60);
      pto2::Runtime rt(workers(w).spin_us(1).help_threshold(round % 2 ? 4 : 100000));
      rt.register_kernel(70, "mark", pto2::CoreType::AIV, &k_mark);
      rt.register_kernel(71, "mark_c", pto2::CoreType::AIC, &k_mark);
      std::vector<uint64_t> level_start{0};
      uint64_t n = 1;
      for (int d = 1, width = 1; d <= kDepth; ++d) {
        width *= kFan;
        level_start.push_back(n);
        n += width;
      }
      std::vector<std::atomic<int>> flags(n + 1);
      pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
        PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
          std::vector<PTO2TaskId> ids(n);
          // The root sleeps while the tree is submitted: its descendants are readied by retirements.
          ids[0] = submit_mark(false, flags, 0, nullptr, 0, 2);
          for (int d = 1; d <= kDepth; ++d)
            for (uint64_t i = level_start[d]; i < (d < kDepth ? level_start[d + 1] : n); ++i) {
              const uint64_t parent = level_start[d - 1] + (i - level_start[d]) / kFan;
              ids[i] = submit_mark(i % kFan == 5, flags, i, &ids[parent], parent);
            }
        }
      });
      ASSERT_TRUE(r.ok()) << r.message;
      EXPECT_EQ(r.tasks_executed, n);
      EXPECT_EQ(flags[0].load(), 0) << "tasks ran before their producer (" << w << " workers)";
      for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(flags[i + 1].load(), 1) << "task " << i << ", " << w << " workers";
    }
  }
}

// The throttle sees a worker's own queue: a task on the only worker readies 64 sleepers (its
// own queue, not the shared one); independent tasks submitted meanwhile find the queues past
// the help threshold and run on the orchestrator thread at submission.
TEST(ReadyQueues, ThrottleCountsTheWorkersQueues) {
  Watchdog wd(60);
  pto2::Runtime rt(pto2::RuntimeOptions{}.aic_workers(0).aiv_workers(1).help_threshold(4));
  rt.register_kernel(70, "mark", pto2::CoreType::AIV, &k_mark);
  std::vector<std::atomic<int>> flags(66 + 8 + 1);
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
      const PTO2TaskId root = submit_mark(false, flags, 0, nullptr, 0, 5);
      for (uint64_t i = 1; i <= 64; ++i) submit_mark(false, flags, i, &root, 0, 2);
      sleep_ms(60);  // the root has retired: 63 sleepers in the worker's queue, 2 ms each
      for (uint64_t i = 65; i < 65 + 8; ++i) submit_mark(false, flags, i, nullptr, 0, 1);
    }
  });
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(flags[0].load(), 0);
  EXPECT_EQ(r.tasks_executed, 73u);
  EXPECT_GE(r.tasks_undeferred, 6u) << "the throttle did not see the worker's queue";
}

namespace {
// scalars: s0 = the order array (std::atomic<int>*: [0] the next position, [1 + i] task i's
// position), s1 = this task's index, s2 = a flag to wait for (std::atomic<bool>*, 0: none).
void k_order(PTO2KernelContext* ctx) {
  auto* order = reinterpret_cast<std::atomic<int>*>(ctx->scalars[0]);
  if (auto* go = reinterpret_cast<std::atomic<bool>*>(ctx->scalars[2]))
    while (!go->load()) sleep_ms(1);
  order[ctx->scalars[1] + 1].store(order[0].fetch_add(1));
}

PTO2TaskId submit_order(std::vector<std::atomic<int>>& order, uint64_t i, const PTO2TaskId* producer,
                        std::atomic<bool>* go = nullptr) {
  Arg p;
  p.add_scalar(reinterpret_cast<uint64_t>(order.data()));
  p.add_scalar(i);
  p.add_scalar(reinterpret_cast<uint64_t>(go));
  if (producer) p.set_dependencies(producer, 1);
  return rt_submit_aiv_task(72, p).task_id();
}
}  // namespace

// A worker runs what its own retirements made ready before what was ready at submission (their
// lines are in its cache), but asks the shared queue first every 8th pop (kSharedFirstEvery in
// worker_pool.h), so that its tasks wait a bounded number of pops. One worker, no helping
// orchestrator: the order is exact. The root (task 0) waits until everything is submitted, then
// readies 40 children: one runs next (the worker's next slot), 39 go to its own queue; 40
// independent tasks (41..80) sit in the shared queue. Pops 8, 16, ..., 40 take a shared task
// (the 39th own-queue task is the 44th pop), the other 35 follow the children. (Shared queue
// first, as before: all 40 ran before the 39 queued children; own queue only: none.)
TEST(ReadyQueues, OwnQueueFirstWithTheSharedQueueEvery8thPop) {
  const int kEvery = 8, kQueued = 39;
  int pops = 0, own = 0, expected_shared = 0;
  while (own < kQueued) ++pops % kEvery == 0 ? ++expected_shared : ++own;
  for (int round = 0; round < scaled(3); ++round) {
    Watchdog wd(60);
    pto2::Runtime rt(pto2::RuntimeOptions{}.aic_workers(0).aiv_workers(1).orchestrator_helps(false));
    rt.register_kernel(72, "order", pto2::CoreType::AIV, &k_order);
    const int kChildren = kQueued + 1, kIndependent = 40, n = 1 + kChildren + kIndependent;
    std::vector<std::atomic<int>> order(n + 1);
    std::atomic<bool> go{false};
    pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
      PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
        const PTO2TaskId root = submit_order(order, 0, nullptr, &go);
        for (int i = 1; i <= kChildren; ++i) submit_order(order, static_cast<uint64_t>(i), &root);
        for (int i = kChildren + 1; i < n; ++i) submit_order(order, static_cast<uint64_t>(i), nullptr);
        go.store(true);
      }
    });
    ASSERT_TRUE(r.ok()) << r.message;
    ASSERT_EQ(r.tasks_executed, static_cast<uint64_t>(n));
    int last_child = 0, shared_before = 0;
    for (int i = 1; i <= kChildren; ++i) last_child = std::max(last_child, order[i + 1].load());
    for (int i = kChildren + 1; i < n; ++i) shared_before += order[i + 1].load() < last_child;
    EXPECT_EQ(order[1].load(), 0) << "the root ran first";
    EXPECT_EQ(expected_shared, 5);
    EXPECT_EQ(shared_before, expected_shared) << "shared-queue tasks run before the last own-queue task (round " << round << ")";
  }
}
