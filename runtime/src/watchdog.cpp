// watchdog.cpp — what a stall of the orchestrator's waits means (the loop is the Watchdog's,
// watchdog.h): a deadlock inside the run's orchestration, or tasks stuck at its tail.
#include "engine.h"

namespace pto2::detail {

// The orchestrator's wait for `what` stalled: the run deadlocked, and the stuck tasks keep
// their slots (the runtime is poisoned).
void Engine::orchestrator_stalled(const char* what) {
  failure_.poison();
  abort_orchestration(std::string("deadlock: the orchestrator waits for ") + what +
                      " but no task made progress for " + std::to_string(opt_.deadlock_timeout_ms_) + " ms");
}

// Waits for the tail, running ready tasks meanwhile (as an OpenMP master thread does at a
// taskwait: the orchestrator's core is free now). A stall fails the run and poisons the
// runtime (the stuck tasks keep their slots).
void Engine::wait_for_tail() {
  if (watchdog_.wait(WaitHooks{*this}, [this] { return inflight() == 0; }, false, false, 20000000) !=
      Watchdog::WaitEnd::kStalled)
    return;
  std::string pending;
  int listed = 0;
  for (uint32_t i = 0; i < ring_.size() && listed < 8; ++i) {
    const TaskSlot& s = ring_.at(i);
    if (!s.free.load() && !s.done.load()) {
      pending += (listed ? ", " : "") + describe_slot(s, s.raw.load()) + " fanin=" + std::to_string(s.fanin.load());
      ++listed;
    }
  }
  fail("deadlock: " + std::to_string(inflight()) + " task(s) can never run: " + pending);
  failure_.poison();
}

}  // namespace pto2::detail
