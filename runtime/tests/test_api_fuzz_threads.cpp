// The API fuzzer's thread part: libpto2 called from several threads, and from the wrong ones.
// What the headers promise, checked call by call:
//   - Runtime::run from several threads at once: serialized, each run computes its own values
//     (pto2/runtime.h); pto2_run from several threads: independent runtimes (pto2_c_api.h);
//   - the orchestration functions (rt_submit_*, alloc_tensors, PTO2ScopeGuard,
//     get/set_tensor_data, pto2_wait_for_element) on a thread that is not the run's orchestrator
//     — one the entry started, or a kernel's on a worker — throw std::logic_error naming the call
//     (pto2/orchestration.h); in a kernel that fails the run with that message (a kernel the
//     orchestrator thread runs itself, undeferred or helping, is not checked: documented, and
//     its get/set_tensor_data may wait for its own task: not fuzzed there);
//   - Runtime::register_kernel / set_race_check ("not during a run") and write_trace /
//     write_graph while a run is in progress — from the entry, from another thread, from a kernel:
//     refused with a message naming the call, the run unharmed;
//   - Runtime::run of the same Runtime from inside its own run (its entry or a kernel): refused;
//     a run of another Runtime from inside an entry: works, and the outer run goes on.
// Every run must return (the per-case watchdog names a hang) and compute the right values when it
// succeeds; the Runtime stays usable.
// PTO2_API_FUZZ_SEED / PTO2_API_FUZZ_CASES (cases / 5 here, at least 10) / PTO2_API_FUZZ_CASE as
// for ApiFuzz.RandomCallSequences.
#include <gtest/gtest.h>

#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "api_fuzz_driver.h"
#include "pto2_c_api.h"
#include "test_util.h"

namespace {

void k_add1(PTO2KernelContext* ctx) {  // t0 (inout, int32) += 1 everywhere
  const Tensor& t = ctx->tensors[0];
  int32_t* base = static_cast<int32_t*>(t.data);
  for_each_element(t, [&](int64_t off) { base[off] += 1; });
}

// What a misbehaving call does, wherever it is made. Returns the exception's message, or
// "returned" when the call went through.
enum Misuse : uint32_t {
  kSubmit, kDummy, kAlloc, kScope, kGet, kSet, kWaitElem, kRegister, kRaceCheck, kTrace, kGraph, kOwnRun, kMisuses
};
const char* const kMisuseNames[kMisuses] = {"rt_submit_aiv_task", "rt_submit_dummy_task", "alloc_tensors",
                                            "PTO2ScopeGuard", "get_tensor_data", "set_tensor_data",
                                            "pto2_wait_for_element", "register_kernel", "set_race_check",
                                            "write_trace", "write_graph", "run"};
// The words a refusal's message may use to name the call.
const char* const kCallWords[] = {"rt_submit_aiv_task", "rt_submit_dummy_task", "pto2_alloc_tensors", "alloc_tensors",
                                  "PTO2ScopeGuard", "scope", "get_tensor_data", "set_tensor_data",
                                  "pto2_wait_for_element", "register_kernel", "set_race_check", "write_trace",
                                  "write_graph", "the trace", "task graph", "Runtime::run"};

struct Shared {  // what a misuse acts on
  pto2::Runtime* rt = nullptr;
  Tensor* t = nullptr;
  std::string path;
};
Shared g_shared;  // kernels reach it here (a kernel is a plain function)

std::string misuse(Misuse m, const Shared& sh) {
  try {
    const int64_t idx[1] = {0};
    switch (m) {
      case kSubmit: {
        Arg a;
        a.add_inout(*sh.t);
        rt_submit_aiv_task(0, a);
        break;
      }
      case kDummy: {
        Arg a;
        rt_submit_dummy_task(a);
        break;
      }
      case kAlloc: {
        uint32_t s[1] = {4};
        TensorCreateInfo ci(s, 1, DataType::INT32);
        alloc_tensors(ci);
        break;
      }
      case kScope: {
        PTO2ScopeGuard g(PTO2ScopeMode::MANUAL);
        break;
      }
      case kGet: (void)get_tensor_data<int32_t>(*sh.t, 1, idx); break;
      case kSet: set_tensor_data<int32_t>(*sh.t, 1, idx, 0); break;  // (0: its value before any task)
      case kWaitElem: pto2_wait_for_element(*sh.t, 1, idx); break;
      case kRegister: sh.rt->register_kernel(0, "add1", pto2::CoreType::AIV, &k_add1); break;
      case kRaceCheck: sh.rt->set_race_check(pto2::RaceCheck::Off); break;
      case kTrace: {
        std::string err;
        if (!sh.rt->write_trace(sh.path, &err)) return err.empty() ? "write_trace: false without a reason" : err;
        break;
      }
      case kGraph: {
        std::string err;
        if (!sh.rt->write_graph(sh.path, &err)) return err.empty() ? "write_graph: false without a reason" : err;
        break;
      }
      case kOwnRun: {
        pto2::RunResult r = sh.rt->run([](const ChipStorageTaskArgs&) {});
        if (!r.ok()) return r.message;
        break;
      }
      case kMisuses: break;
    }
  } catch (const std::exception& e) {
    return e.what();
  }
  return "returned";
}

// Kernel 1: performs misuse scalar 0 (on g_shared) and fails with the outcome, so that the run's
// message shows it; "returned" fails too (the oracle tells).
void k_misuse(PTO2KernelContext* ctx) {
  const std::string what = misuse(static_cast<Misuse>(ctx->scalars[0]), g_shared);
  ctx->fail(("misuse in a kernel: " + what).c_str());
}

struct Rng {
  std::mt19937_64 g;
  explicit Rng(uint64_t seed) : g(seed) {}
  uint32_t below(uint32_t n) { return n ? static_cast<uint32_t>(g() % n) : 0; }
  bool chance(uint32_t one_in) { return below(one_in) == 0; }
};

class ThreadCase {
 public:
  ThreadCase(uint64_t seed, uint64_t index) : rng_(seed * 1000003u + index + 901), seed_(seed), index_(index) {}

