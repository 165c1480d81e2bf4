// util.h — small concurrency helpers: cpu pause, clock, futex-based wait point, bounded MPMC queue.
#pragma once

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <memory>
#include <thread>

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace pto2::detail {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline void futex_wait(std::atomic<uint32_t>* addr, uint32_t expected, int64_t timeout_ns) {
  struct timespec ts;
  ts.tv_sec = timeout_ns / 1000000000;
  ts.tv_nsec = timeout_ns % 1000000000;
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(addr), FUTEX_WAIT_PRIVATE, expected, &ts, nullptr, 0);
}

inline void futex_wake(std::atomic<uint32_t>* addr, int n) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(addr), FUTEX_WAKE_PRIVATE, n, nullptr, nullptr, 0);
}

/// An event count: waiters re-check their condition after announcing themselves, notifiers
/// bump the epoch and wake only when someone waits (one shared load on the fast path).
class WaitPoint {
 public:
  uint32_t prepare() {
    waiters_.fetch_add(1, std::memory_order_seq_cst);
    return epoch_.load(std::memory_order_seq_cst);
  }
  void cancel() { waiters_.fetch_sub(1, std::memory_order_seq_cst); }
  /// Sleeps until notified after prepare() returned `key`, or `timeout_ns`; true if notified
  /// (the epoch moved on), false on the timeout (or a spurious wake-up).
  bool wait(uint32_t key, int64_t timeout_ns) {
    futex_wait(&epoch_, key, timeout_ns);
    waiters_.fetch_sub(1, std::memory_order_seq_cst);
    return epoch_.load(std::memory_order_seq_cst) != key;
  }
  void notify_one() { notify(1); }
  void notify_all() { notify(INT_MAX); }
  /// Wakes up to `n` waiters.
  void notify(int n) {
    if (waiters_.load(std::memory_order_seq_cst) > 0) {
      epoch_.fetch_add(1, std::memory_order_seq_cst);
      futex_wake(&epoch_, n);
    }
  }
  bool has_waiters() const { return waiters_.load(std::memory_order_seq_cst) > 0; }

 private:
  std::atomic<uint32_t> epoch_{0};
  std::atomic<uint32_t> waiters_{0};
};

/// Asks for the cache line at `p` for writing (PREFETCHW: a no-op on x86 CPUs without it;
/// elsewhere the compiler's prefetch for writing).
inline void prefetch_for_write(const void* p) {
#if defined(__x86_64__)
  asm volatile("prefetchw %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p, 1, 3);
#endif
}

/// Bounded multi-producer multi-consumer queue (D. Vyukov). Capacity is a power of two.
template <class T>
class MpmcQueue {
 public:
  explicit MpmcQueue(size_t capacity = 1024) { reset(capacity); }
  void reset(size_t capacity) {
    size_t c = 2;
    while (c < capacity) c <<= 1;
    cells_.reset(new Cell[c]);
    mask_ = c - 1;
    for (size_t i = 0; i < c; ++i) cells_[i].seq.store(i, std::memory_order_relaxed);
    head_.store(0);
    tail_.store(0);
  }
  bool push(const T& v) {
    Cell* cell;
    size_t pos = tail_.load(std::memory_order_relaxed);
    for (;;) {
      cell = &cells_[pos & mask_];
      size_t seq = cell->seq.load(std::memory_order_acquire);
      intptr_t dif = static_cast<intptr_t>(seq) - static_cast<intptr_t>(pos);
      if (dif == 0) {
        // seq_cst: a full barrier (x86: the same lock cmpxchg), so a pusher's check for parked
        // consumers after push() needs no fence of its own (see empty_now).
        if (tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_seq_cst, std::memory_order_relaxed)) break;
      } else if (dif < 0) {
        return false;
      } else {
        pos = tail_.load(std::memory_order_relaxed);
      }
    }
    cell->value = v;
    cell->seq.store(pos + 1, std::memory_order_release);
    // The next push's cell was last written by the consumer that popped it a lap ago (its
    // seq): asked for ownership now, so that the next push neither waits for its seq load
    // nor leaves its stores stuck in the store buffer (stalling what the pusher does next)
    // while the line comes over. Nobody uses that cell until then (the queue is far from full).
    prefetch_for_write(&cells_[(pos + 1) & mask_]);
    return true;
  }
  bool pop(T& out) {
    Cell* cell;
    size_t pos = head_.load(std::memory_order_relaxed);
    for (;;) {
      cell = &cells_[pos & mask_];
      size_t seq = cell->seq.load(std::memory_order_acquire);
      intptr_t dif = static_cast<intptr_t>(seq) - static_cast<intptr_t>(pos + 1);
      if (dif == 0) {
        if (head_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) break;
      } else if (dif < 0) {
        return false;
      } else {
        pos = head_.load(std::memory_order_relaxed);
      }
    }
    out = cell->value;
    cell->seq.store(pos + mask_ + 1, std::memory_order_release);
    return true;
  }
  size_t size_hint() const {
    const size_t t = tail_.load(std::memory_order_relaxed), h = head_.load(std::memory_order_relaxed);
    return t > h ? t - h : 0;
  }
  /// size_hint() >= n, reading head_ (the consumers' cache line, written by every pop) only
  /// when `head_seen` — the caller's last read of it; heads only grow — leaves the question
  /// open. A producer asking about a short queue thus costs no cache miss on the consumers.
  ///
  ///     size_t seen = 0;
  ///     if (q.size_at_least(32, seen)) help();   // same answer as q.size_hint() >= 32
  bool size_at_least(size_t n, size_t& head_seen) const {
    const size_t t = tail_.load(std::memory_order_relaxed);
    if (t < head_seen + n) return false;  // t - head <= t - head_seen < n
    head_seen = head_.load(std::memory_order_relaxed);
    return t > head_seen && t - head_seen >= n;
  }
  /// Elements pushed and not popped if the head were still `head_seen` (a relaxed read of the
  /// tail only: the producers' line); with a head read earlier, at least size_hint().
  size_t size_since(size_t head_seen) const {
    const size_t t = tail_.load(std::memory_order_relaxed);
    return t > head_seen ? t - head_seen : 0;
  }
  bool empty_hint() const {
    return head_.load(std::memory_order_relaxed) >= tail_.load(std::memory_order_relaxed);
  }
  /// No element pushed and not yet popped, sequentially consistent with push()'s claim of its
  /// cell: a consumer about to park announces itself (seq_cst), then asks empty_now(); a pusher
  /// checks for parked consumers after push(). One of the two sees the other (Dekker), even
  /// while the pushed cell is still being written (pop() then fails, but empty_now() does not).
  bool empty_now() const {
    return head_.load(std::memory_order_seq_cst) >= tail_.load(std::memory_order_seq_cst);
  }

 private:
  // A cell per cache line: the producer writing cell k+1 does not take the line of cell k
  // from the consumer popping it (with 4 cells a line, a push and a pop a few cells apart
  // passed the line back and forth on every operation).
  struct alignas(64) Cell {
    std::atomic<size_t> seq;
    T value;
  };
  std::unique_ptr<Cell[]> cells_;
  size_t mask_ = 0;
  alignas(64) std::atomic<size_t> head_{0};
  alignas(64) std::atomic<size_t> tail_{0};
};

}  // namespace pto2::detail
