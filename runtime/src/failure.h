// failure.h — the failure state of a run: the flag every thread reads per task, the first
// failure message, cancellation, and the poison a deadlock leaves behind.
//
//     FailureState f;
//     f.record("task #3 failed: ...");   // first message wins; failed() is true from now on
//     f.record("a later failure");       // dropped
//     f.message();                       // "task #3 failed: ..."
//
// The flag is written once per run and read by every thread on every task: the object is a
// cache line of its own (alignas), never shared with state written per submission. Waking
// the threads that wait on a failure is the owner's job (Engine::fail).
#pragma once

#include <atomic>
#include <mutex>
#include <string>

namespace pto2::detail {

class alignas(64) FailureState {
 public:
  /// The run failed or was cancelled (any thread).
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  /// The run was cancelled (Runtime::cancel, Ctrl-C).
  bool cancelled() const { return cancelled_.load(); }
  /// The run's message when it was cancelled before anything else failed.
  static constexpr const char* kCancelledMessage = "cancelled: the run was interrupted (Runtime::cancel or Ctrl-C)";

  /// Keeps `msg` if it is the run's first failure message, then raises the flag (any thread).
  /// After a cancellation (which cannot take the lock: it is async-signal-safe) the first message
  /// is the cancellation's: what fails then (a group wait giving up, a task cancelled) follows from it.
  void record(const std::string& msg) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (msg_.empty()) msg_ = cancelled() ? std::string(kCancelledMessage) : msg;
    }
    failed_.store(true, std::memory_order_seq_cst);
  }
  /// Raises the flag as a cancellation: atomics only, so async-signal-safe.
  void cancel() noexcept {
    cancelled_.store(true, std::memory_order_seq_cst);
    failed_.store(true, std::memory_order_seq_cst);
  }
  /// Raises the flag without a message (destruction cancels queued work).
  void stop() noexcept { failed_.store(true, std::memory_order_seq_cst); }
  /// A new run starts: no failure, no message (orchestrator thread, no task running).
  void reset() {
    failed_.store(false);
    cancelled_.store(false);
    msg_.clear();
  }
  /// The run's first failure message ("" if none).
  std::string message() {
    std::lock_guard<std::mutex> lk(mu_);
    return msg_;
  }
  /// A deadlock left tasks stuck in the ring: the runtime refuses further runs.
  bool poisoned() const { return poisoned_; }
  void poison() { poisoned_ = true; }

 private:
  std::atomic<bool> failed_{false};
  std::atomic<bool> cancelled_{false};
  std::mutex mu_;
  std::string msg_;
  bool poisoned_ = false;  // orchestrator thread only
};

}  // namespace pto2::detail