  void run() {
    pto2::RuntimeOptions o;
    o.aic_workers(rng_.below(2)).aiv_workers(1 + rng_.below(2)).deadlock_timeout_ms(2000);
    if (rng_.chance(2)) o.inline_below_ns(0);  // else tiny kernels run undeferred on the orchestrator
    if (rng_.chance(2)) o.orchestrator_helps(false);
    if (rng_.chance(4)) o.trace(true);
    if (rng_.chance(4)) o.race_check(pto2::RaceCheck::Warn);
    pto2::Runtime rt(o);
    rt_ = &rt;
    rt.register_kernel(0, "add1", pto2::CoreType::AIV, &k_add1).register_kernel(1, "misuse", pto2::CoreType::AIV, &k_misuse);
    path_ = "/tmp/pto2_api_fuzz_threads_" + std::to_string(getpid()) + ".out";
    const uint32_t steps = 1 + rng_.below(4);
    for (uint32_t s = 0; s < steps && !::testing::Test::HasFailure(); ++s) {
      switch (rng_.below(5)) {
        case 0: concurrent_runs(); break;
        case 1: concurrent_c_runs(); break;
        case 2: misuse_in_run(); break;
        case 3: misuse_in_kernel(); break;
        default: nested_other_runtime(); break;
      }
    }
    if (!::testing::Test::HasFailure()) check_plain_run("the end");
    std::remove(path_.c_str());
    rt_ = nullptr;
  }

 private:
  // Runs of `tasks` add1 tasks on buffer `v`, with a read back in the entry.
  pto2::RunResult add_run(pto2::Runtime& rt, std::vector<int32_t>& v, uint32_t tasks) {
    return rt.run([&v, tasks](const ChipStorageTaskArgs&) {
      Tensor t = ext1d(v);
      for (uint32_t i = 0; i < tasks; ++i) {
        Arg a;
        a.add_inout(t);
        rt_submit_aiv_task(0, a);
      }
      const int64_t idx[1] = {0};
      if (get_tensor_data<int32_t>(t, 1, idx) != static_cast<int32_t>(tasks)) throw std::runtime_error("get_tensor_data read a wrong value");
    });
  }

  void check_plain_run(const std::string& after) {
    std::vector<int32_t> v(4, 0);
    pto2::RunResult r = add_run(*rt_, v, 3);
    if (!r.ok() || v[3] != 3) fail("a plain run after " + after + " failed: '" + r.message + "'");
  }

