// Calls from threads other than a run's orchestrator, and from inside a run (found by
// ApiFuzz.CallsFromSeveralThreads): what the headers say is "not during a run" is refused with a
// message naming the call; orchestration functions in a kernel are refused wherever the kernel
// runs (on a worker, or undeferred on the orchestrator thread); a run of a Runtime from inside
// its own run is refused instead of waiting for itself.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

namespace {

// The four "between runs" calls, from the entry and from a thread it starts: all refused; the
// run is unharmed.
TEST(Threads, ConfigurationDuringARunIsRefused) {
  Watchdog wd(60);
  pto2::Runtime rt(workers(1));
  register_std(rt);
  std::vector<float> x(4, 0.f);
  std::vector<std::string> got;
  auto misuse_all = [&] {
    got.push_back(message_of([&] { rt.register_kernel(5, "late", pto2::CoreType::AIV, &k_inc); }));
    got.push_back(message_of([&] { rt.set_race_check(pto2::RaceCheck::Warn); }));
    std::string e1, e2;
    EXPECT_FALSE(rt.write_trace("/tmp/pto2_threads_trace.json", &e1));
    EXPECT_FALSE(rt.write_graph("/tmp/pto2_threads_graph.dot", &e2));
    got.push_back(e1);
    got.push_back(e2);
  };
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    submit_fill(ext1d(x), 3.f);
    misuse_all();
    std::thread t(misuse_all);
    t.join();
    submit_add(ext1d(x), ext1d(x), 1.f);
  });
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(x[3], 4.f);
  const char* calls[] = {"register_kernel", "set_race_check", "write_trace", "write_graph"};
  ASSERT_EQ(got.size(), 8u);
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_EQ(got[i], std::string(calls[i % 4]) +
                          ": a run of this Runtime is in progress (called from its orchestration entry, a kernel or "
                          "another thread); call it between runs");
  rt.register_kernel(5, "late", pto2::CoreType::AIV, &k_inc);  // between runs: fine
}

std::string g_kernel_saw;
void k_submits(PTO2KernelContext*) {
  g_kernel_saw = message_of([] {
    Arg a;
    rt_submit_dummy_task(a);
  });
}
void k_reads(PTO2KernelContext* ctx) {
  g_kernel_saw = message_of([ctx] {
    const int64_t idx[1] = {0};
    (void)get_tensor_data<float>(ctx->tensors[0], 1, idx);
  });
}

// A kernel's orchestration call on a worker is refused saying so (it said "called outside a run",
// and get_tensor_data read without waiting). (Undeferred on the orchestrator thread's short path
// it is not detected: docs/runtime.md, "Threads".)
TEST(Threads, OrchestrationCallsInAKernelAreRefused) {
  {
    for (auto fn : {&k_submits, &k_reads}) {
      Watchdog wd(60);
      pto2::Runtime rt(workers(1).inline_below_ns(0).orchestrator_helps(false));
      rt.register_kernel(0, "misuses", pto2::CoreType::AIV, fn);
      std::vector<float> x(4, 0.f);
      for (int rep = 0; rep < 3; ++rep) {  // the first run measures the kernel
        g_kernel_saw.clear();
        pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
          Arg a;
          a.add_input(ext1d(x));
          rt_submit_aiv_task(0, a);
        });
        ASSERT_TRUE(r.ok()) << r.message;
        const std::string call = fn == &k_submits ? "rt_submit_dummy_task" : "pto2_wait_for_element (get_tensor_data)";
        EXPECT_EQ(g_kernel_saw.find(call + " called from a kernel: orchestration functions run only in the orchestration "
                                           "entry"), 0u)
            << g_kernel_saw;
      }
    }
  }
}

// get/set_tensor_data on a thread the entry started would not wait for the run's tasks: refused.
TEST(Threads, TensorDataOnAnotherThreadDuringARunIsRefused) {
  Watchdog wd(60);
  pto2::Runtime rt(workers(1));
  register_std(rt);
  std::vector<float> x(4, 0.f);
  std::string get_msg, set_msg;
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    Tensor t = ext1d(x);
    submit_fill(t, 3.f, 20);
    std::thread th([&] {
      const int64_t idx[1] = {1};
      get_msg = message_of([&] { (void)get_tensor_data<float>(t, 1, idx); });
      set_msg = message_of([&] { set_tensor_data<float>(t, 1, idx, 1.f); });
    });
    th.join();
  });
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(get_msg.find("get_tensor_data (pto2_wait_for_element) called on a thread that is not the orchestrator of "
                         "the run in progress"), 0u) << get_msg;
  EXPECT_EQ(set_msg.find("set_tensor_data (pto2_wait_for_element) called on a thread that is not the orchestrator"), 0u)
      << set_msg;
  EXPECT_EQ(x[1], 3.f);
  const int64_t idx[1] = {1};
  EXPECT_EQ(get_tensor_data<float>(ext1d(x), 1, idx), 3.f);  // after the run: allowed again
}

pto2::Runtime* g_rt = nullptr;
std::string g_nested;
void k_runs_own_runtime(PTO2KernelContext*) { g_nested = g_rt->run([](const ChipStorageTaskArgs&) {}).message; }

// A run of the same Runtime from its entry or from one of its kernels would wait for itself
// forever (it hung): refused. A run of another Runtime from an entry works.
TEST(Threads, RunOfTheSameRuntimeInsideItsRunIsRefused) {
  Watchdog wd(60);
  for (uint32_t inline_ns : {0u, 1000000000u}) {
    pto2::Runtime rt(workers(1).inline_below_ns(inline_ns));
    g_rt = &rt;
    rt.register_kernel(0, "runs_own_runtime", pto2::CoreType::AIV, &k_runs_own_runtime);
    std::string from_entry;
    for (int rep = 0; rep < 2; ++rep) {
      g_nested.clear();
      pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
        from_entry = rt.run([](const ChipStorageTaskArgs&) {}).message;
        Arg a;
        rt_submit_aiv_task(0, a);
        pto2::Runtime other(workers(1));
        EXPECT_TRUE(other.run([](const ChipStorageTaskArgs&) {}).ok());
      });
      ASSERT_TRUE(r.ok()) << r.message;
      const std::string refused = "Runtime::run: called inside a run of this Runtime (from its orchestration entry or a "
                                  "kernel): it would wait for itself";
      EXPECT_EQ(from_entry.find(refused), 0u) << from_entry;
      EXPECT_EQ(g_nested.find(refused), 0u) << g_nested;
    }
    g_rt = nullptr;
  }
}

}  // namespace
