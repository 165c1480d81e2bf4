// watchdog.cpp — the wait for the tail of a run (every task retired), reporting the stuck
// tasks when nothing can progress. The wait loop itself is in watchdog.h.
#include "watchdog.h"

namespace pto2::detail {

// Completed = submitted - in flight (undeferred tasks finish within their submission, so only
// ring tasks are ever in flight); both read relaxed, clamped so a lagging read stays sensible.
void Engine::run_progress(uint64_t* submitted, uint64_t* completed) const noexcept {
  const uint64_t sub = pub_submitted_.load(std::memory_order_relaxed);
  const uint64_t ring = pub_total_submitted_.load(std::memory_order_relaxed);
  const uint64_t retired = progress();
  const uint64_t inflight = ring > retired ? ring - retired : 0;
  if (submitted) *submitted = sub;
  if (completed) *completed = sub > inflight ? sub - inflight : 0;
}

// Waits for the tail, running ready tasks meanwhile (as an OpenMP master thread does at a
// taskwait: the orchestrator's core is free now). A stall fails the run and poisons the
// runtime (the stuck tasks keep their slots).
void Engine::wait_for_tail() {
  if (wait_for_progress([this] { return inflight() == 0; }, false, false, 20000000) != WaitEnd::kStalled) return;
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
