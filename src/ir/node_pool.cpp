// The pool behind make_node (node_pool.h): per thread and size, a list of freed blocks and a
// chunk being carved in order. A thread's list that grows past kLocalFreeBytes (a thread that
// frees what another made) and the list of a thread that ends go to a shared list, which a
// thread takes whole when its own list and chunk run dry: no thread's free blocks pile up while
// another keeps taking new memory.
#include "pypto/ir/node_pool.h"

#include <pthread.h>

#include <atomic>
#include <mutex>

namespace pypto::ir::pool {

namespace {

constexpr size_t kChunkBytes = 64 * 1024;
constexpr size_t kLocalFreeBytes = 256 * 1024;

struct FreeBlock {
  FreeBlock* next;
};

// A list of free blocks with its last block and length (lists move between threads whole).
struct FreeList {
  FreeBlock* first = nullptr;
  FreeBlock* last = nullptr;
  size_t n = 0;
  void push(FreeBlock* b) {
    b->next = first;
    if (!first) last = b;
    first = b;
    ++n;
  }
  FreeBlock* pop() {
    FreeBlock* b = first;
    first = b->next;
    if (--n == 0) last = nullptr;
    return b;
  }
  void append(const FreeList& other) {   // other's blocks in front of this list's
    if (!other.n) return;
    other.last->next = first;
    if (!first) last = other.last;
    first = other.first;
    n += other.n;
  }
};

struct SizeState {
  FreeList free;
  char* cur = nullptr;   // the unused rest of this thread's chunk of this size
  char* end = nullptr;
};

// A thread's pools. Trivially destructible, so that a node freed while the thread's other
// thread-locals are being destroyed (or after) still finds it; Owner below hands its lists on.
struct Local {
  SizeState size[kClasses];
};

// Blocks handed on by threads, by size. Never destroyed: nodes may be freed during static
// destruction, after any destructor of this file would have run.
struct Shared {
  std::mutex mu;
  FreeList free[kClasses];
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

void give_to_shared(size_t cls, FreeList& list) {
  if (!list.n) return;
  Shared& s = shared();
  std::lock_guard<std::mutex> lock(s.mu);
  s.free[cls].append(list);
  s.any[cls].store(true, std::memory_order_relaxed);
  list = FreeList{};
}

// The shared list of this size, whole (empty when there is none).
FreeList take_shared(size_t cls) {
  Shared& s = shared();
  FreeList got;
  if (!s.any[cls].load(std::memory_order_relaxed)) return got;
  std::lock_guard<std::mutex> lock(s.mu);
  got = s.free[cls];
  s.free[cls] = FreeList{};
  s.any[cls].store(false, std::memory_order_relaxed);
  return got;
}

struct Owner {
  Local local;
  ~Owner() {
    for (size_t c = 0; c < kClasses; ++c) give_to_shared(c, local.size[c].free);
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

void* new_memory(size_t bytes) {
  g_reserved.fetch_add(static_cast<long long>(bytes), std::memory_order_relaxed);
  return ::operator new(bytes);
}

// The slow path: the shared list of this size, else a new chunk.
void* refill(SizeState& st, size_t cls) {
  st.free = take_shared(cls);
  if (st.free.n) return st.free.pop();
  const size_t bytes = block_bytes(cls);
  char* chunk = static_cast<char*>(new_memory(kChunkBytes));
  st.cur = chunk + bytes;
  st.end = chunk + kChunkBytes / bytes * bytes;
  return chunk;
}

// A thread whose pools are gone (its thread-locals destroyed): one block, from the shared list
// when it has one.
void* allocate_unpooled(size_t cls) {
  FreeList got = take_shared(cls);
  if (!got.n) return new_memory(block_bytes(cls));
  void* b = got.pop();
  give_to_shared(cls, got);
  return b;
}

}  // namespace

void* allocate(size_t cls) {
  Local* l = local();
  if (!l) return allocate_unpooled(cls);
  SizeState& st = l->size[cls];
  if (st.free.n) return st.free.pop();
  const size_t bytes = block_bytes(cls);
  if (st.end - st.cur >= static_cast<std::ptrdiff_t>(bytes)) {
    void* p = st.cur;
    st.cur += bytes;
    return p;
  }
  return refill(st, cls);
}

void deallocate(void* p, size_t cls) noexcept {
  auto* b = static_cast<FreeBlock*>(p);
  Local* l = local();
  if (!l) {
    FreeList one;
    one.push(b);
    give_to_shared(cls, one);
    return;
  }
  FreeList& free = l->size[cls].free;
  free.push(b);
  if (free.n * block_bytes(cls) > kLocalFreeBytes) give_to_shared(cls, free);
}

long long reserved_bytes() { return g_reserved.load(std::memory_order_relaxed); }

}  // namespace pypto::ir::pool
