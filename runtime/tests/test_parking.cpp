// Parking and waking workers: a push checks for parked workers after claiming its queue cell (a
// full barrier), a worker about to park announces itself and then looks at every queue again
// (WorkerPool::push_to / wait_for_task). A lost wake-up leaves a task queued until the parked
// worker's futex timeout (200 ms).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include <time.h>

#include "../src/util.h"
#include "test_util.h"

namespace {
std::atomic<uint64_t> g_runs{0};
void k_count(PTO2KernelContext*) { g_runs.fetch_add(1, std::memory_order_release); }

int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// This thread's CPU time. The orchestration spins while it waits for a task to run, so its CPU
// time grows as long as it is scheduled: a wait that long in CPU time means the worker was
// asleep while this thread ran (a lost wake-up), not that the machine was busy (another
// process's real-time threads can hold both cores for a second: wall time cannot tell).
int64_t cpu_us() {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}
}  // namespace

// One worker, spin 1 us: the orchestrator submits a task, waits (spinning in the orchestration,
// so it never runs the task itself) until the worker has run it, waits 0-63 us more, and
// submits the next one: each push lands somewhere in the worker's spin, its parking sequence
// (announce, look again, sleep) or its sleep. A lost wake-up leaves the task queued
// until the parked worker's futex timeout (200 ms): no task may wait 150 ms of the spinning
// orchestrator's CPU time.
TEST(Parking, WorkerParkedAndWokenHundredThousandTimes) {
  const uint64_t n = static_cast<uint64_t>(scaled(100000));
  Watchdog wd(300);
  pto2::Runtime rt(pto2::RuntimeOptions{}.aic_workers(0).aiv_workers(1).spin_us(1).inline_below_ns(0).help_threshold(100000));
  rt.register_kernel(80, "count", pto2::CoreType::AIV, &k_count);
  g_runs.store(0);
  uint64_t slow = 0;
  int64_t worst_us = 0;
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    for (uint64_t i = 0; i < n; ++i) {
      Arg p;
      const int64_t t0 = now_us(), c0 = cpu_us();
      rt_submit_aiv_task(80, p);
      while (g_runs.load(std::memory_order_acquire) <= i) pto2::detail::cpu_relax();
      worst_us = std::max(worst_us, now_us() - t0);
      if (cpu_us() - c0 >= 150000) ++slow;
      const int64_t gap_end = now_us() + static_cast<int64_t>((i * 7919) % 64);
      while (now_us() < gap_end) pto2::detail::cpu_relax();
    }
  });
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.tasks_executed, n);
  EXPECT_EQ(r.tasks_undeferred, 0u);
  EXPECT_EQ(slow, 0u) << "tasks waited >= 150 ms (this thread's CPU time) for the parked worker: lost wake-ups; worst wall-clock wait " << worst_us << " us";
}

// The same with two workers of the type and tasks submitted in pairs: one worker may be
// spinning while the other parks (a push then wakes nobody: the spinner must find the task, or
// see it when it parks in turn).
TEST(Parking, TwoWorkersParkAndWakeAroundPairsOfTasks) {
  const uint64_t n = static_cast<uint64_t>(scaled(40000));
  Watchdog wd(300);
  pto2::Runtime rt(pto2::RuntimeOptions{}.aic_workers(0).aiv_workers(2).spin_us(1).inline_below_ns(0).help_threshold(100000));
  rt.register_kernel(80, "count", pto2::CoreType::AIV, &k_count);
  g_runs.store(0);
  uint64_t slow = 0;
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    for (uint64_t i = 0; i < n; i += 2) {
      Arg p;
      const int64_t c0 = cpu_us();
      rt_submit_aiv_task(80, p);
      rt_submit_aiv_task(80, p);
      while (g_runs.load(std::memory_order_acquire) < i + 2) pto2::detail::cpu_relax();
      if (cpu_us() - c0 >= 150000) ++slow;
      const int64_t gap_end = now_us() + static_cast<int64_t>((i * 7919) % 64);
      while (now_us() < gap_end) pto2::detail::cpu_relax();
    }
  });
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.tasks_executed, n);
  EXPECT_EQ(slow, 0u) << "pairs waited >= 150 ms (this thread's CPU time) for a parked worker: lost wake-ups";
}

namespace {
// CPU time of the whole process (every thread), in seconds.
double process_cpu_s() {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}
}  // namespace

// Far more workers than CPUs (a big chip modelled on a small machine): only one worker per CPU
// spins for work, the others park at once, a run wakes only those, and a parked worker's
// safety-net timeout grows with the workers per spinner. Before, every worker spun and polled
// every queue of its type whenever it ran dry, at every run's start and every 200 ms while
// parked: 512 workers burned ~0.25 CPU-s per idle second and 1,024 made each run of 16 tasks
// cost ~75 ms of CPU (2,048: 1 s). Measured in process CPU time, which another process's load
// does not inflate; the bounds are ~20x above what the parked pool costs.
TEST(Parking, HundredsOfWorkersPerCpuStayCheap) {
  Watchdog wd(300);
  const uint32_t workers = 512;
  pto2::Runtime rt(pto2::RuntimeOptions{}.aic_workers(0).aiv_workers(workers).inline_below_ns(0));
  rt.register_kernel(80, "count", pto2::CoreType::AIV, &k_count);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // every worker started and parked
  g_runs.store(0);
  const int runs = 40, tasks = 16;
  const double c0 = process_cpu_s();
  for (int r = 0; r < runs; ++r) {
    pto2::RunResult res = rt.run([&](const ChipStorageTaskArgs&) {
      PTO2TaskId prev{};
      for (int i = 0; i < tasks; ++i) {
        Arg p;
        if (i % 2 == 1) p.set_dependencies(&prev, 1);  // independent tasks and dependent pairs
        prev = rt_submit_aiv_task(80, p).task_id();
      }
    });
    ASSERT_TRUE(res.ok()) << res.message;
    ASSERT_EQ(res.tasks_executed + res.tasks_undeferred, static_cast<uint64_t>(tasks));
  }
  const double c1 = process_cpu_s();
  // The idle window starts once the workers' brief spin after the last run is over (on a loaded
  // machine, or under TSan, 512 spinning threads take a while to all reach their park): it
  // measures parked workers only. Workers that never parked would cost ~1 CPU-second here.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const double c_idle = process_cpu_s();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const double c2 = process_cpu_s();
  EXPECT_EQ(g_runs.load(), static_cast<uint64_t>(runs * tasks));
  EXPECT_LT(c1 - c0, 1.0) << runs << " runs of " << tasks << " tasks with " << workers << " workers: CPU seconds";
  EXPECT_LT(c2 - c_idle, 0.05) << "0.5 s idle with " << workers << " parked workers: CPU seconds";
}
