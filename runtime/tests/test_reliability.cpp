// Reliability (issue 15): bad launch sizes and predicate indices are refused, a run can be
// cancelled from another thread or a signal handler, a failed run leaves the runtime usable,
// and a long task loop runs in bounded memory.
#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <new>
#include <stdexcept>

#include "pto2_c_api.h"
#include "test_util.h"

namespace {

std::atomic<uint64_t> g_calls{0};
void k_count(PTO2KernelContext*) { g_calls.fetch_add(1, std::memory_order_relaxed); }
void k_sleep_1ms(PTO2KernelContext*) { std::this_thread::sleep_for(std::chrono::milliseconds(1)); }

int64_t rss_kib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::atoll(line.c_str() + 6);
  return -1;
}

}  // namespace

// core_num = -1 reaches the runtime as block_num 4294967295 (generated code converts to
// uint32): refused before anything runs, the runtime stays usable and destruction is quick.
TEST(Reliability, NegativeCoreNumIsRefused) {
  Watchdog wd(30);
  pto2::Runtime rt(workers(2));
  rt.register_kernel(0, "count", pto2::CoreType::AIV, &k_count);
  for (int64_t core_num : {int64_t(-1), int64_t(-5), int64_t(1) << 31, (int64_t(1) << 32) + 4}) {
    g_calls = 0;
    pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
      Arg a;
      a.launch_spec.set_block_num(core_num);  // checked at full width (2^32 + 4 is not 4)
      rt_submit_aiv_task(0, a);
    });
    EXPECT_FALSE(r.ok());
    EXPECT_NE(r.message.find("block_num"), std::string::npos) << r.message;
    EXPECT_EQ(g_calls.load(), 0u);
    // As generated code passes it today, already converted to uint32: -1 is still refused.
    if (core_num < 0) {
      pto2::RunResult r2 = rt.run([&](const ChipStorageTaskArgs&) {
        Arg a;
        a.launch_spec.set_block_num(static_cast<uint32_t>(core_num));
        rt_submit_aiv_task(0, a);
      });
      EXPECT_NE(r2.message.find("block_num"), std::string::npos) << r2.message;
    }
  }
  pto2::RunResult ok = rt.run([&](const ChipStorageTaskArgs&) {
    Arg a;
    a.launch_spec.set_block_num(3);
    rt_submit_aiv_task(0, a);
  });
  EXPECT_TRUE(ok.ok()) << ok.message;
  EXPECT_EQ(g_calls.load(), 3u);
}

TEST(Reliability, ZeroBlockNumIsRefused) {
  Watchdog wd(30);
  pto2::Runtime rt(workers(1));
  rt.register_kernel(0, "count", pto2::CoreType::AIV, &k_count);
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    Arg a;
    a.launch_spec.set_block_num(0);
    rt_submit_aiv_task(0, a);
  });
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.message.find("block_num (core_num) is 0: it must be >= 1"), std::string::npos) << r.message;
}

// A bare "orchestration entry threw: std::bad_alloc" named neither what grows nor what to do
// (race_check= over millions of tasks; tester F #21). The runtime stays usable.
TEST(Reliability, RunningOutOfMemorySaysSoAndNamesTheRecordings) {
  Watchdog wd(30);
  pto2::Runtime rt(workers(1));
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) { throw std::bad_alloc(); });
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.message.find("ran out of memory during the run"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("race_check="), std::string::npos) << r.message;
  EXPECT_TRUE(rt.run([&](const ChipStorageTaskArgs&) {}).ok());
}

