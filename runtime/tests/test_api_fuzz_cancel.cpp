// The API fuzzer's cancellation part: cancel() (and the other calls documented as callable from
// any thread during a run: Runtime::progress, pto2_runtime_cancel, pto2_cancel_all_runs) at
// random moments of random runs — while the orchestrator waits for a ring slot or for memory,
// inside get/set_tensor_data, in nested AUTO/MANUAL scopes, with sync_start gangs (gang helpers)
// and mixed tasks whose kernels wait on group flags. Who cancels varies: another thread, a
// kernel, the orchestration itself, or nobody between runs. The oracle of every case:
//   - the run returns (a per-case watchdog names the seed and case);
//   - a run cancelled while it was in progress reports a message starting "cancelled:" (not a
//     consequence of the cancellation: a group wait that gave up, out of memory, a deadlock);
//     a cancellation that came when no run was in progress does not cancel the next run;
//   - after the orchestration cancelled its own run, every further call into the runtime unwinds;
//   - the next run of the same Runtime works and computes the right values.
// PTO2_API_FUZZ_SEED / PTO2_API_FUZZ_CASES (cases / 15 here, at least 10: each case takes milliseconds) / PTO2_API_FUZZ_CASE
// as for ApiFuzz.RandomCallSequences.
#include <gtest/gtest.h>

#include <atomic>
#include <cinttypes>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <sched.h>

#include "pto2_c_api.h"
#include "api_fuzz_driver.h"
#include "test_util.h"

namespace {

void spin_us(uint64_t us) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < end) sched_yield();
}

// Kernels. Scalar 0 is a duration in us for the ones that take time.
void k_nop(PTO2KernelContext*) {}
void k_sleep(PTO2KernelContext* ctx) { spin_us(ctx->scalar_count ? ctx->scalars[0] % 200 : 0); }
void k_signal(PTO2KernelContext* ctx) {  // AIC side of a mixed task
  spin_us(ctx->scalar_count ? ctx->scalars[0] % 150 : 0);
  pto2_group_signal(ctx, 0);
}
void k_wait(PTO2KernelContext* ctx) {  // AIV side: waits for the AIC side's flag 0
  if (!pto2_group_wait(ctx, 0)) return;
}
void k_cancel(PTO2KernelContext* ctx) {  // cancels the run it is part of (scalar 1: the Runtime*)
  if (ctx->scalar_count > 1) reinterpret_cast<pto2::Runtime*>(static_cast<uintptr_t>(ctx->scalars[1]))->cancel();
}
void k_add1(PTO2KernelContext* ctx) {  // t0 (inout, int32) += 1 everywhere
  const Tensor& t = ctx->tensors[0];
  int32_t* base = static_cast<int32_t*>(t.data);
  for_each_element(t, [&](int64_t off) { base[off] += 1; });
}

enum : int32_t { kNop = 0, kNopC = 1, kSleep = 2, kSleepC = 3, kSignal = 4, kWait = 5, kCancel = 6, kAdd1 = 7 };

struct Rng {
  std::mt19937_64 g;
  explicit Rng(uint64_t seed) : g(seed) {}
  uint32_t below(uint32_t n) { return n ? static_cast<uint32_t>(g() % n) : 0; }
  bool chance(uint32_t one_in) { return below(one_in) == 0; }
};

enum class Who { Thread, Kernel, Orchestration, BetweenRuns, Nobody };

class CancelCase {
 public:
  CancelCase(uint64_t seed, uint64_t index) : rng_(seed * 1000003u + index + 77), seed_(seed), index_(index) {}

