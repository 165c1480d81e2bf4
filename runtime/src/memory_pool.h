// memory_pool.h — runtime-owned tensor storage: size-class free lists, deferred release.
//
// A PTO2Storage is referenced by its scope (1) and by every unfinished task using it. Whoever
// drops the last reference pushes it on a lock-free release stack; the orchestrator thread
// (the only allocator) drains the stack into its free lists before allocating.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "pto_orchestration_api.h"

struct PTO2Storage {
  void* data = nullptr;
  size_t bytes = 0;         // class size
  uint32_t size_class = 0;
  std::atomic<int64_t> refs{0};
  PTO2Storage* next = nullptr;  // release stack / free list link
};

namespace pto2::detail {

class MemoryPool {
 public:
  ~MemoryPool();
  /// Orchestrator only. Returns nullptr if the limit would be exceeded (caller waits/drains).
  PTO2Storage* try_alloc(size_t bytes, size_t limit);
  /// Any thread: drop one reference.
  void release(PTO2Storage* s) {
    if (s->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      PTO2Storage* head = released_.load(std::memory_order_relaxed);
      do {
        s->next = head;
      } while (!released_.compare_exchange_weak(head, s, std::memory_order_release, std::memory_order_relaxed));
    }
  }
  /// Orchestrator only: move released storages to the free lists; calls on_free(data) for each.
  template <class F>
  size_t drain(F&& on_free) {
    PTO2Storage* s = released_.exchange(nullptr, std::memory_order_acquire);
    size_t n = 0;
    while (s) {
      PTO2Storage* next = s->next;
      on_free(s->data);
      live_bytes_ -= s->bytes;
      s->next = free_[s->size_class];
      free_[s->size_class] = s;
      s = next;
      ++n;
    }
    return n;
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
  std::vector<PTO2Storage*> all_;
  size_t live_bytes_ = 0, peak_bytes_ = 0, pool_bytes_ = 0;
};

}  // namespace pto2::detail
