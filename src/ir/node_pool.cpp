// The pool behind make_node (node_pool.h): per thread and size, a list of freed blocks and a
// chunk being carved in order. Blocks of a thread that ends go to a shared list, from which a
// thread takes them all at once when its own list and chunk run dry.
#include "pypto/ir/node_pool.h"

#include <pthread.h>

#include <atomic>
#include <mutex>

namespace pypto::ir::pool {

namespace {

constexpr size_t kChunkBytes = 64 * 1024;

struct FreeBlock {
  FreeBlock* next;
};

struct SizeState {
  FreeBlock* free = nullptr;
  char* cur = nullptr;   // the unused rest of this thread's chunk of this size
  char* end = nullptr;
};

// A thread's pools. Trivially destructible, so that a node freed while the thread's other
// thread-locals are being destroyed (or after) still finds it; Owner below hands its lists on.
struct Local {
  SizeState size[kClasses];
};

// Blocks given back by threads that ended, by size. Never destroyed: nodes may be freed during
// static destruction, after any destructor of this file would have run.
struct Shared {
  std::mutex mu;
  FreeBlock* free[kClasses] = {};
  std::atomic<bool> any[kClasses] = {};
};

Shared& shared() {
  static Shared* s = [] {
    auto* p = new Shared;
    // fork() while another thread holds the lock would leave it held in the child forever.
    pthread_atfork([] { shared().mu.lock(); }, [] { shared().mu.unlock(); }, [] { shared().mu.unlock(); });
    return p;
  }();
  return *s;
}

std::atomic<long long> g_reserved{0};   // bytes of chunks taken from the system

thread_local Local* t_local = nullptr;
thread_local bool t_ended = false;   // this thread's Owner is gone: blocks go to the shared lists

void give_to_shared(size_t cls, FreeBlock* first, FreeBlock* last) {
  Shared& s = shared();
  std::lock_guard<std::mutex> lock(s.mu);
  last->next = s.free[cls];
  s.free[cls] = first;
  s.any[cls].store(true, std::memory_order_relaxed);
}

struct Owner {
  Local local;
  ~Owner() {
    for (size_t c = 0; c < kClasses; ++c) {
      FreeBlock* first = local.size[c].free;
      if (!first) continue;
      FreeBlock* last = first;
      while (last->next) last = last->next;
      give_to_shared(c, first, last);
    }
    t_local = nullptr;
    t_ended = true;
  }
};

Local* local() {
  if (t_local || t_ended) return t_local;
  thread_local Owner owner;   // constructed on this thread's first node; destroyed when it ends
  t_local = &owner.local;
  return t_local;
}

size_t block_bytes(size_t cls) { return (cls + 1) * kGranule; }

// The slow path: the shared list of this size, else a new chunk.
void* refill(SizeState* st, size_t cls) {
  Shared& s = shared();
  if (s.any[cls].load(std::memory_order_relaxed)) {
    FreeBlock* got = nullptr;
    {
      std::lock_guard<std::mutex> lock(s.mu);
      got = s.free[cls];
      s.free[cls] = nullptr;
      s.any[cls].store(false, std::memory_order_relaxed);
    }
    if (got) {
      if (!st) {   // a thread that ended: take one, give the rest back
        if (got->next) {
          FreeBlock* last = got->next;
          while (last->next) last = last->next;
          give_to_shared(cls, got->next, last);
        }
        return got;
      }
      st->free = got->next;
      return got;
    }
  }
  const size_t bytes = block_bytes(cls);
  if (!st) {   // a thread that ended: one block (freed to the shared list)
    g_reserved.fetch_add(static_cast<long long>(bytes), std::memory_order_relaxed);
    return ::operator new(bytes);
  }
  g_reserved.fetch_add(static_cast<long long>(kChunkBytes), std::memory_order_relaxed);
  char* chunk = static_cast<char*>(::operator new(kChunkBytes));
  st->cur = chunk + bytes;
  st->end = chunk + kChunkBytes / bytes * bytes;
  return chunk;
}

}  // namespace

void* allocate(size_t cls) {
  Local* l = local();
  SizeState* st = l ? &l->size[cls] : nullptr;
  if (st) {
    if (FreeBlock* b = st->free) {
      st->free = b->next;
      return b;
    }
    const size_t bytes = block_bytes(cls);
    if (st->end - st->cur >= static_cast<std::ptrdiff_t>(bytes)) {
      void* p = st->cur;
      st->cur += bytes;
      return p;
    }
  }
  return refill(st, cls);
}

void deallocate(void* p, size_t cls) noexcept {
  auto* b = static_cast<FreeBlock*>(p);
  if (Local* l = local()) {
    b->next = l->size[cls].free;
    l->size[cls].free = b;
    return;
  }
  b->next = nullptr;
  give_to_shared(cls, b, b);
}

long long reserved_bytes() { return g_reserved.load(std::memory_order_relaxed); }

}  // namespace pypto::ir::pool
