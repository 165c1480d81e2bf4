// watchdog.h — waiting for progress: the one loop behind every wait of the orchestrator
// thread (task slots, memory, get_tensor_data, the tail of a run), with deadlock detection.
// Included by the files whose waits instantiate it.
#pragma once

#include "engine.h"

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

template <class Pred>
Engine::WaitEnd Engine::wait_for_progress(Pred&& ready, bool spin, bool stop_on_failure, int64_t poll_ns) {
  for (int i = 0; spin && i < 2000; ++i) {
    if (ready()) return WaitEnd::kReady;
    if (stop_on_failure && failed()) return WaitEnd::kFailed;
    if (help_one()) {  // blocked: run ready work instead of waiting for a worker to do it
      i = 0;
      continue;
    }
    cpu_relax();
  }
  StallClock clock(progress());
  const int64_t timeout_ns = int64_t(opt_.deadlock_timeout_ms_) * 1000000;
  for (;;) {
    if (!spin && help_one()) continue;
    const uint32_t key = progress_.prepare();
    if (ready()) {
      progress_.cancel();
      return WaitEnd::kReady;
    }
    if (stop_on_failure && failed()) {
      progress_.cancel();
      return WaitEnd::kFailed;
    }
    progress_.wait(key, poll_ns);
    if (clock.stalled(progress(), timeout_ns)) {
      if (!workers_.any_busy() && !ready()) return WaitEnd::kStalled;
      clock.restart();
    }
  }
}

// The orchestrator waits (inside submission, allocation or get_tensor_data) for `what`.
template <class Pred>
void Engine::orchestrator_wait(Pred&& ready, const char* what) {
  switch (wait_for_progress(ready, true, true, 2000000)) {
    case WaitEnd::kReady: return;
    case WaitEnd::kFailed: throw RunAborted{};
    case WaitEnd::kStalled:
      failure_.poison();
      abort_orchestration(std::string("deadlock: the orchestrator waits for ") + what +
                          " but no task made progress for " + std::to_string(opt_.deadlock_timeout_ms_) + " ms");
  }
}

}  // namespace pto2::detail