  void run() {
    pto2::RuntimeOptions o;
    aic_ = rng_.below(3);
    aiv_ = 1 + rng_.below(2);
    aiv_cores_ = rng_.chance(3) ? 0 : 4;  // 0: as many as the workers (no gang helpers)
    o.aic_workers(aic_).aiv_workers(aiv_).aic_cores(rng_.chance(3) ? 0 : 4).aiv_cores(aiv_cores_);
    if (rng_.chance(2)) o.task_ring_size(1 + rng_.below(8));  // the orchestrator waits for slots
    o.memory_limit(rng_.chance(3) ? 4096 + rng_.below(8192) : size_t(1) << 24);  // ... or for memory
    if (rng_.chance(3)) o.inline_below_ns(0);
    if (rng_.chance(4)) o.orchestrator_helps(false);
    if (rng_.chance(4)) o.spin_us(0);
    if (rng_.chance(6)) o.trace(true);
    if (rng_.chance(8)) o.race_check(pto2::RaceCheck::Warn);
    o.deadlock_timeout_ms(2000);
    pto2::Runtime rt(o);
    rt_ = &rt;
    rt.register_kernel(kNop, "nop", pto2::CoreType::AIV, &k_nop).register_kernel(kNopC, "nop_c", pto2::CoreType::AIC, &k_nop);
    rt.register_kernel(kSleep, "sleep", pto2::CoreType::AIV, &k_sleep).register_kernel(kSleepC, "sleep_c", pto2::CoreType::AIC, &k_sleep);
    rt.register_kernel(kSignal, "signal", pto2::CoreType::AIC, &k_signal).register_kernel(kWait, "wait", pto2::CoreType::AIV, &k_wait);
    rt.register_kernel(kCancel, "cancel", pto2::CoreType::AIV, &k_cancel).register_kernel(kAdd1, "add1", pto2::CoreType::AIV, &k_add1);
    const uint32_t runs = 1 + rng_.below(3);
    for (uint32_t r = 0; r < runs; ++r) {
      one_run(r);
      check_next_run_works(r);
    }
    rt_ = nullptr;
  }

 private:
  void one_run(uint32_t r) {
    who_ = static_cast<Who>(rng_.below(5));
    ops_ = 5 + rng_.below(rng_.chance(5) ? 300 : 60);
    cancel_at_ = rng_.below(ops_);  // the op at which the orchestration cancels, or lets the thread go
    delay_us_ = rng_.chance(3) ? 0 : rng_.below(rng_.chance(4) ? 5000 : 300);
    const uint32_t how = rng_.below(3);
    rng_copy_repeat_ = rng_.chance(3);
    go_ = false;
    go_by_entry_ = false;
    issued_ = false;
    std::atomic<bool> stop_progress{false};
    std::thread canceller, watcher;
    auto cancel_once = [this, how] {
      if (how == 0) rt_->cancel();
      else if (how == 1) pto2_runtime_cancel(rt_);
      else pto2_cancel_all_runs();
    };
    if (who_ == Who::Thread) {
      canceller = std::thread([this, cancel_once] {
        while (!go_.load()) sched_yield();
        spin_us(delay_us_);
        cancel_once();
        if (rng_copy_repeat_) cancel_once();  // a second cancel is harmless
        issued_ = true;
      });
    }
    if (rng_.chance(2)) {  // progress() from another thread throughout
      watcher = std::thread([this, &stop_progress] {
        uint64_t s = 0, c = 0;
        while (!stop_progress.load()) {
          rt_->progress(&s, &c);
          uint64_t cs = 0, cc = 0;
          pto2_runtime_progress(rt_, &cs, &cc);
          if (c > s) fail("progress: completed " + std::to_string(c) + " > submitted " + std::to_string(s));
          sched_yield();
        }
      });
    }
    if (who_ == Who::BetweenRuns) {
      cancel_once();  // no run in progress: must not cancel the next one
      cancel_once();
    }
    unwound_ok_ = true;
    pto2::RunResult res = rt_->run([&](const ChipStorageTaskArgs&) { entry(); });
    go_ = true;  // a run that ended before the orchestration let the canceller go (it failed)
    if (canceller.joinable()) canceller.join();
    stop_progress = true;
    if (watcher.joinable()) watcher.join();
    if (who_ == Who::Nobody && rng_.chance(2)) cancel_once();  // after the run: must not cancel the next
 if (std::getenv("PTO2_API_FUZZ_VERBOSE")) std::fprintf(stderr, "case %" PRIu64 " run %u by %s: %s\n", index_, r, who_name(), res.message.c_str());
    const std::string where = "run " + std::to_string(r) + " (cancelled by " + who_name() + ")";
    // Let go by the orchestration, the thread cancelled a run in progress (nothing else but
    // running out of memory ends a run early).
    const bool must_cancel = (who_ == Who::Thread && go_by_entry_) || who_ == Who::Orchestration || (who_ == Who::Kernel && kernel_cancel_submitted_);
    // A small memory limit may run out (allocations of the outermost scope live until its end):
    // a failure of its own, which may come first.
    const bool oom = res.message.find("out of memory") != std::string::npos;
    if (must_cancel) {
      if (oom) return;
      if (res.message.rfind("cancelled:", 0) != 0) fail(where + ": the message does not say it was cancelled: '" + res.message + "'");
    } else if (!res.ok() && !oom && who_ != Who::Thread) {
      fail(where + ": failed without a cancellation in the run: '" + res.message + "'");
    }
    if (!unwound_ok_) fail(where + ": " + unwound_what_);
  }

