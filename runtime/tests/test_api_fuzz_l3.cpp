// The API fuzzer's L3 part: pto_l3_api.h on the in-process transport. Each case builds an
// L3Runtime (1..3 chips, windows of 1..8 live tasks or the default, records on or off), registers
// targets under random ids (0..3, -1, INT32_MIN/MAX, 10^6) whose L2 entries compute, fail in a
// kernel, throw, submit an unknown kernel, use a kernel registered for that target only, or call
// submit_next_level from a chip (refused); registrations with null entries and bad kernel ids;
// then 1..3 runs of random HOST task graphs: next-level tasks with add_dep_wait on random earlier
// handles (also TaskHandle::invalid(), a handle of the previous run, a made-up index), barriers
// (with no valid wait, or with a tensor or a scalar: refused), unregistered target ids,
// registrations during the run, submissions from another thread, and sometimes
// pto2_cancel_all_runs() from another thread at a random moment. Between runs: run_target on
// chips in and out of range, submit_next_level outside a run.
// The oracle: each next-level task's kernel writes 1 + the largest value of the tasks it depends
// on (its waits, through barriers, and the previous task of its target), so a run that succeeds
// has exactly the model's values and counts; a run the model says fails (or that was cancelled)
// fails with a message naming the call or the next-level task; every refused call throws a
// message naming the call; nothing hangs (the per-case watchdog) and the next plain run works.
// PTO2_API_FUZZ_SEED / PTO2_API_FUZZ_CASES (cases / 10 here, at least 10) / PTO2_API_FUZZ_CASE
// as for ApiFuzz.RandomCallSequences.
#include <gtest/gtest.h>

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "api_fuzz_driver.h"
#include "pto2_c_api.h"
#include "pto_l3_api.h"
#include "test_util.h"

namespace {

constexpr int32_t kDepth = 0;      // shared kernel: t0[s0] = 1 + max(t0[s2..]), after s1 us
constexpr int32_t kFails = 1;      // shared kernel: ctx->fail
constexpr int32_t kOwnDepth = 7;   // kDepth registered for the kOwnKernel targets only

void spin_us(uint64_t us) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < end) sched_yield();
}

void k_depth(PTO2KernelContext* ctx) {
  int32_t* t = ctx->tensors[0].ptr<int32_t>();
  spin_us(ctx->scalars[1]);
  int32_t m = 0;
  for (uint32_t k = 2; k < ctx->scalar_count; ++k) m = std::max(m, __atomic_load_n(&t[ctx->scalars[k]], __ATOMIC_RELAXED));
  __atomic_store_n(&t[ctx->scalars[0]], m + 1, __ATOMIC_RELAXED);
}
void k_fails(PTO2KernelContext* ctx) { ctx->fail("the fuzzer's kernel fails on purpose"); }

// L2 entries: tensor 0 = the run's values; scalars: the task's cell, a delay, its dependencies' cells.
void submit_depth(const ChipStorageTaskArgs& a, int32_t kernel) {
  Arg p;
  p.add_inout(from_tensor_arg(a.tensor(0)));
  for (uint32_t k = 0; k < a.scalar_count(); ++k) p.add_scalar(a.scalar(k));
  rt_submit_aiv_task(kernel, p);
}
void l2_depth(const ChipStorageTaskArgs& a) { submit_depth(a, kDepth); }
void l2_own_kernel(const ChipStorageTaskArgs& a) { submit_depth(a, kOwnDepth); }
void l2_fails(const ChipStorageTaskArgs& a) { submit_depth(a, kFails); }
void l2_throws(const ChipStorageTaskArgs&) { throw std::runtime_error("the fuzzer's L2 entry throws on purpose"); }
void l2_unknown_kernel(const ChipStorageTaskArgs& a) { submit_depth(a, 55); }
void l2_submits_next_level(const ChipStorageTaskArgs&) {  // refused: not the host entry's thread
  TaskArgs t;
  submit_next_level(0, t);
}

pto2::L3Runtime* g_l3 = nullptr;  // the case's runtime, for the L2 entries below
void l2_runs_l3(const ChipStorageTaskArgs&) {  // refused: it would wait for the run that waits for it
  const pto2::L3RunResult r = g_l3->run(+[](const ChipStorageTaskArgs&) {});
  throw std::runtime_error(r.ok() ? "a nested L3Runtime::run succeeded" : r.message);
}
void l2_runs_target(const ChipStorageTaskArgs&) {  // refused during a run: the chips are in use
  g_l3->run_target(0, 0, ChipStorageTaskArgs{});
}

