// completion.h — what happens when a task finishes: retirement. The task's slot is marked
// done and freed, its fan-out list is closed and every consumer released (a consumer whose
// last producer retired becomes ready: it runs next on this thread, goes to a ready queue,
// or — a dummy, a false predicate, a cancelled run — retires at once, from a work stack, never
// by recursion), its runtime tensors go back to the memory pool, and the counters the others
// read move: tasks retired (Watchdog, SubmitState's in-flight count, Runtime::progress), the
// run's outcome counts (RunResult), live tasks with an untracked write (get_tensor_data).
//
//     Completion done(threads);                      // a member of the owner
//     Completion::on_ready(parts, idx, worker_type, &local_next, thread);  // producers all finished
//     Completion::retire(parts, idx, Completion::kRun, worker_type, &local_next, thread);  // it ran
//     Completion::finish_blocks(parts, idx, 1, worker_type, &local_next, thread);  // a block ran
//     done.retired(threads);                         // tasks retired so far
//
// `thread` is the retiring thread's stats index (WorkerPool: workers, the orchestrator, gang
// helpers); `local_next` is that worker's private "next" slot (null: none). `parts` gives
// retirement the owner's parts, this Completion among them (Engine::CompletionParts: one
// reference to the owner, so each is reached as a member, at no extra load, and a call passes
// one pointer for all of them — hence the static calls): completion(), ring() the TaskRing,
// failed(), pool() the MemoryPool, schedule(idx, worker_type, local_next) queueing a ready
// task, skipped(thread, slot, raw) telling the race checker and the trace of a false
// predicate, retired(raw) waking the Watchdog. The templates are defined and instantiated in
// completion.cpp.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "task_ring.h"

namespace pto2::detail {

/// One thread's retirement counters: its own line, written only by that thread.
struct alignas(64) RetireCounts {
  std::atomic<uint64_t> retired{0};  // over the Runtime's life; read by any thread
  uint64_t executed = 0, skipped = 0, cancelled = 0, dummy = 0;  // this run
};

class alignas(64) Completion {
 public:
  /// How a task ends: its kernel ran, its predicate was false, the run failed, or a dummy.
  enum Outcome : int { kRun = 0, kSkip = 1, kCancel = 2, kDummy = 3 };

  /// Counters for `threads` threads (by stats index).
  explicit Completion(uint32_t threads) : counts_(new RetireCounts[threads]), threads_(threads) {}

  /// A run starts (no task in flight): its outcome counts are zero.
  void begin_run() {
    for (uint32_t t = 0; t < threads_; ++t) {
      RetireCounts& c = counts_[t];
      c.executed = c.skipped = c.cancelled = c.dummy = 0;
    }
  }

  /// The outcome of a ready task decided without running it (kSkip, kCancel, kDummy), or -1:
  /// it must run.
  template <class Parts>
  static int inline_outcome(const Parts& p, TaskSlot& s) {
    if (p.failed()) return kCancel;
    if (s.kind == TaskKind::DUMMY) return kDummy;
    if (s.has_pred && !s.pred.evaluate()) return kSkip;
    return -1;
  }
  /// The producers of the task in slot `idx` have all finished: schedule it, or retire it
  /// unrun (inline_outcome).
  template <class Parts>
  static void on_ready(Parts p, uint32_t idx, int worker_type, uint32_t* local_next, uint32_t thread);
  /// The task in slot `idx` is over with `outcome`: retire it and release its consumers.
  template <class Parts>
  static void retire(Parts p, uint32_t idx, int outcome, int worker_type, uint32_t* local_next, uint32_t thread);
  /// `n` blocks of the multi-block or gang task in slot `idx` are over (run or cancelled);
  /// the last one retires it.
  template <class Parts>
  static void finish_blocks(Parts p, uint32_t idx, uint32_t n, int worker_type, uint32_t* local_next, uint32_t thread);

  /// Tasks retired so far by the first `threads` threads (the ones started); any thread.
  uint64_t retired(uint32_t threads) const {
    uint64_t n = 0;
    for (uint32_t t = 0; t < threads; ++t) n += counts_[t].retired.load(std::memory_order_acquire);
    return n;
  }
  /// Thread `thread`'s counters (read after the run).
  const RetireCounts& counts(uint32_t thread) const { return counts_[thread]; }


 private:
  std::unique_ptr<RetireCounts[]> counts_;  // by stats index; read per retirement
  uint32_t threads_;
};

}  // namespace pto2::detail