  void concurrent_runs() {  // serialized: each computes its own values
    const uint32_t n = 2 + rng_.below(3);
    std::vector<std::vector<int32_t>> bufs(n, std::vector<int32_t>(8, 0));
    std::vector<uint32_t> tasks(n);
    std::vector<std::string> errs(n);
    for (auto& t : tasks) t = 1 + rng_.below(30);
    std::vector<std::thread> th;
    for (uint32_t i = 0; i < n; ++i)
      th.emplace_back([&, i] {
        pto2::RunResult r = add_run(*rt_, bufs[i], tasks[i]);
        if (!r.ok()) errs[i] = r.message;
      });
    for (auto& t : th) t.join();
    for (uint32_t i = 0; i < n; ++i) {
      if (!errs[i].empty()) return fail("concurrent run " + std::to_string(i) + " failed: " + errs[i]);
      for (int32_t x : bufs[i])
        if (x != static_cast<int32_t>(tasks[i])) return fail("concurrent run " + std::to_string(i) + " computed a wrong value");
    }
  }

  void concurrent_c_runs() {  // pto2_run: independent runtimes
    const uint32_t n = 2 + rng_.below(2);
    std::vector<std::vector<int32_t>> bufs(n, std::vector<int32_t>(8, 0));
    std::vector<std::string> errs(n);
    std::vector<std::thread> th;
    for (uint32_t i = 0; i < n; ++i)
      th.emplace_back([&, i] {
        pto2_kernel_desc k[1] = {{0, "add1", 1, reinterpret_cast<void*>(&k_add1)}};
        pto2_tensor_desc t[1] = {{bufs[i].data(), 1, {8}, 5}};
        pto2_run_options o = {0, 1, 0, nullptr};
        pto2_run_stats st;
        char err[512] = {0};
        auto entry = +[](const void* p) {
          const auto& args = *static_cast<const ChipStorageTaskArgs*>(p);
          for (int j = 0; j < 5; ++j) {
            Arg a;
            a.add_inout(from_tensor_arg(args.tensor(0)));
            rt_submit_aiv_task(0, a);
          }
        };
        if (pto2_run(reinterpret_cast<void*>(entry), k, 1, t, 1, nullptr, 0, &o, &st, err, sizeof err) != 0) errs[i] = err;
      });
    for (auto& t : th) t.join();
    for (uint32_t i = 0; i < n; ++i) {
      if (!errs[i].empty()) return fail("concurrent pto2_run " + std::to_string(i) + " failed: " + errs[i]);
      for (int32_t x : bufs[i])
        if (x != 5) return fail("concurrent pto2_run " + std::to_string(i) + " computed a wrong value");
    }
  }

  // A misuse from the entry itself (only the calls refused there: registration, options, files,
  // a nested run of the same Runtime) or from a thread it starts (every call), in the middle of
  // a run of add1 tasks; the run must go on and compute.
  void misuse_in_run() {
    const bool own_thread = rng_.chance(2);
    // (Not Runtime::run on the thread: serialized, it waits for this run, which joins the thread.)
    const Misuse m = own_thread ? static_cast<Misuse>(kRegister + rng_.below(kMisuses - kRegister))
                                : static_cast<Misuse>(rng_.below(kOwnRun));
    const uint32_t before = rng_.below(10), after = rng_.below(10);
    std::vector<int32_t> v(8, 0);
    std::string what;
    pto2::RunResult r = rt_->run([&](const ChipStorageTaskArgs&) {
      Tensor t = ext1d(v);
      Shared sh{rt_, &t, path_};
      auto add = [&t] {
        Arg a;
        a.add_inout(t);
        rt_submit_aiv_task(0, a);
      };
      for (uint32_t i = 0; i < before; ++i) add();
      if (own_thread) {
        what = misuse(m, sh);
      } else {
        std::thread th([&] { what = misuse(m, sh); });
        th.join();
      }
      for (uint32_t i = 0; i < after; ++i) add();
    });
    const std::string where = std::string(kMisuseNames[m]) + (own_thread ? " in the entry" : " on a thread the entry started");
    check_refused(where, what);
    if (!r.ok()) return fail(where + ": the run failed: " + r.message);
    for (int32_t x : v)
      if (x != static_cast<int32_t>(before + after)) return fail(where + ": the run computed a wrong value");
    check_plain_run(where);
  }