enum Kind : uint32_t { kGood, kOwn, kFailK, kThrow, kUnknownK, kNested, kRunsL3, kRunsTarget, kKinds };
const pto2::L2Entry kEntries[kKinds] = {&l2_depth, &l2_own_kernel, &l2_fails, &l2_throws, &l2_unknown_kernel,
                                        &l2_submits_next_level, &l2_runs_l3, &l2_runs_target};
const char* const kKindNames[kKinds] = {"depth", "own_kernel", "fails", "throws", "unknown_kernel", "submits",
                                        "runs_l3", "runs_target"};
const int32_t kTargetIds[] = {0, 1, 2, 3, -1, INT32_MIN, INT32_MAX, 1000000};

const char* const kL3Calls[] = {"submit_next_level", "submit_barrier", "next-level task", "register_kernel",
                                "register_target", "register_target_kernel", "run_target", "L3Runtime", "cancelled"};

struct Rng {
  std::mt19937_64 g;
  explicit Rng(uint64_t seed) : g(seed) {}
  uint32_t below(uint32_t n) { return n ? static_cast<uint32_t>(g() % n) : 0; }
  bool chance(uint32_t one_in) { return below(one_in) == 0; }
};

// One step of a host graph.
struct Step {
  bool barrier = false;
  int32_t target = 0;
  std::vector<int> waits;         // earlier steps
  int odd_wait = 0;               // 0, 1 invalid handle, 2 previous run's handle, 3 made-up index
  bool barrier_arg = false;       // a barrier given a tensor or scalar
  uint64_t delay_us = 0;
};

class L3Case;
L3Case* g_case = nullptr;  // what the host entry (a plain function pointer) works on

class L3Case {
 public:
  L3Case(uint64_t seed, uint64_t index) : rng_(seed * 1000003u + index + 4242), seed_(seed), index_(index) {}

  void run() {
    pto2::L3Options o;
    o.chips(1 + rng_.below(3)).chip_options(pto2::RuntimeOptions{}.aic_workers(0).aiv_workers(1 + rng_.below(2)).aic_cores(0).aiv_cores(0).deadlock_timeout_ms(2000));
    if (rng_.chance(2)) o.window(1 + rng_.below(8));
    o.record_tasks(!rng_.chance(3));
    record_ = o.record_tasks_;
    pto2::L3Runtime l3(o);
    l3_ = g_l3 = &l3;
    window_ = o.window_;
    register_all();
    const uint32_t runs = 1 + rng_.below(3);
    for (uint32_t r = 0; r < runs && !::testing::Test::HasFailure(); ++r) {
      between_runs();
      one_run(r);
    }
    plain_run();
    l3_ = g_l3 = nullptr;
  }

  void host() {  // the host entry of the current run
    std::vector<TaskHandle> h(steps_.size());
    for (size_t i = 0; i < steps_.size(); ++i) {
      const Step& s = steps_[i];
      if (i == cancel_at_) go_ = true;
      if (i == register_at_) register_during_run();
      if (i == thread_at_) submit_from_another_thread();
      TaskArgs args;
      for (int w : s.waits) args.add_dep_wait(h[static_cast<size_t>(w)]);
      if (s.odd_wait == 1) args.add_dep_wait(TaskHandle::invalid());
      if (s.odd_wait == 2) args.add_dep_wait(prev_run_handle_);
      if (s.odd_wait == 3) args.add_dep_wait(TaskHandle{h.empty() || !h[0].is_valid() ? 1 : h[0].run_, 1000 + i});
      if (s.barrier) {
        if (s.barrier_arg) {
          if (rng_barrier_scalar_) args.add_scalar(1);
          else args.add_tensor(values_);
        }
        h[i] = submit_barrier(args);
      } else {
        args.add_tensor(values_);
        args.add_scalar(i);
        args.add_scalar(s.delay_us);
        for (int d : cells_[i]) args.add_scalar(static_cast<uint64_t>(d));
        h[i] = submit_next_level(s.target, args);
      }
      if (h[i].is_valid()) last_handle_ = h[i];
    }
    go_ = true;
  }

