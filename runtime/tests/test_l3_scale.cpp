// test_l3_scale.cpp — the L3 scheduler at scale: many next-level tasks through a small window
// (memory bounded by live tasks, back-pressure never deadlocks), dependency order kept, and a
// failure in the middle of a long run ends it.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <vector>

#include "pto_l3_api.h"

namespace {

std::atomic<uint64_t> g_ran{0};
std::mutex g_order_mu;
std::vector<uint64_t> g_order;

void l2_count(const ChipStorageTaskArgs&) { g_ran.fetch_add(1); }
void l2_log(const ChipStorageTaskArgs& a) {
  std::lock_guard<std::mutex> lk(g_order_mu);
  g_order.push_back(a.scalar(0));
}
void l2_fail_at(const ChipStorageTaskArgs& a) {
  if (a.scalar(0) == 500) throw std::runtime_error("task 500 broke");
}

constexpr uint64_t kTasks = 20000;

// kTasks tasks over two targets, each waiting on the task two before it (a barrier joins
// every 100th pair).
void host_many(const ChipStorageTaskArgs&) {
  TaskHandle prev2, prev1;
  for (uint64_t i = 0; i < kTasks; ++i) {
    TaskArgs a;
    a.add_scalar(i);
    a.add_dep_wait(prev2);
    TaskHandle h = submit_next_level(static_cast<int32_t>(i % 2), a);
    if (i % 100 == 99) {
      TaskArgs b;
      b.add_dep_wait(prev1);
      b.add_dep_wait(h);
      h = submit_barrier(b);
    }
    prev2 = prev1;
    prev1 = h;
  }
}

pto2::RuntimeOptions one_worker() { return pto2::RuntimeOptions{}.aic_workers(1).aiv_workers(1); }

TEST(L3Scale, ManyTasksThroughASmallWindow) {
  g_ran = 0;
  pto2::L3Runtime l3(pto2::L3Options{}.chips(2).window(64).record_tasks(false).chip_options(one_worker()));
  l3.register_target(0, "count_a", &l2_count).register_target(1, "count_b", &l2_count);
  pto2::L3RunResult r = l3.run(&host_many);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.tasks_submitted, kTasks);
  EXPECT_EQ(r.tasks_executed, kTasks);
  EXPECT_EQ(g_ran.load(), kTasks);
  EXPECT_EQ(r.barriers, kTasks / 100);
  EXPECT_LE(r.peak_live_tasks, 64u) << "live tasks are bounded by the window";
  EXPECT_TRUE(r.tasks.empty()) << "record_tasks(false) keeps no per-task records";
}

// One target: the per-target chain alone must keep submission order across window reuse.
void host_ordered(const ChipStorageTaskArgs&) {
  for (uint64_t i = 0; i < 3000; ++i) {
    TaskArgs a;
    a.add_scalar(i);
    submit_next_level(0, a);
  }
}

TEST(L3Scale, ChainOrderSurvivesWindowReuse) {
  g_order.clear();
  pto2::L3Runtime l3(pto2::L3Options{}.chips(3).window(8).chip_options(one_worker()));
  l3.register_target(0, "log", &l2_log);
  pto2::L3RunResult r = l3.run(&host_ordered);
  ASSERT_TRUE(r.ok()) << r.message;
  ASSERT_EQ(g_order.size(), 3000u);
  for (uint64_t i = 0; i < 3000; ++i) ASSERT_EQ(g_order[i], i);
  ASSERT_EQ(r.tasks.size(), 3000u);
  EXPECT_EQ(r.tasks[5].deps, std::vector<uint64_t>{5}) << "task 6's chain edge is recorded";
}

void host_fail_midway(const ChipStorageTaskArgs&) {
  for (uint64_t i = 0; i < 5000; ++i) {
    TaskArgs a;
    a.add_scalar(i);
    submit_next_level(static_cast<int32_t>(i % 3), a);
  }
}

TEST(L3Scale, FailureMidRunEndsItAndTheRuntimeIsReusable) {
  pto2::L3Runtime l3(pto2::L3Options{}.chips(2).window(16).chip_options(one_worker()));
  l3.register_target(0, "f0", &l2_fail_at).register_target(1, "f1", &l2_fail_at).register_target(2, "f2", &l2_fail_at);
  pto2::L3RunResult r = l3.run(&host_fail_midway);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message.find("next-level task 501 (target 2 'f2') failed on chip"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("task 500 broke"), std::string::npos) << r.message;
  EXPECT_LT(r.tasks_submitted, 5000u) << "the host entry is unwound after the failure";
  // The same runtime runs again after a failed run (the window was reset).
  g_ran = 0;
  l3.register_target(0, "count_a", &l2_count).register_target(1, "count_b", &l2_count);
  pto2::L3RunResult again = l3.run(&host_many);
  EXPECT_TRUE(again.ok()) << again.message;
  EXPECT_EQ(again.tasks_executed, kTasks);
}

}  // namespace