  // A kernel's misuse (on a worker, or on the orchestrator thread when run undeferred or helped):
  // the run fails with the refusal in its message.
  bool orchestrator_runs_kernels() const {
    return rt_->options().inline_below_ns_ != 0 || rt_->options().orchestrator_helps_;
  }

  void misuse_in_kernel() {
    // A kernel the orchestrator thread runs itself (undeferred or helping) is not checked
    // (documented): its orchestration calls re-enter the run's state (this part found heap
    // corruption and a wait for its own task), so they are fuzzed only where no kernel runs there.
    const Misuse m = orchestrator_runs_kernels() ? static_cast<Misuse>(kRegister + rng_.below(kMisuses - kRegister))
                                                 : static_cast<Misuse>(rng_.below(kMisuses));
    std::vector<int32_t> v(8, 0);
    Tensor t = ext1d(v);  // (outlives the entry: the kernel may run after it returned)
    pto2::RunResult r = rt_->run([&](const ChipStorageTaskArgs&) {
      g_shared = Shared{rt_, &t, path_};
      for (uint32_t i = rng_.below(5); i > 0; --i) {
        Arg a;
        a.add_inout(t);
        rt_submit_aiv_task(0, a);
      }
      Arg a;
      a.add_scalar(m);
      a.add_input(t);
      rt_submit_aiv_task(1, a);
    });
    g_shared = Shared{};
    const std::string where = std::string(kMisuseNames[m]) + " in a kernel";
    const std::string prefix = "misuse in a kernel: ";
    const size_t at = r.message.find(prefix);
    if (at == std::string::npos) return fail(where + ": the run's message does not show the kernel's outcome: '" + r.message + "'");
    const std::string what = r.message.substr(at + prefix.size());
    check_refused(where, what);
    check_plain_run(where);
  }

  // A run of another Runtime inside the entry: allowed; the outer run goes on afterwards.
  void nested_other_runtime() {
    std::vector<int32_t> outer(8, 0), inner(8, 0);
    const uint32_t inner_tasks = 1 + rng_.below(5);
    std::string inner_err;
    pto2::RunResult r = rt_->run([&](const ChipStorageTaskArgs&) {
      Tensor t = ext1d(outer);
      Arg a;
      a.add_inout(t);
      rt_submit_aiv_task(0, a);
      pto2::Runtime other(pto2::RuntimeOptions{}.aic_workers(0).aiv_workers(1));
      other.register_kernel(0, "add1", pto2::CoreType::AIV, &k_add1);
      pto2::RunResult ir = add_run(other, inner, inner_tasks);
      if (!ir.ok()) inner_err = ir.message;
      Arg b;
      b.add_inout(t);
      rt_submit_aiv_task(0, b);
      const int64_t idx[1] = {5};
      if (get_tensor_data<int32_t>(t, 1, idx) != 2) throw std::runtime_error("the outer run read a wrong value");
    });
    if (!inner_err.empty()) return fail("the run of another Runtime inside an entry failed: " + inner_err);
    if (!r.ok()) return fail("the outer run around a run of another Runtime failed: " + r.message);
    if (outer[0] != 2 || inner[0] != static_cast<int32_t>(inner_tasks)) fail("nested runs of two Runtimes computed wrong values");
  }

  // A misuse must be refused: an exception (or a failed result) whose message names the call.
  void check_refused(const std::string& where, const std::string& what) {
    if (what == "returned") return fail(where + ": went through (not refused)");
    api_fuzz::expect_message(seed_, index_, what, where, kCallWords);
  }

  void fail(const std::string& what) { api_fuzz::fail_case(seed_, index_, what); }

  Rng rng_;
  uint64_t seed_, index_;
  pto2::Runtime* rt_ = nullptr;
  std::string path_;
};

}  // namespace

TEST(ApiFuzz, CallsFromSeveralThreads) {
  api_fuzz::run_cases(std::max<uint64_t>(10, api_fuzz::env_u64("PTO2_API_FUZZ_CASES", 150) / 5),
                      [](uint64_t seed, uint64_t i) { ThreadCase(seed, i).run(); });
}