 private:
  void register_all() {
    l3_->register_kernel(kDepth, "depth", pto2::CoreType::AIV, &k_depth);
    l3_->register_kernel(kFails, "fails", pto2::CoreType::AIV, &k_fails);
    const uint32_t n = 1 + rng_.below(4);
    for (uint32_t k = 0; k < n; ++k) {  // (a later registration under the same id replaces the kind)
      const int32_t id = rng_.chance(3) ? kTargetIds[rng_.below(8)] : static_cast<int32_t>(rng_.below(4));
      const Kind kind = static_cast<Kind>(rng_.chance(2) ? kGood : rng_.below(kKinds));  // (the first is kGood)
      targets_[id] = kind;
      l3_->register_target(id, std::string("t_") + kKindNames[kind], kEntries[kind]);
      if (kind == kOwn) l3_->register_target_kernel(id, kOwnDepth, "own_depth", pto2::CoreType::AIV, &k_depth);
    }
    if (rng_.chance(3)) {  // refused registrations: each throws naming the call, and changes nothing
      const uint32_t which = rng_.below(4);
      expect_throw([&] { l3_->register_target(static_cast<int32_t>(rng_.below(4)), "null", nullptr); }, "register_target");
      if (which == 0) expect_throw([&] { l3_->register_target_kernel(0, 3, "null", pto2::CoreType::AIV, nullptr); }, "register_target_kernel");
      if (which == 1) expect_throw([&] { l3_->register_kernel(-1, "neg", pto2::CoreType::AIV, &k_depth); }, "register_kernel");
      if (which == 2) expect_throw([&] { l3_->register_kernel(3, "null", pto2::CoreType::AIV, nullptr); }, "register_kernel");
      if (which == 3) expect_throw([&] { l3_->register_target_kernel(0, INT32_MAX, "huge", pto2::CoreType::AIV, &k_depth); }, "register_target_kernel");
    }
  }

  template <class F>
  void expect_throw(F f, const char* call) {
    try {
      f();
    } catch (const std::exception& e) {
      api_fuzz::expect_message(seed_, index_, e.what(), call, kL3Calls);
      return;
    }
    fail(std::string(call) + ": a refused call did not throw");
  }

  void between_runs() {
    TaskArgs t;
    expect_throw([&] { submit_next_level(0, t); }, "submit_next_level outside a run");
    expect_throw([&] { submit_barrier(t); }, "submit_barrier outside a run");
    if (rng_.chance(4)) expect_throw([&] { l3_->run_target(l3_->local_chips() + rng_.below(3), 0, ChipStorageTaskArgs{}); }, "run_target");
    if (rng_.chance(4)) {  // a target run right here: computes like a next-level task
      auto it = targets_.begin();
      std::advance(it, rng_.below(static_cast<uint32_t>(targets_.size())));
      if (it->second == kGood || it->second == kOwn) {
        std::vector<int32_t> v(2, 5);
        ChipStorageTaskArgs a;
        a.add_tensor(ext1d(v));
        a.add_scalar(1);
        a.add_scalar(0);
        a.add_scalar(0);
        pto2::RunResult r = l3_->run_target(rng_.below(l3_->local_chips()), it->first, a);
        if (!r.ok() || v[1] != 6) fail("run_target of a computing target: '" + r.message + "', value " + std::to_string(v[1]));
      }
    }
  }

