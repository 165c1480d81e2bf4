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
      Arg first;  // "empty", not "sleep": a 0 ms sleep would get "sleep" measured tiny
      const PTO2TaskId done = rt_submit_aiv_task(3, first).task_id();
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
      pto2::RunResult warm = submit_n(256, 3, 0);  // a worker times its first run: measured
      ASSERT_TRUE(warm.ok()) << warm.message;
      EXPECT_EQ(warm.tasks_executed, 256u);
      EXPECT_LT(warm.tasks_undeferred, 256u);  // nothing is tiny before its first sample
      if (below == 0) {
        EXPECT_EQ(warm.tasks_undeferred, 0u);
      }
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

// A measured-tiny kernel takes the short submission path; it still waits for live producers
// (RaW), live readers (WaR) and live explicit dependencies, and only a task with nothing in
// flight to wait for runs at submission.
TEST(Undeferred, TinyKernelStillWaitsForLiveConflicts) {
  for (uint32_t w = 1; w <= 4; ++w) {
    Watchdog wd(60);
    pto2::Runtime rt(pto2::RuntimeOptions{}.aic_workers(0).aiv_workers(w).help_threshold(100000).inline_below_ns(200000));
    register_std(rt);
    std::vector<float> x(4, 0.f), y(4, 0.f);
    pto2::RunResult warm = rt.run([&](const ChipStorageTaskArgs&) {  // measures "add" and "inc"
      for (int i = 0; i < 100; ++i) {
        submit_add(ext1d(x), ext1d(y), 1.f);
        Arg p;
        p.add_inout(ext1d(x));
        rt_submit_aiv_task(2, p);
      }
    });
    ASSERT_TRUE(warm.ok()) << warm.message;
    std::vector<float> a(4, 0.f), b(4, 0.f), c(4, 0.f), d(4, -1.f), e(4, 0.f), f(4, 0.f);
    pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
      PTO2_SCOPE(PTO2ScopeMode::MANUAL) {  // explicit edge only: the tiny task waits for it
        Arg slow;
        slow.add_output(ext1d(f));
        slow.add_scalar(7);
        slow.add_scalar(50);
        const PTO2TaskId fill_f = rt_submit_aiv_task(0, slow).task_id();
        Arg inc_f;
        inc_f.add_inout(ext1d(f));
        inc_f.set_dependencies(&fill_f, 1);
        rt_submit_aiv_task(2, inc_f);
      }
      submit_fill(ext1d(a), 7.f, 50);        // slow writer of a
      submit_add(ext1d(a), ext1d(b), 1.f);   // tiny reader of a: after the fill
      Arg slow_read;                         // slow reader of c (fill's kernel: "add" stays tiny)
      slow_read.add_input(ext1d(c));
      slow_read.add_output(ext1d(d));
      slow_read.add_scalar(0);
      slow_read.add_scalar(50);
      rt_submit_aiv_task(1, slow_read);
      Arg inc_c;                             // tiny writer of c: after the slow read
      inc_c.add_inout(ext1d(c));
      rt_submit_aiv_task(2, inc_c);
      Arg inc_e;                             // tiny, nothing to wait for: runs right here
      inc_e.add_inout(ext1d(e));
      rt_submit_aiv_task(2, inc_e);
    });
    ASSERT_TRUE(r.ok()) << r.message;
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(b[i], 8.f) << "workers " << w;  // read a after the fill
      EXPECT_EQ(d[i], 0.f) << "workers " << w;  // read c before the increment
      EXPECT_EQ(c[i], 1.f) << "workers " << w;
      EXPECT_EQ(e[i], 1.f) << "workers " << w;
      EXPECT_EQ(f[i], 8.f) << "workers " << w;  // incremented after the fill
    }
    EXPECT_GE(r.tasks_undeferred, 1u) << "workers " << w;
    EXPECT_EQ(r.tasks_executed, 7u);
    // The short path leaves bad explicit ids to submit's checks.
    pto2::RunResult bad = rt.run([&](const ChipStorageTaskArgs&) {
      Arg p;
      p.add_inout(ext1d(e));
      const PTO2TaskId none = PTO2TaskId::invalid();
      p.set_dependencies(&none, 1);
      rt_submit_aiv_task(2, p);
    });
    EXPECT_FALSE(bad.ok());
    EXPECT_NE(bad.message.find("PTO2TaskId::invalid()"), std::string::npos) << bad.message;
    pto2::RunResult future = rt.run([&](const ChipStorageTaskArgs&) {
      Arg p;
      p.add_inout(ext1d(e));
      const PTO2TaskId later{1u << 30};
      p.set_dependencies(&later, 1);
      rt_submit_aiv_task(2, p);
    });
    EXPECT_FALSE(future.ok());
    EXPECT_NE(future.message.find("never submitted"), std::string::npos) << future.message;
  }
}
