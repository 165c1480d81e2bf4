// memory_pool.cpp — MemoryPool (memory_pool.h): power-of-two size classes, allocated once and
// reused through the free lists; freed only with the pool.
#include "memory_pool.h"

#include <cstdlib>

namespace pto2::detail {

MemoryPool::~MemoryPool() {
  for (PTO2Storage* s : all_) {
    std::free(s->data);
    delete s;
  }
}

void MemoryPool::quarantine(PTO2Storage* s) {
  quarantined_.push_back(s);
  quarantined_bytes_ += s->bytes;
  while (quarantined_bytes_ > kQuarantineBytes && !quarantined_.empty()) {
    PTO2Storage* old = quarantined_.front();
    quarantined_.pop_front();
    quarantined_bytes_ -= old->bytes;
    old->next = free_[old->size_class];
    free_[old->size_class] = old;
  }
}

void MemoryPool::set_quarantine(bool on) {
  quarantine_ = on;
  if (on) return;
  for (PTO2Storage* s : quarantined_) {
    s->next = free_[s->size_class];
    free_[s->size_class] = s;
  }
  quarantined_.clear();
  quarantined_bytes_ = 0;
}

PTO2Storage* MemoryPool::try_alloc(size_t bytes, size_t limit) {
  uint32_t cls = 6;  // 64 bytes minimum
  while ((size_t(1) << cls) < bytes) ++cls;
  const size_t csize = size_t(1) << cls;
  if (live_bytes_ + csize > limit) return nullptr;
  PTO2Storage* s = free_[cls];
  if (s) {
    free_[cls] = s->next;
  } else {
    // Give cached blocks of other classes back to the system if the pool would exceed the limit.
    if (pool_bytes_ + csize > limit) {
      for (uint32_t c = 0; c < kClasses && pool_bytes_ + csize > limit; ++c) {
        while (free_[c] && pool_bytes_ + csize > limit) {
          PTO2Storage* f = free_[c];
          free_[c] = f->next;
          std::free(f->data);
          f->data = nullptr;
          pool_bytes_ -= f->bytes;
          f->bytes = 0;
          f->next = nullptr;
        }
      }
    }
    void* p = std::aligned_alloc(64, csize);
    if (!p) return nullptr;
    // Reuse a record whose block was given back, else a new one.
    s = new PTO2Storage();
    all_.push_back(s);
    s->data = p;
    s->bytes = csize;
    s->size_class = cls;
    pool_bytes_ += csize;
  }
  s->uses = 0;
  s->scope_closed = false;
  s->pending.store(PTO2Storage::kBias, std::memory_order_relaxed);
  s->next = nullptr;
  live_bytes_ += csize;
  if (live_bytes_ > peak_bytes_) peak_bytes_ = live_bytes_;
  return s;
}

}  // namespace pto2::detail