  void one_run(uint32_t r) {
    const uint32_t n = 1 + rng_.below(rng_.chance(4) ? 40 : 12);
    steps_.assign(n, Step{});
    cells_.assign(n, {});
    std::vector<int> value(n, 0);                // the model's value of each task (0: a barrier)
    std::vector<std::vector<int>> through(n);    // a barrier's real tasks
    std::vector<bool> valid(n, true);            // a barrier waiting on no valid handle returns an invalid one
    std::map<int32_t, int> last_of_target;
    bool expect_fail = false;
    uint32_t tasks = 0, barriers = 0;
    rng_barrier_scalar_ = rng_.chance(2);
    // One misuse in a third of the runs: a foreign handle, a barrier given arguments, a target
    // never registered.
    const uint32_t misuse_at = rng_.chance(3) ? rng_.below(n) : UINT32_MAX, misuse = rng_.below(3);
    for (uint32_t i = 0; i < n; ++i) {
      Step& s = steps_[i];
      s.barrier = rng_.chance(5);
      const uint32_t nw = i ? rng_.below(std::min<uint32_t>(i, 4) + 1) : 0;
      for (uint32_t k = 0; k < nw; ++k) s.waits.push_back(static_cast<int>(rng_.below(i)));
      if (i == misuse_at && misuse == 0) s.odd_wait = 2 + rng_.below(2);
      else if (rng_.chance(10)) s.odd_wait = 1;  // ignored
      if (s.odd_wait == 2 && !prev_run_handle_.is_valid()) s.odd_wait = 3;
      if (s.odd_wait >= 2) expect_fail = true;
      std::vector<int> deps;  // the real tasks it waits for
      for (int w : s.waits) {
        if (steps_[static_cast<size_t>(w)].barrier) deps.insert(deps.end(), through[static_cast<size_t>(w)].begin(), through[static_cast<size_t>(w)].end());
        else deps.push_back(w);
      }
      if (s.barrier) {
        s.barrier_arg = i == misuse_at && misuse == 1;
        if (s.barrier_arg) expect_fail = true;
        through[i] = deps;
        valid[i] = std::any_of(s.waits.begin(), s.waits.end(), [&](int w) { return valid[static_cast<size_t>(w)]; }) || s.odd_wait >= 2;
        if (valid[i]) ++barriers;
        continue;
      }
      s.delay_us = rng_.chance(3) ? rng_.below(300) : 0;
      if (i == misuse_at && misuse == 2) {
        s.target = 77;  // never registered
        expect_fail = true;
      } else {
        const bool computing = !rng_.chance(8);  // most tasks go to targets that compute
        std::vector<int32_t> pick;
        for (const auto& kv : targets_)
          if ((kv.second == kGood || kv.second == kOwn) == computing) pick.push_back(kv.first);
        if (pick.empty())
          for (const auto& kv : targets_) pick.push_back(kv.first);
        s.target = pick[rng_.below(static_cast<uint32_t>(pick.size()))];
        const Kind k = targets_[s.target];
        if (k != kGood && k != kOwn) expect_fail = true;
      }
      auto chain = last_of_target.find(s.target);
      if (chain != last_of_target.end()) deps.push_back(chain->second);
      last_of_target[s.target] = static_cast<int>(i);
      int m = 0;
      for (int d : deps) m = std::max(m, value[static_cast<size_t>(d)]);
      value[i] = m + 1;
      cells_[i] = deps;
      ++tasks;
    }
    // Moments: another thread cancels every run (1 in 6), registrations and a submission from
    // another thread during the run (refused).
    cancel_at_ = rng_.chance(6) ? rng_.below(n) : SIZE_MAX;
    register_at_ = rng_.chance(8) ? rng_.below(n) : SIZE_MAX;
    rng_thread_ = rng_.chance(2);
    thread_at_ = rng_.chance(8) ? rng_.below(n) : SIZE_MAX;
    const uint64_t cancel_delay = rng_.below(500);
    go_ = false;
    std::thread canceller;
    if (cancel_at_ != SIZE_MAX)
      canceller = std::thread([this, cancel_delay] {
        while (!go_.load()) sched_yield();
        spin_us(cancel_delay);
        pto2_cancel_all_runs();
      });
    std::vector<int32_t> vals(n, 0);
    values_ = ext1d(vals);
    g_case = this;
    pto2::L3RunResult res = l3_->run(+[](const ChipStorageTaskArgs&) { g_case->host(); });
    g_case = nullptr;
    go_ = true;
    if (canceller.joinable()) canceller.join();
    prev_run_handle_ = last_handle_;
    const std::string where = "run " + std::to_string(r) + " (" + std::to_string(n) + " steps)";
    const bool cancelled = cancel_at_ != SIZE_MAX;
    if (!res.ok()) {
      if (!expect_fail && !(cancelled && res.message.find("cancelled") != std::string::npos))
        return fail(where + ": failed, but the model expects success: " + res.message);
      api_fuzz::expect_message(seed_, index_, res.message, where, kL3Calls);
      return;
    }
    if (expect_fail) return fail(where + ": succeeded, but the model expects a failure");
    if (res.tasks_submitted != tasks || res.tasks_executed != tasks || res.barriers != barriers)
      return fail(where + ": counts: submitted " + std::to_string(res.tasks_submitted) + " executed " +
                  std::to_string(res.tasks_executed) + " barriers " + std::to_string(res.barriers) + ", expected " +
                  std::to_string(tasks) + "/" + std::to_string(tasks) + "/" + std::to_string(barriers));
    if (res.peak_live_tasks > window_) fail(where + ": peak live tasks above the window");
    if (res.tasks.size() != (record_ ? tasks : 0)) fail(where + ": " + std::to_string(res.tasks.size()) + " task records");
    for (uint32_t i = 0; i < n; ++i)
      if (vals[i] != value[i])
        return fail(where + ": step " + std::to_string(i) + " computed " + std::to_string(vals[i]) + ", the model " +
                    std::to_string(value[i]) + " (a dependency was not finished before it)");
  }

