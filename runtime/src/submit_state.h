// submit_state.h — the orchestrator's submission counters: the next task id, the tasks of
// the run (submitted, dummy) and of the Runtime's life in the ring, published for
// Runtime::progress, and what the throttle remembers between submissions.
//
//     const uint64_t raw = st.take_id();   // task ids count from 1 over the Runtime's life
//     st.count_in_ring();                  // published to the ring: in flight until it retires
//     st.count_submitted();                // one more task of this run (published, relaxed)
//     st.inflight(retired);                // ring tasks not yet retired
//
// Written on every submission (orchestrator thread): a cache line of its own, never shared
// with what the workers read per task. The submission code itself is the Engine's (submit.cpp,
// short_path.h): it wires the kernel table, the ring, the linker and the worker pool.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace pto2::detail {

class alignas(64) SubmitState {
 public:
  /// The id the next submission takes.
  uint64_t next_id() const { return next_raw_; }
  uint64_t take_id() { return next_raw_++; }

  /// A run starts: no task submitted in it yet.
  void begin_run() {
    submitted_ = dummy_ = 0;
    publish();
  }
  /// One more task of this run (ring or undeferred), published for progress().
  void count_submitted() {
    ++submitted_;
    publish();
  }
  void count_dummy() { ++dummy_; }
  /// A task was published to the ring (published with the next count_submitted()).
  void count_in_ring() { ++total_submitted_; }
  uint64_t submitted() const { return submitted_; }
  uint64_t dummy() const { return dummy_; }

  /// Ring tasks not yet retired, given the tasks `retired` so far.
  int64_t inflight(uint64_t retired) const { return static_cast<int64_t>(total_submitted_ - retired); }
  /// Nothing is in flight; remembered while nothing is submitted to the ring, so that
  /// `retired()` (a sum over the threads) is asked only when a ring task was published since.
  template <class Retired>
  bool quiet(Retired&& retired) {
    if (quiet_at_ == total_submitted_) return true;
    if (inflight(retired()) != 0) return false;
    quiet_at_ = total_submitted_;
    return true;
  }
  /// Any thread (Runtime::progress): the run's tasks submitted and completed; `retired()`
  /// counts the ring tasks retired so far.
  template <class Retired>
  void progress(Retired&& retired, uint64_t* submitted, uint64_t* completed) const noexcept {
    // Completed = submitted - in flight (undeferred tasks finish within their submission, so
    // only ring tasks are ever in flight); both read relaxed, clamped so a lagging read stays
    // sensible.
    const uint64_t sub = pub_submitted_.load(std::memory_order_relaxed);
    const uint64_t ring = pub_total_submitted_.load(std::memory_order_relaxed);
    const uint64_t done = retired();
    const uint64_t inflight = ring > done ? ring - done : 0;
    if (submitted) *submitted = sub;
    if (completed) *completed = sub > inflight ? sub - inflight : 0;
  }

  /// The throttle's cache of the head of the ready queue of type `t` (MpmcQueue::size_at_least).
  size_t& head_seen(int t) { return ready_head_seen_[t]; }
  /// A failing undeferred kernel's message (empty between failures; reused, so no string is
  /// made per task).
  std::string& undeferred_err() { return undeferred_err_; }

 private:
  void publish() {
    pub_submitted_.store(submitted_, std::memory_order_relaxed);
    pub_total_submitted_.store(total_submitted_, std::memory_order_relaxed);
  }

  uint64_t next_raw_ = 1;         // next task id
  uint64_t total_submitted_ = 0;  // tasks published to the ring (never undeferred ones)
  // Published for progress (relaxed stores by the orchestrator, one per submission):
  // submitted_ of this run, and total_submitted_.
  std::atomic<uint64_t> pub_submitted_{0};
  std::atomic<uint64_t> pub_total_submitted_{0};
  uint64_t quiet_at_ = ~uint64_t(0);  // total_submitted_ when inflight() was last seen 0
  // The head of each ready queue as last read by the orchestrator: the throttle asks about
  // the queue's length on every submission.
  size_t ready_head_seen_[2] = {0, 0};
  std::string undeferred_err_;
  uint64_t submitted_ = 0, dummy_ = 0;  // this run
};

}  // namespace pto2::detail
