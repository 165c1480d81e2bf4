// Where a worker woken from parking goes when it finds itself on the orchestrating thread's CPU
// (WorkerPool::leave_orchestrator_cpu): the CPUs it may use less that one (cpus_away_from), and
// nowhere when it is elsewhere or has no other CPU. The move itself is the kernel's; the
// benchmark benchmarks/worker_wakeups.py shows what it changes.
#include <gtest/gtest.h>

#include <sched.h>

#include <initializer_list>

#include "../src/worker_pool.h"
#include "test_util.h"

namespace {
cpu_set_t cpus(std::initializer_list<int> ids) {
  cpu_set_t s;
  CPU_ZERO(&s);
  for (int id : ids) CPU_SET(id, &s);
  return s;
}
}  // namespace

using pto2::detail::cpus_away_from;

TEST(WorkerPlacement, OnTheOrchestratorsCpuItTakesTheOthers) {
  cpu_set_t out = cpus({});
  ASSERT_TRUE(cpus_away_from(0, 0, cpus({0, 1}), &out));
  const cpu_set_t one = cpus({1});
  EXPECT_TRUE(CPU_EQUAL(&out, &one));
  ASSERT_TRUE(cpus_away_from(5, 5, cpus({2, 5, 7, 63}), &out));
  const cpu_set_t three = cpus({2, 7, 63});
  EXPECT_TRUE(CPU_EQUAL(&out, &three));
}

TEST(WorkerPlacement, ElsewhereOrAloneItStays) {
  cpu_set_t out = cpus({3});
  EXPECT_FALSE(cpus_away_from(0, 1, cpus({0, 1}), &out));    // on another CPU already
  EXPECT_FALSE(cpus_away_from(0, 0, cpus({0}), &out));       // the only CPU it may use
  EXPECT_FALSE(cpus_away_from(2, 2, cpus({0, 1}), &out));    // the orchestrator's is not one of its own
  EXPECT_FALSE(cpus_away_from(-1, 0, cpus({0, 1}), &out));   // no run has started
  EXPECT_FALSE(cpus_away_from(CPU_SETSIZE, CPU_SETSIZE, cpus({0, 1}), &out));
  const cpu_set_t untouched = cpus({3});
  EXPECT_TRUE(CPU_EQUAL(&out, &untouched));
}

// A run after the worker parked: whatever CPU the kernel wakes it on, the run completes and its
// tasks all run (the move changes where, never whether).
TEST(WorkerPlacement, RunsAfterParkingStillRunEveryTask) {
  static std::atomic<int> ran{0};
  pto2::Runtime rt(pto2::RuntimeOptions{}.aic_workers(0).aiv_workers(1).spin_us(1).inline_below_ns(0));
  rt.register_kernel(7, "k", pto2::CoreType::AIV, [](PTO2KernelContext*) { ran.fetch_add(1); });
  for (int r = 0; r < 20; ++r) {
    ran.store(0);
    pto2::RunResult res = rt.run([&](const ChipStorageTaskArgs&) {
      for (int i = 0; i < 8; ++i) {
        Arg p;
        rt_submit_aiv_task(7, p);
      }
    });
    ASSERT_TRUE(res.ok()) << res.message;
    EXPECT_EQ(ran.load(), 8);
    sched_yield();
  }
}