  // Refused while running (the tables and chips are in use), from the host entry or another
  // thread; and a run of the same L3Runtime from its host entry (it would wait for itself).
  void register_during_run() {
    auto all = [this] {
      expect_throw([&] { l3_->register_kernel(9, "late", pto2::CoreType::AIV, &k_depth); }, "register_kernel");
      expect_throw([&] { l3_->register_target(9, "late", &l2_depth); }, "register_target");
      expect_throw([&] { l3_->register_target_kernel(9, 9, "late", pto2::CoreType::AIV, &k_depth); }, "register_target_kernel");
      expect_throw([&] { l3_->run_target(0, targets_.begin()->first, ChipStorageTaskArgs{}); }, "run_target");
    };
    if (rng_thread_) {
      std::thread t(all);
      t.join();
    } else {
      all();
      const pto2::L3RunResult nested = l3_->run(+[](const ChipStorageTaskArgs&) {});
      api_fuzz::expect_message(seed_, index_, nested.message, "a nested L3Runtime::run", kL3Calls);
    }
  }

  void submit_from_another_thread() {  // refused: only the host entry's thread submits
    std::string what;
    std::thread t([&what] {
      TaskArgs a;
      try {
        submit_next_level(0, a);
        what = "returned";
      } catch (const std::logic_error& e) {
        what = e.what();
      }
    });
    t.join();
    api_fuzz::expect_message(seed_, index_, what == "returned" ? "" : what, "submit_next_level from another thread", kL3Calls);
  }

  void plain_run() {  // after everything: a good target still computes
    for (const auto& kv : targets_) {
      if (kv.second != kGood) continue;
      steps_.assign(2, Step{});
      steps_[0].target = steps_[1].target = kv.first;
      cells_.assign(2, {});
      cells_[1] = {0};
      cancel_at_ = register_at_ = thread_at_ = SIZE_MAX;
      std::vector<int32_t> vals(2, 0);
      values_ = ext1d(vals);
      g_case = this;
      pto2::L3RunResult res = l3_->run(+[](const ChipStorageTaskArgs&) { g_case->host(); });
      g_case = nullptr;
      if (!res.ok() || vals[0] != 1 || vals[1] != 2) fail("the plain run after the fuzzed ones: '" + res.message + "'");
      return;
    }
  }

  void fail(const std::string& what) { api_fuzz::fail_case(seed_, index_, what); }

  Rng rng_;
  uint64_t seed_, index_;
  pto2::L3Runtime* l3_ = nullptr;
  uint32_t window_ = 0;
  std::map<int32_t, Kind> targets_;
  std::vector<Step> steps_;
  std::vector<std::vector<int>> cells_;
  std::vector<int32_t> dummy_{0};
  Tensor values_ = ext1d(dummy_);
  size_t cancel_at_ = SIZE_MAX, register_at_ = SIZE_MAX, thread_at_ = SIZE_MAX;
  std::atomic<bool> go_{false};
  bool rng_barrier_scalar_ = false, record_ = false, rng_thread_ = false;
  TaskHandle prev_run_handle_, last_handle_;
};

}  // namespace

TEST(ApiFuzz, L3RandomHostGraphs) {
  api_fuzz::run_cases(std::max<uint64_t>(10, api_fuzz::env_u64("PTO2_API_FUZZ_CASES", 150) / 10),
                      [](uint64_t seed, uint64_t i) { L3Case(seed, i).run(); });
}
