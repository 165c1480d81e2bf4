// Where the workers may run while the orchestrating thread runs tasks too: the CPUs they started
// with less the orchestrator's (cpus_away_from), set by the orchestrator as a run starts and
// whenever it finds itself on another CPU (WorkerPool::keep_workers_off). The benchmarks
// benchmarks/worker_wakeups.py and kernel_bench's GEMM case show what it changes.
#include <gtest/gtest.h>

#include <dirent.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <initializer_list>
#include <set>

#include "../src/worker_pool.h"
#include "test_util.h"

namespace {
cpu_set_t cpus(std::initializer_list<int> ids) {
  cpu_set_t s;
  CPU_ZERO(&s);
  for (int id : ids) CPU_SET(id, &s);
  return s;
}

// The ids of this process's threads.
std::set<int> threads_now() {
  std::set<int> out;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') out.insert(std::atoi(e->d_name));
    closedir(d);
  }
  return out;
}

std::atomic<int> g_ran{0};

// A runtime with one AIV worker and kernel 7 counting its calls (g_ran).
pto2::RuntimeOptions one_worker() { return pto2::RuntimeOptions{}.aic_workers(0).aiv_workers(1).inline_below_ns(0); }
void register_counter(pto2::Runtime& rt) {
  rt.register_kernel(7, "k", pto2::CoreType::AIV, [](PTO2KernelContext*) { g_ran.fetch_add(1); });
}

// One run of eight tasks: every one of them ran.
void run_eight_tasks(pto2::Runtime& rt) {
  g_ran.store(0);
  pto2::RunResult res = rt.run([&](const ChipStorageTaskArgs&) {
    for (int i = 0; i < 8; ++i) {
      Arg p;
      rt_submit_aiv_task(7, p);
    }
  });
  ASSERT_TRUE(res.ok()) << res.message;
  EXPECT_EQ(g_ran.load(), 8);
}

void pin_this_thread(int cpu) {
  cpu_set_t one = cpus({cpu});
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
}
}  // namespace

using pto2::detail::cpus_away_from;

TEST(WorkerPlacement, TheOrchestratorsCpuIsTakenOut) {
  cpu_set_t out = cpus({});
  ASSERT_TRUE(cpus_away_from(0, cpus({0, 1}), &out));
  const cpu_set_t one = cpus({1});
  EXPECT_TRUE(CPU_EQUAL(&out, &one));
  ASSERT_TRUE(cpus_away_from(5, cpus({2, 5, 7, 63}), &out));
  const cpu_set_t three = cpus({2, 7, 63});
  EXPECT_TRUE(CPU_EQUAL(&out, &three));
}

TEST(WorkerPlacement, NoCpuToKeepFreeLeavesEveryCpu) {
  const cpu_set_t both = cpus({0, 1});
  for (int orch : {-1, 2, CPU_SETSIZE}) {   // not helping, not one of theirs, out of range
    cpu_set_t out = cpus({3});
    EXPECT_FALSE(cpus_away_from(orch, both, &out));
    EXPECT_TRUE(CPU_EQUAL(&out, &both)) << orch;
  }
  cpu_set_t out = cpus({3});
  const cpu_set_t only = cpus({0});
  EXPECT_FALSE(cpus_away_from(0, only, &out));   // the only CPU they may use
  EXPECT_TRUE(CPU_EQUAL(&out, &only));
}

// The orchestrating thread moves from one CPU to another between runs: each run, its worker may
// use every CPU but the orchestrator's current one. (A worker that had moved itself off the first
// CPU and stayed on the second was stuck behind the orchestrator once it moved there.)
TEST(WorkerPlacement, TheWorkersFollowTheOrchestratorAcrossRuns) {
  cpu_set_t mine;
  ASSERT_EQ(sched_getaffinity(0, sizeof mine, &mine), 0);
  if (CPU_COUNT(&mine) < 2) GTEST_SKIP() << "needs two CPUs";
  int first = -1, second = -1;
  for (int c = 0; c < CPU_SETSIZE && second < 0; ++c)
    if (CPU_ISSET(c, &mine)) (first < 0 ? first : second) = c;
  const std::set<int> before = threads_now();
  {
    pto2::Runtime rt(one_worker());
    register_counter(rt);
    std::set<int> workers;
    for (int t : threads_now())
      if (!before.count(t)) workers.insert(t);
    ASSERT_FALSE(workers.empty());
    for (int r = 0; r < 6; ++r) {
      const int orch = r % 2 ? second : first;
      pin_this_thread(orch);
      run_eight_tasks(rt);
      cpu_set_t want;
      cpus_away_from(orch, mine, &want);
      for (int t : workers) {
        cpu_set_t got = cpus({});   // the system call fills only the kernel's mask size
        ASSERT_GT(syscall(SYS_sched_getaffinity, t, sizeof got, &got), 0);
        EXPECT_TRUE(CPU_EQUAL(&got, &want)) << "run " << r << ": the worker may run on the orchestrator's CPU " << orch;
      }
    }
  }
  sched_setaffinity(0, sizeof mine, &mine);
}

// An orchestrator that does not run tasks (orchestrator_helps(false)) sleeps while it waits: its
// CPU is free, and the workers keep every CPU they started with.
TEST(WorkerPlacement, AnOrchestratorThatDoesNotHelpLeavesEveryCpu) {
  cpu_set_t mine;
  ASSERT_EQ(sched_getaffinity(0, sizeof mine, &mine), 0);
  if (CPU_COUNT(&mine) < 2) GTEST_SKIP() << "needs two CPUs";
  int first = 0;
  while (!CPU_ISSET(first, &mine)) ++first;
  const std::set<int> before = threads_now();
  {
    pto2::Runtime rt(one_worker().orchestrator_helps(false));
    register_counter(rt);
    pin_this_thread(first);
    run_eight_tasks(rt);
    for (int t : threads_now()) {
      if (before.count(t)) continue;
      cpu_set_t got = cpus({});
      ASSERT_GT(syscall(SYS_sched_getaffinity, t, sizeof got, &got), 0);
      EXPECT_TRUE(CPU_EQUAL(&got, &mine)) << "thread " << t;
    }
  }
  sched_setaffinity(0, sizeof mine, &mine);
}

// Runs after the worker parked: whatever CPU it wakes on, every task of every run runs.
TEST(WorkerPlacement, RunsAfterParkingStillRunEveryTask) {
  pto2::Runtime rt(one_worker().spin_us(1));
  register_counter(rt);
  for (int r = 0; r < 20; ++r) {
    run_eight_tasks(rt);
    sched_yield();
  }
}
