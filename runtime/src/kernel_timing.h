// kernel_timing.h — the measured run time of one kernel id, from sampled executions, for the
// one decision it serves: is the kernel *tiny* (below a limit), so that running it in place
// beats shipping it to a worker?
//
// A moving average (weight 1/4) of samples clipped at 2 x the limit. A kernel that became
// slow (runs of 2 x the limit or longer) stops being tiny after at most three samples, two
// from any average above a quarter of the limit (misjudging a long kernel as tiny would
// serialise it on the orchestrator). One run stretched by preemption does not end a typical
// tiny kernel's (average at most half the limit) tininess, and after any streak of long runs
// four tiny samples make it tiny again: without the clipping, one 2 ms outlier would ship
// the next thousands of tasks to workers.
//
//     KernelTiming t;                 // not measured: t.average_ns() == -1
//     t.record(40, 100);              // tiny
//     t.record(2000000, 100);         // a 2 ms outlier: 40 + (200 - 40) / 4 = 80, still tiny
//     t.record(2000000, 100);         // a second one: 80 + (200 - 80) / 4 = 110, not tiny
//
// Written by any thread (relaxed: a lost update only drops one sample), read at submission.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace pto2 {
namespace detail {

class KernelTiming {
 public:
  void record(int64_t ns, int64_t limit_ns) {
    const int64_t sample = std::min(ns, 2 * limit_ns);
    const int64_t old = avg_.load(std::memory_order_relaxed);
    avg_.store(old < 0 ? sample : old + (sample - old) / 4, std::memory_order_relaxed);
  }
  /// -1 until the first sample.
  int64_t average_ns() const { return avg_.load(std::memory_order_relaxed); }
  bool measured() const { return average_ns() >= 0; }
  /// Measured, and the average is below `limit_ns`.
  bool below(int64_t limit_ns) const {
    const int64_t ns = average_ns();
    return ns >= 0 && ns < limit_ns;
  }
  void reset() { avg_.store(-1, std::memory_order_relaxed); }
  void copy_from(const KernelTiming& o) { avg_.store(o.average_ns(), std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> avg_{-1};
};

}  // namespace detail
}  // namespace pto2