TEST(Reliability, PredicateIndexIsRangeChecked) {
  Watchdog wd(30);
  pto2::Runtime rt(workers(1));
  rt.register_kernel(0, "count", pto2::CoreType::AIV, &k_count);
  std::vector<int32_t> flags(4, 1);
  for (int64_t idx : {int64_t(4), int64_t(-1), int64_t(1) << 40}) {
    g_calls = 0;
    pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
      Arg a;
      a.set_predicate(CoreTaskPredicate(ext1d(flags), {idx}, PredicateOp::NE, 0));
      rt_submit_aiv_task(0, a);
    });
    EXPECT_FALSE(r.ok());
    EXPECT_NE(r.message.find("out of range on axis 0 (extent 4)"), std::string::npos) << r.message;
    EXPECT_EQ(g_calls.load(), 0u);
  }
}

TEST(Reliability, OptionsOutOfRangeAreRefused) {
  EXPECT_THROW(pto2::Runtime(pto2::RuntimeOptions{}.task_ring_size(UINT32_MAX)), std::invalid_argument);
  EXPECT_THROW(pto2::Runtime(pto2::RuntimeOptions{}.aiv_workers(100000)), std::invalid_argument);
  EXPECT_THROW(pto2::Runtime(pto2::RuntimeOptions{}.aic_workers(UINT32_MAX)), std::invalid_argument);
}

// More clusters than AIC+AIV worker pairs were capped silently (4 on 1 AIC + 2 AIV workers ran
// 1); the constructor refuses them naming the numbers. min(aic, aiv) itself and 0 still build.
TEST(Reliability, ClustersAboveWorkerPairsAreRefused) {
  auto message = [](const pto2::RuntimeOptions& o) -> std::string {
    try {
      pto2::Runtime rt(o);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_EQ(message(pto2::RuntimeOptions{}.aic_workers(1).aiv_workers(2).clusters(4)),
            "RuntimeOptions: clusters 4 is more than min(aic_workers 1, aiv_workers 2) = 1 (a cluster pairs one AIC "
            "and one AIV worker); set clusters to at most 1 (0 = min(aic, aiv)) or add workers");
  EXPECT_NE(message(pto2::RuntimeOptions{}.aic_workers(0).aiv_workers(3).clusters(1)).find("= 0 (a cluster"),
            std::string::npos);
  EXPECT_EQ(message(pto2::RuntimeOptions{}.aic_workers(2).aiv_workers(3).clusters(2)), "accepted");
  EXPECT_EQ(message(pto2::RuntimeOptions{}.aic_workers(0).aiv_workers(3).clusters(0)), "accepted");
}

// A runaway orchestration (it never stops submitting) is stopped by cancel() from another
// thread within a second; the runtime then runs the next program normally.
TEST(Reliability, CancelStopsARunawayRun) {
  Watchdog wd(60);
  pto2::Runtime rt(workers(2));
  rt.register_kernel(0, "sleep", pto2::CoreType::AIV, &k_sleep_1ms);
  rt.register_kernel(1, "count", pto2::CoreType::AIV, &k_count);
  for (int round = 0; round < 3; ++round) {
    std::atomic<bool> started{false};
    pto2::RunResult r;
    std::thread runner([&] {
      r = rt.run([&](const ChipStorageTaskArgs&) {
        started = true;
        for (;;) {
          Arg a;
          rt_submit_aiv_task(0, a);
        }
      });
    });
    while (!started) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const auto t0 = std::chrono::steady_clock::now();
    rt.cancel();
    runner.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LT(s, 1.0);
    EXPECT_FALSE(r.ok());
    EXPECT_NE(r.message.find("cancelled"), std::string::npos) << r.message;
    g_calls = 0;
    pto2::RunResult ok = rt.run([&](const ChipStorageTaskArgs&) {
      for (int i = 0; i < 10; ++i) {
        Arg a;
        rt_submit_aiv_task(1, a);
      }
    });
    EXPECT_TRUE(ok.ok()) << ok.message;
    EXPECT_EQ(g_calls.load(), 10u);
  }
}

// A task with a huge block count is cancelled in one step, not block by block.
TEST(Reliability, CancelSkipsTheRemainingBlocksAtOnce) {
  Watchdog wd(60);
  pto2::Runtime rt(workers(2));
  rt.register_kernel(0, "sleep", pto2::CoreType::AIV, &k_sleep_1ms);
  pto2::RunResult r;
  std::thread runner([&] {
    r = rt.run([&](const ChipStorageTaskArgs&) {
      Arg a;
      a.launch_spec.set_block_num(2000000000);
      rt_submit_aiv_task(0, a);
    });
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto t0 = std::chrono::steady_clock::now();
  rt.cancel();
  runner.join();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.0);
  EXPECT_NE(r.message.find("cancelled"), std::string::npos) << r.message;
}

// Ctrl-C: the SIGINT hook cancels the run, then the replaced handler runs.
namespace {
std::atomic<int> g_previous_handler_calls{0};
void previous_handler(int) { g_previous_handler_calls.fetch_add(1); }
}  // namespace

TEST(Reliability, SigintHookCancelsTheRunAndChains) {
  Watchdog wd(60);
  struct sigaction old {};
  struct sigaction mine {};
  mine.sa_handler = &previous_handler;
  sigemptyset(&mine.sa_mask);
  ASSERT_EQ(sigaction(SIGINT, &mine, &old), 0);
  ASSERT_EQ(pto2_cancel_runs_on_sigint(1), 0);
  pto2::Runtime rt(workers(1));
  rt.register_kernel(0, "sleep", pto2::CoreType::AIV, &k_sleep_1ms);
  std::atomic<bool> started{false};
  std::thread killer([&] {
    while (!started) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::raise(SIGINT);  // delivered to this thread: the handler cancels every run
  });
  const auto t0 = std::chrono::steady_clock::now();
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    started = true;
    for (;;) {
      Arg a;
      rt_submit_aiv_task(0, a);
    }
  });
  killer.join();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.0);
  EXPECT_NE(r.message.find("cancelled"), std::string::npos) << r.message;
  EXPECT_EQ(g_previous_handler_calls.load(), 1);
  EXPECT_EQ(pto2_cancel_runs_on_sigint(0), 0);
  sigaction(SIGINT, &old, nullptr);
}

