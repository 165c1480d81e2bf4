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
  poll_for_tail();
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

// The run's last tasks usually end within microseconds of the orchestrator's own: it polls for
// them up to spin_us (running what becomes ready) before the wait above sleeps, since waking
// from a futex takes 10-25 us on a VM. The tiled-GEMM program's run (four ~29 us tasks on two
// threads): 59 us when the orchestrator saw the last retirement while polling, 76-92 us in a
// third of the runs when it slept through it. Only when it runs tasks too: its CPU is then
// its own (the workers are kept off it), where an orchestrator that does not help would take
// a worker's.
void Engine::poll_for_tail() {
  if (!opt_.orchestrator_helps_ || opt_.spin_us_ == 0) return;
  const int64_t deadline = now_ns() + int64_t(opt_.spin_us_) * 1000;
  for (uint32_t it = 1; inflight() != 0; ++it) {
    if (help_one()) continue;
    if ((it & 15) == 0 && now_ns() > deadline) return;
    cpu_relax();
  }
}

}  // namespace pto2::detail
