// Failures stop the run with a clear message naming the task and kernel; never hang.
#include <gtest/gtest.h>

#include <stdexcept>

#include "test_util.h"

static void k_throw(PTO2KernelContext*) { throw std::runtime_error("boom"); }
static void k_fail(PTO2KernelContext* ctx) { ctx->fail("bad tile"); }

TEST(Failures, KernelThrowNamesTaskAndKernel) {
  for (uint32_t w = 1; w <= 4; ++w) {
    Watchdog wd(30);
    pto2::Runtime rt(workers(w));
    register_std(rt);
    rt.register_kernel(7, "exploding_kernel", pto2::CoreType::AIV, &k_throw);
    std::vector<float> x(4, 0);
    pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
      for (int i = 0; i < 1000; ++i) {
        Arg p;
        p.add_inout(ext1d(x));
        rt_submit_aiv_task(i == 10 ? 7 : 2, p);
      }
    });
    EXPECT_FALSE(r.ok());
    EXPECT_NE(r.message.find("exploding_kernel"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("boom"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("task #"), std::string::npos) << r.message;
    // the runtime is reusable afterwards
    pto2::RunResult ok = rt.run([&](const ChipStorageTaskArgs&) { submit_fill(ext1d(x), 3, 0); });
    EXPECT_TRUE(ok.ok()) << ok.message;
    EXPECT_EQ(x[0], 3.f);
  }
}

TEST(Failures, KernelFailMessage) {
  Watchdog wd(30);
  pto2::Runtime rt(workers(2));
  rt.register_kernel(5, "checker", pto2::CoreType::AIC, &k_fail);
  pto2::RunResult r = rt.run([](const ChipStorageTaskArgs&) {
    Arg p;
    rt_submit_aic_task(5, p);
  });
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.message.find("checker"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("bad tile"), std::string::npos) << r.message;
}

TEST(Failures, AutoInsideManualIsMisuse) {
  Watchdog wd(30);
  pto2::Runtime rt(workers(1));
  register_std(rt);
  pto2::RunResult r = rt.run([](const ChipStorageTaskArgs&) {
    PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
      PTO2_SCOPE() {
        Arg p;
        rt_submit_aiv_task(3, p);
      }
    }
  });
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.message.find("AUTO"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("MANUAL"), std::string::npos) << r.message;
}

TEST(Failures, UnknownKernelId) {
  Watchdog wd(30);
  pto2::Runtime rt(workers(1));
  register_std(rt);
  pto2::RunResult r = rt.run([](const ChipStorageTaskArgs&) {
    Arg p;
    rt_submit_aiv_task(4242, p);
  });
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.message.find("unknown kernel id 4242"), std::string::npos) << r.message;
}

TEST(Failures, EntryExceptionAndRemainingTasksDrain) {
  Watchdog wd(30);
  pto2::Runtime rt(workers(2));
  register_std(rt);
  std::vector<float> x(4, 0);
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs& a) {
    for (int i = 0; i < 100; ++i) submit_fill(ext1d(x), 1, 1);
    (void)a.tensor(3);  // out of range -> std::out_of_range
  });
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.message.find("tensor(3)"), std::string::npos) << r.message;
}

TEST(Failures, NoWorkersOfTypeFails) {
  Watchdog wd(30);
  pto2::Runtime rt(pto2::RuntimeOptions{}.aic_workers(0).aiv_workers(1));
  register_std(rt);
  pto2::RunResult r = rt.run([](const ChipStorageTaskArgs&) {
    Arg p;
    rt_submit_aic_task(13, p);
  });
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.message.find("no AIC workers"), std::string::npos) << r.message;
}

// Task ids count on across the runs of a runtime; messages number a run's tasks from 1, so the
// fourth run of a 5-task program names its third task #3 (it said #18).
TEST(Failures, TaskNumbersInMessagesCountFromOneInEachRun) {
  Watchdog wd(30);
  pto2::Runtime rt(workers(2));
  register_std(rt);
  rt.register_kernel(7, "exploding_kernel", pto2::CoreType::AIV, &k_throw);
  std::vector<float> x(4, 0);
  auto run = [&](bool explode) {
    return rt.run([&](const ChipStorageTaskArgs&) {
      for (int i = 0; i < 5; ++i) {
        Arg p;
        p.add_inout(ext1d(x));
        rt_submit_aiv_task(explode && i == 2 ? 7 : 2, p);
      }
    });
  };
  for (int k = 0; k < 3; ++k) ASSERT_TRUE(run(false).ok());
  pto2::RunResult r = run(true);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.message.find("task #3 (AIV kernel 'exploding_kernel'"), std::string::npos) << r.message;
}