// 10^6 tasks (a chain of in-place updates plus runtime-allocated intermediates) run with the
// resident set growing by less than 64 MiB.
TEST(Reliability, MillionTaskLoopRunsInBoundedMemory) {
  Watchdog wd(300);
  pto2::Runtime rt(workers(1));
  register_std(rt);
  std::vector<float> x(16, 0);
  const int n = scaled(1000000);
  const int64_t before = rss_kib();
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    uint32_t sh[1] = {16};
    for (int i = 0; i < n; i += 2) {
      PTO2_SCOPE() {
        Arg a;
        a.add_output(TensorCreateInfo(sh, 1, DataType::FLOAT32));
        a.add_scalar(1);
        rt_submit_aiv_task(0, a);  // fill a runtime-allocated tensor
        Arg b;
        b.add_inout(ext1d(x));
        rt_submit_aiv_task(2, b);  // x += 1
      }
    }
  });
  const int64_t after = rss_kib();
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.tasks_submitted, static_cast<uint64_t>((n + 1) / 2 * 2));
  EXPECT_EQ(x[0], static_cast<float>((n + 1) / 2));
  EXPECT_LT(after - before, 64 * 1024) << "RSS grew from " << before << " KiB to " << after << " KiB";
}

// A kernel failing in one block of a task with two billion blocks: the run fails at once (the
// unstarted blocks are cancelled together, not one by one) and the runtime stays usable.
namespace {
void k_fail_block_3(PTO2KernelContext* ctx) {
  if (ctx->block_idx == 3) ctx->fail("block 3 is bad");
}
}  // namespace