  // A small deterministic run after every fuzzed one: the Runtime is usable and computes.
  void check_next_run_works(uint32_t r) {
    std::vector<int32_t> v(8, 0);
    Tensor t = ext1d(v);
    pto2::RunResult res = rt_->run([&](const ChipStorageTaskArgs&) {
      for (int i = 0; i < 3; ++i) {
        Arg a;
        a.add_inout(t);
        rt_submit_aiv_task(kAdd1, a);
      }
      const int64_t idx[1] = {7};
      if (get_tensor_data<int32_t>(t, 1, idx) != 3) fail("run after run " + std::to_string(r) + ": get_tensor_data read a wrong value");
    });
    if (!res.ok()) fail("the run after run " + std::to_string(r) + " failed: " + res.message);
    for (int32_t x : v)
      if (x != 3) {
        fail("the run after run " + std::to_string(r) + " computed a wrong value");
        break;
      }
  }

  const char* who_name() const {
    static const char* names[] = {"another thread", "a kernel", "the orchestration", "nobody: between runs", "nobody"};
    return names[static_cast<int>(who_)];
  }

  // The orchestration: random submissions over a few buffers, scopes, allocations, reads.
  void entry() {
    kernel_cancel_submitted_ = false;
    std::vector<std::vector<int32_t>> bufs(3, std::vector<int32_t>(64, 0));
    std::vector<Tensor> ts;
    for (auto& b : bufs) ts.push_back(ext1d(b));
    std::vector<std::unique_ptr<PTO2ScopeGuard>> scopes;
    std::vector<bool> manual;
    std::vector<PTO2TaskId> ids;
    bool self_cancelled = false;
    for (uint32_t i = 0; i < ops_; ++i) {
      if (i == cancel_at_) {
        if (who_ == Who::Thread) go_ = go_by_entry_ = true;
        if (who_ == Who::Orchestration) {
          rng_.chance(2) ? rt_->cancel() : pto2_cancel_all_runs();
          self_cancelled = true;
        }
      }
      const uint32_t op = rng_.below(12);
      const bool in_manual = !manual.empty() && manual.back();
      bool called_runtime = true;
      uint32_t off[1] = {rng_.below(8) * 8}, sh[1] = {8};
      Tensor tile = ts[rng_.below(3)].view(sh, off);
      if (op <= 4) {  // a task of some kind
        Arg a;
        if (rng_.chance(2)) a.add_inout(tile);
        else a.add_input(tile);
        a.add_scalar(rng_.below(400));
        a.add_scalar(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(rt_)));
        if ((in_manual || rng_.chance(4)) && !ids.empty()) a.add_dependency(ids[rng_.below(static_cast<uint32_t>(ids.size()))]);
        TaskOutputTensors out;
        if (op == 0 && aic_ > 0) {
          out = rt_submit_aic_task(rng_.chance(2) ? kSleepC : kNopC, a);
        } else if (op == 1 && aic_ > 0) {  // mixed: the AIV side waits for the AIC side's flag
          const uint32_t clusters = std::min(aic_, aiv_);
          a.launch_spec.set_block_num(1 + rng_.below(clusters));
          out = rt_submit_task(MixedKernels{kSignal, kWait, INVALID_KERNEL_ID}, a);
        } else if (op == 2) {  // a gang, wider than the workers sometimes (gang helpers)
          a.launch_spec.set_block_num(1 + rng_.below(aiv_cores_ ? aiv_cores_ : aiv_));
          a.launch_spec.set_require_sync_start(rng_.chance(2));
          out = rt_submit_aiv_task(kSleep, a);
        } else if (op == 3 && who_ == Who::Kernel && !kernel_cancel_submitted_ && i >= cancel_at_) {
          out = rt_submit_aiv_task(kCancel, a);
          kernel_cancel_submitted_ = true;
        } else if (op == 3 && rng_.chance(3)) {
          out = rt_submit_dummy_task(a);
        } else {
          out = rt_submit_aiv_task(rng_.chance(2) ? kSleep : kNop, a);
        }
        if (out.task_id().is_valid()) ids.push_back(out.task_id());
      } else if (op == 5) {  // a runtime tensor (waits for memory when the limit is small)
        uint32_t ash[2] = {1 + rng_.below(32), 1 + rng_.below(32)};
        TensorCreateInfo ci(ash, 2, DataType::INT32);
        TaskOutputTensors out = alloc_tensors(ci);
        Arg a;
        a.add_output(out.get_ref(0));
        a.add_scalar(rng_.below(200));
        rt_submit_aiv_task(kSleep, a);
      } else if (op == 6) {
        Arg a;
        uint32_t osh[1] = {1 + rng_.below(64)};
        a.add_output(TensorCreateInfo(osh, 1, DataType::FLOAT32));
        a.add_scalar(rng_.below(200));
        rt_submit_aiv_task(kSleep, a);
      } else if (op == 7 || op == 8) {
        const int64_t idx[1] = {rng_.below(8)};
        if (op == 7) (void)get_tensor_data<int32_t>(tile, 1, idx);
        else set_tensor_data<int32_t>(tile, 1, idx, 5);
      } else if (op == 9 && !scopes.empty()) {
        scopes.pop_back();  // scope end: waits for nothing, but may release memory
        manual.pop_back();
        called_runtime = false;  // a destructor cannot unwind
      } else if (op <= 10) {
        const bool m = in_manual || rng_.chance(3);   // AUTO inside MANUAL fails the run: not here
        scopes.emplace_back(new PTO2ScopeGuard(m ? PTO2ScopeMode::MANUAL : PTO2ScopeMode::AUTO));
        manual.push_back(m);
      } else {
        called_runtime = false;
        spin_us(rng_.below(50));
      }
      if (self_cancelled && called_runtime) {
        unwound_ok_ = false;
        unwound_what_ = "op " + std::to_string(op) + " returned after the orchestration cancelled its own run";
        self_cancelled = false;  // report once
      }
    }
    if (who_ == Who::Thread) {
      go_ = go_by_entry_ = true;
      while (!issued_.load()) sched_yield();  // the cancellation lands while the run is in progress
    }
    while (!scopes.empty()) scopes.pop_back();
  }

  void fail(const std::string& what) { api_fuzz::fail_case(seed_, index_, what); }

  Rng rng_;
  uint64_t seed_, index_;
  pto2::Runtime* rt_ = nullptr;
  uint32_t aic_ = 0, aiv_ = 1, aiv_cores_ = 0, ops_ = 0, cancel_at_ = 0;
  uint64_t delay_us_ = 0;
  bool rng_copy_repeat_ = false;
  Who who_ = Who::Nobody;
  std::atomic<bool> go_{false}, issued_{false};
  bool kernel_cancel_submitted_ = false, go_by_entry_ = false;
  bool unwound_ok_ = true;
  std::string unwound_what_;
};

}  // namespace

TEST(ApiFuzz, CancelAtRandomMoments) {
  api_fuzz::run_cases(std::max<uint64_t>(10, api_fuzz::env_u64("PTO2_API_FUZZ_CASES", 150) / 15),
                      [](uint64_t seed, uint64_t i) { CancelCase(seed, i).run(); });
}
