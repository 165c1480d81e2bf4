// watchdog.h — waiting for progress: the one loop behind every wait of the orchestrator
// thread (task slots, memory, get_tensor_data, the tail of a run), with deadlock detection,
// and the wake-up that retirements send it.
//
//     Watchdog dog(deadlock_timeout_ms);
//     // orchestrator: wait until `ready()` holds, running ready tasks meanwhile
//     switch (dog.wait(owner, ready, /*spin=*/true, /*stop_on_failure=*/true, 2000000)) { ... }
//     // any thread, after retiring task `raw`:
//     dog.on_retired(raw);
//
// The owner (Engine, through its WaitHooks) runs tasks, counts retirements, knows whether the
// run failed and whether a kernel is running; the watchdog decides when to sleep, when to wake
// and when nothing can progress. What a stall means (which message, poisoning the runtime) is
// the owner's: Engine::orchestrator_wait and Engine::wait_for_tail (watchdog.cpp).
#pragma once

#include <atomic>
#include <cstdint>

#include "util.h"

namespace pto2::detail {

/// No task retired for `timeout_ns` while no worker was busy: a stall.
class StallClock {
 public:
  explicit StallClock(uint64_t progress) : last_(progress), last_t_(now_ns()) {}
  /// Records `progress` seen now; true once it has not moved for `timeout_ns`.
  bool stalled(uint64_t progress, int64_t timeout_ns) {
    const int64_t t = now_ns();
    if (progress != last_) {
      last_ = progress;
      last_t_ = t;
      return false;
    }
    return t - last_t_ > timeout_ns;
  }
  void restart() { last_t_ = now_ns(); }

 private:
  uint64_t last_;
  int64_t last_t_;
};

// Read or written at every retirement: its own cache line.
class alignas(64) Watchdog {
 public:
  explicit Watchdog(uint32_t deadlock_timeout_ms) : timeout_ns_(int64_t(deadlock_timeout_ms) * 1000000) {}

  enum class WaitEnd { kReady, kFailed, kStalled };
  /// Waits until ready() holds, running ready tasks meanwhile (spinning first when `spin`).
  /// kFailed: the run failed (only when `stop_on_failure`); kStalled: no task made progress for
  /// the deadlock timeout while no worker was busy and ready() still did not hold. `owner`
  /// provides help_one() (run one ready task here; false if none), progress() (tasks retired
  /// so far), failed(), any_busy() (a kernel is running) and woke() (called after each sleep).
  template <class Owner, class Pred>
  WaitEnd wait(Owner&& owner, Pred&& ready, bool spin, bool stop_on_failure, int64_t poll_ns) {
    for (int i = 0; spin && i < 2000; ++i) {
      if (ready()) return WaitEnd::kReady;
      if (stop_on_failure && owner.failed()) return WaitEnd::kFailed;
      if (owner.help_one()) {  // blocked: run ready work instead of waiting for a worker to do it
        i = 0;
        continue;
      }
      cpu_relax();
    }
    StallClock clock(owner.progress());
    for (;;) {
      if (!spin && owner.help_one()) continue;
      const uint32_t key = progress_.prepare();
      if (ready()) {
        progress_.cancel();
        return WaitEnd::kReady;
      }
      if (stop_on_failure && owner.failed()) {
        progress_.cancel();
        return WaitEnd::kFailed;
      }
      progress_.wait(key, poll_ns);
      owner.woke();
      if (clock.stalled(owner.progress(), timeout_ns_)) {
        if (!owner.any_busy() && !ready()) return WaitEnd::kStalled;
        clock.restart();
      }
    }
  }

  /// Task `raw` retired (any thread): wakes the waiting orchestrator unless it waits for
  /// other tasks (wake_only_on).
  void on_retired(uint64_t raw) {
    if (progress_.has_waiters()) {
      const uint64_t a = wake_on_[0].load(std::memory_order_relaxed);
      if (a == 0 || raw == a || raw == wake_on_[1].load(std::memory_order_relaxed)) progress_.notify_all();
    }
  }
  /// Wakes the waiting orchestrator (the run failed or was cancelled). Async-signal-safe.
  void wake() { progress_.notify_all(); }

  /// While alive, only the retirement of task `a` or `b` wakes the waiting orchestrator
  /// (waiting for task slots: not one futex wake per retirement); any retirement again after,
  /// also when the wait throws.
  class WakeOnlyOn {
   public:
    WakeOnlyOn(Watchdog& dog, uint64_t a, uint64_t b) : dog_(dog) {
      dog_.wake_on_[1].store(b, std::memory_order_relaxed);
      dog_.wake_on_[0].store(a, std::memory_order_relaxed);
    }
    ~WakeOnlyOn() { dog_.wake_on_[0].store(0, std::memory_order_relaxed); }
    WakeOnlyOn(const WakeOnlyOn&) = delete;
    WakeOnlyOn& operator=(const WakeOnlyOn&) = delete;

   private:
    Watchdog& dog_;
  };

 private:
  WaitPoint progress_;  // the orchestrator waits here for retirements
  // While the orchestrator waits for task slots: the two task ids whose retirement may end
  // the wait ([0] == 0: any retirement wakes a waiting orchestrator).
  std::atomic<uint64_t> wake_on_[2] = {};
  int64_t timeout_ns_;
};

}  // namespace pto2::detail