TEST(Reliability, FailedHugeSpmdTaskEndsQuicklyAndLeavesTheRuntimeUsable) {
  Watchdog wd(60);
  pto2::Runtime rt(workers(2));
  rt.register_kernel(0, "fail_block_3", pto2::CoreType::AIV, &k_fail_block_3);
  rt.register_kernel(1, "count", pto2::CoreType::AIV, &k_count);
  const auto t0 = std::chrono::steady_clock::now();
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    Arg a;
    a.launch_spec.set_block_num(2000000000);
    rt_submit_aiv_task(0, a);
  });
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
  EXPECT_NE(r.message.find("block 3 is bad"), std::string::npos) << r.message;
  g_calls = 0;
  pto2::RunResult ok = rt.run([&](const ChipStorageTaskArgs&) {
    Arg a;
    rt_submit_aiv_task(1, a);
  });
  EXPECT_TRUE(ok.ok()) << ok.message;
  EXPECT_EQ(g_calls.load(), 1u);
}

// Workers park between runs (spin_us 1); a run after one that queued tasks wakes them before its
// first submission, a run after an empty or all-undeferred one does not. Every kind of run
// after every kind, each after the workers parked: each completes with every task run and
// counted, none waits for a lost wake-up (the watchdog would end the test).
TEST(Reliability, RunsAfterParkedWorkersComplete) {
  Watchdog wd(60);
  pto2::Runtime rt(pto2::RuntimeOptions{}.aic_workers(1).aiv_workers(2).spin_us(1).inline_below_ns(0).help_threshold(100000));
  register_std(rt);
  std::vector<float> v(1, 0.f);
  const int kChain = 40;
  auto chain = [&](const ChipStorageTaskArgs&) {  // queued: each inc waits for the previous one
    for (int i = 0; i < kChain; ++i) {
      Arg p;
      p.add_inout(ext1d(v));
      rt_submit_aiv_task(2, p);
    }
  };
  auto empty = [](const ChipStorageTaskArgs&) {};
  for (int round = 0; round < 30; ++round) {
    const bool queued = round % 3 != 1;  // queued, empty, queued: both transitions each way
    sleep_ms(2);                          // the workers park
    v[0] = 0.f;
    pto2::RunResult r = queued ? rt.run(chain) : rt.run(empty);
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_EQ(r.tasks_executed, queued ? uint64_t(kChain) : 0u) << round;
    if (queued) {
      EXPECT_EQ(v[0], static_cast<float>(kChain)) << round;
    }
  }
}

// A cancellation is the run's first event, whatever it makes fail afterwards: the AIV side of a
// mixed task waits on a group flag the AIC side never sets before the run is cancelled, so the
// wait gives up ("the run failed while waiting") — the run must still say it was cancelled
// (found by ApiFuzz.CancelAtRandomMoments: the wait's failure was the run's message).
namespace {
std::atomic<bool> g_waiting{false};
void k_hold_until_cancelled(PTO2KernelContext* ctx) {  // AIC: signals only after the cancellation
  while (!g_waiting.load()) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  pto2_group_signal(ctx, 0);
}
void k_wait_flag0(PTO2KernelContext* ctx) {
  g_waiting = true;
  if (!pto2_group_wait(ctx, 0)) return;
}
}  // namespace

TEST(Reliability, CancelIsTheMessageEvenWhenAGroupWaitGivesUp) {
  Watchdog wd(60);
  pto2::Runtime rt(workers(1));
  rt.register_kernel(0, "hold", pto2::CoreType::AIC, &k_hold_until_cancelled);
  rt.register_kernel(1, "wait", pto2::CoreType::AIV, &k_wait_flag0);
  g_waiting = false;
  pto2::RunResult r;
  std::thread runner([&] {
    r = rt.run([&](const ChipStorageTaskArgs&) {
      Arg a;
      rt_submit_task(MixedKernels{0, 1, INVALID_KERNEL_ID}, a);
    });
  });
  while (!g_waiting.load()) std::this_thread::yield();
  rt.cancel();
  runner.join();
  EXPECT_EQ(r.message.rfind("cancelled:", 0), 0u) << r.message;
}
