// memory_pool.h — runtime-owned tensor storage: size-class free lists, deferred release.
//
// A PTO2Storage is referenced by its scope (1) and by every unfinished task using it. Whoever
// drops the last reference pushes it on a lock-free release stack; the orchestrator thread
// (the only allocator) drains the stack into its free lists before allocating.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "pto_orchestration_api.h"

// Lifetime: the orchestrator counts the task references it hands out (`uses`, a plain field:
// no shared cache line on the submit path). `pending` starts at a large bias; each task drops
// one reference (workers) and the end of the owning scope drops `bias - uses` (orchestrator).
// Exactly one of these read-modify-writes takes `pending` to zero: that thread releases the
// storage. No thread reads anything else of the record afterwards, so reuse is safe.
struct PTO2Storage {
  static constexpr int64_t kBias = int64_t(1) << 48;
  void* data = nullptr;
  size_t bytes = 0;         // class size
  uint32_t size_class = 0;
  PTO2Storage* next = nullptr;  // release stack / free list link
  uint64_t uses = 0;            // orchestrator only
  // Allocated in a run's outermost scope: released after the run's last task, so tasks need
  // no reference on it (orchestrator only).
  bool run_scoped = false;
  // Its owning scope has ended: a task submitted with it now uses reclaimed storage (the race
  // checker reports that; orchestrator only).
  bool scope_closed = false;
  alignas(64) std::atomic<int64_t> pending{kBias};
};

namespace pto2::detail {

class MemoryPool {
 public:
  ~MemoryPool();
  /// Orchestrator only. Returns nullptr if the limit would be exceeded (caller waits/drains).
  PTO2Storage* try_alloc(size_t bytes, size_t limit);
  /// Orchestrator: a task takes a reference.
  static void acquire(PTO2Storage* s) { ++s->uses; }
  /// Any thread: a task returns its reference.
  void task_release(PTO2Storage* s) {
    if (s->pending.fetch_sub(1, std::memory_order_acq_rel) == 1) push_released(s);
  }
  /// Orchestrator: the owning scope ended.
  void scope_release(PTO2Storage* s) {
    const int64_t drop = PTO2Storage::kBias - static_cast<int64_t>(s->uses);
    if (s->pending.fetch_sub(drop, std::memory_order_acq_rel) == drop) push_released(s);
  }
  /// Orchestrator only: move released storages to the free lists (or, quarantined, aside);
  /// calls on_free(data) for each.
  template <class F>
  size_t drain(F&& on_free) {
    PTO2Storage* s = released_.exchange(nullptr, std::memory_order_acquire);
    size_t n = 0;
    while (s) {
      PTO2Storage* next = s->next;
      on_free(s->data);
      live_bytes_ -= s->bytes;
      if (quarantine_) {
        quarantine(s);
      } else {
        s->next = free_[s->size_class];
        free_[s->size_class] = s;
      }
      s = next;
      ++n;
    }
    return n;
  }
  /// Orchestrator only: while on (race check), released storages are not reused, up to
  /// kQuarantineBytes (the oldest go back first), so a tensor used after its scope ended still
  /// names its own storage, marked scope_closed, and the use is caught at its submission.
  void set_quarantine(bool on);
  void push_released(PTO2Storage* s) {
    PTO2Storage* head = released_.load(std::memory_order_relaxed);
    do {
      s->next = head;
    } while (!released_.compare_exchange_weak(head, s, std::memory_order_release, std::memory_order_relaxed));
  }
  bool has_released() const { return released_.load(std::memory_order_acquire) != nullptr; }
  size_t live_bytes() const { return live_bytes_; }
  size_t peak_bytes() const { return peak_bytes_; }
  size_t pool_bytes() const { return pool_bytes_; }
  void reset_peak() { peak_bytes_ = live_bytes_; }

 private:
  static constexpr uint32_t kClasses = 48;
  PTO2Storage* free_[kClasses] = {};
  std::atomic<PTO2Storage*> released_{nullptr};
  static constexpr size_t kQuarantineBytes = size_t(256) << 20;
  void quarantine(PTO2Storage* s);
  std::vector<PTO2Storage*> all_;
  size_t live_bytes_ = 0, peak_bytes_ = 0, pool_bytes_ = 0;
  bool quarantine_ = false;
  std::deque<PTO2Storage*> quarantined_;   // oldest first
  size_t quarantined_bytes_ = 0;
};

}  // namespace pto2::detail
