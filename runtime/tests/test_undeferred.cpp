// Undeferred execution: past the help threshold, a task with nothing to wait for runs on the
// orchestrator thread at submission; a task with a live producer never does.
#include <gtest/gtest.h>

#include <stdexcept>

#include "test_util.h"

namespace {
void k_sleep(PTO2KernelContext* ctx) { sleep_ms(static_cast<int>(ctx->scalars[0])); }
void k_throw(PTO2KernelContext*) { throw std::runtime_error("undeferred boom"); }


// Keeps the only worker busy (the first sleeper, given 20 ms to start) and the queue at the
// threshold, 2 (two more sleepers). Returns the last sleeper's id.
PTO2TaskId occupy_worker(int ms = 40) {
  PTO2TaskId last;
  for (int i = 0; i < 3; ++i) {
    Arg p;
    p.add_scalar(static_cast<uint64_t>(ms));
    last = rt_submit_aiv_task(50, p).task_id();
    if (i == 0) sleep_ms(20);
  }
  return last;
}
// One AIV worker, help threshold 2, the standard kernels and "sleep" (id 50); a watchdog.
struct OneWorker {
  Watchdog wd{60};
  pto2::Runtime rt{pto2::RuntimeOptions{}.aic_workers(0).aiv_workers(1).help_threshold(2)};
  OneWorker() {
    register_std(rt);
    rt.register_kernel(50, "sleep", pto2::CoreType::AIV, &k_sleep);
  }
};
}  // namespace

TEST(Undeferred, IndependentTasksRunAtSubmissionAndCount) {
  OneWorker one;
  pto2::Runtime& rt = one.rt;
  std::vector<float> cells(64, 0.f);
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    occupy_worker();
    uint32_t sh[1] = {1};
    for (uint32_t i = 0; i < 64; ++i) {
      uint32_t off[1] = {i};
      submit_fill(ext1d(cells).view(sh, off), static_cast<float>(i + 1));
    }
  });
  ASSERT_TRUE(r.ok()) << r.message;
  for (uint32_t i = 0; i < 64; ++i) EXPECT_EQ(cells[i], static_cast<float>(i + 1)) << i;
  EXPECT_EQ(r.tasks_executed, 67u);
  EXPECT_GE(r.tasks_undeferred, 32u);  // the sleepers hold the worker for 80+ ms
  EXPECT_LE(r.tasks_undeferred, 64u);
}

TEST(Undeferred, TaskWithLiveProducerWaitsForIt) {
  OneWorker one;
  pto2::Runtime& rt = one.rt;
  std::vector<float> a(4, 0.f), b(4, 0.f), c(4, 0.f);
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    const PTO2TaskId last_sleeper = occupy_worker(150);
    Arg fill;  // waits for the last sleeper: deferred, unfinished for 300+ ms
    fill.add_output(ext1d(a));
    fill.add_scalar(5);
    fill.add_scalar(0);
    fill.set_dependencies(&last_sleeper, 1);
    rt_submit_aiv_task(0, fill);
    submit_add(ext1d(a), ext1d(b), 1.f);  // RaW on a: must not run before the fill
    submit_add(ext1d(b), ext1d(c), 1.f);  // RaW on b
    submit_fill(ext1d(a), 9.f);           // WaR on a (the first add reads it)
  });
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(b[0], 6.f);
  EXPECT_EQ(c[0], 7.f);
  EXPECT_EQ(a[0], 9.f);
  EXPECT_EQ(r.tasks_undeferred, 0u);
  EXPECT_EQ(r.auto_edges, 4u);  // fill->add, add->add, fill->fill (WaW), add->fill (WaR)
  EXPECT_EQ(r.explicit_edges, 1u);
}

TEST(Undeferred, FinishedExplicitDependencyDoesNotBlockIt) {
  OneWorker one;
  pto2::Runtime& rt = one.rt;
  std::vector<float> x(4, 0.f);
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
      Arg first;
      first.add_scalar(0);
      const PTO2TaskId done = rt_submit_aiv_task(50, first).task_id();
      sleep_ms(20);  // `done` has finished by now
      occupy_worker();
      Arg p;
      p.add_inout(ext1d(x));
      p.set_dependencies(&done, 1);
      rt_submit_aiv_task(2, p);
    }
  });
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(x[0], 1.f);
  EXPECT_EQ(r.tasks_undeferred, 1u);
}

TEST(Undeferred, KernelFailureNamesTheTask) {
  Watchdog wd(60);
  pto2::Runtime rt(pto2::RuntimeOptions{}.aic_workers(0).aiv_workers(1).help_threshold(2));
  rt.register_kernel(50, "sleep", pto2::CoreType::AIV, &k_sleep);
  rt.register_kernel(51, "exploding", pto2::CoreType::AIV, &k_throw);
  PTO2TaskId exploding;
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    occupy_worker(150);
    Arg p;
    exploding = rt_submit_aiv_task(51, p).task_id();
    Arg q;  // never runs: the run failed
    rt_submit_aiv_task(51, q);
  });
  EXPECT_FALSE(r.ok());
  const std::string who = "task #" + std::to_string(exploding.value()) + " (AIV kernel 'exploding' (id 51))";
  EXPECT_NE(r.message.find(who + " block 0/1 on the orchestrator thread (undeferred)"), std::string::npos)
      << r.message;
  EXPECT_NE(r.message.find("undeferred boom"), std::string::npos) << r.message;
  EXPECT_GE(r.tasks_undeferred, 1u);
}

TEST(Undeferred, MeasuredTinyKernelsRunInlineLongOnesNever) {
  Watchdog wd(120);
  for (uint32_t w = 1; w <= 4; ++w) {
    for (uint32_t below : {0u, 200000u}) {  // 0: policy off; 200 us: the empty kernel is tiny
      pto2::Runtime rt(pto2::RuntimeOptions{}.aic_workers(0).aiv_workers(w).help_threshold(100000).inline_below_ns(below));
      register_std(rt);
      rt.register_kernel(50, "sleep", pto2::CoreType::AIV, &k_sleep);
      auto submit_n = [&](int n, int32_t kernel, uint64_t scalar) {
        return rt.run([&](const ChipStorageTaskArgs&) {
          for (int i = 0; i < n; ++i) {
            Arg p;
            p.add_scalar(scalar);
            rt_submit_aiv_task(kernel, p);
          }
        });
      };
      // Run 1: unmeasured kernels go to the workers, which sample their run times (kept by the
      // Runtime across runs).
      pto2::RunResult warm = submit_n(256, 3, 0);  // some thread runs 32+ of them: sampled
      ASSERT_TRUE(warm.ok()) << warm.message;
      EXPECT_LE(warm.tasks_undeferred, 256u - 32u);  // nothing is tiny before its first sample
      pto2::RunResult slow = submit_n(20, 50, 1);  // 1 ms each: never below the limit
      ASSERT_TRUE(slow.ok()) << slow.message;
      EXPECT_EQ(slow.tasks_undeferred, 0u);
      pto2::RunResult tiny = submit_n(200, 3, 0);  // empty: measured far below 200 us
      ASSERT_TRUE(tiny.ok()) << tiny.message;
      EXPECT_EQ(tiny.tasks_executed, 200u);
      EXPECT_EQ(tiny.tasks_undeferred, below == 0 ? 0u : 200u);
    }
  }
}
