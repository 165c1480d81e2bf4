// kernel_timing.h — the measured run time of one kernel id, from sampled executions, for the
// one decision it serves: is the kernel *tiny* (below a limit), so that running it in place
// beats shipping it to a worker?
//
// A moving average (weight 1/4) of samples clipped at 4 x the limit. One run of 4 x the limit
// or longer lifts any tiny average over the limit (a kernel that became slow stops running in
// place at once: misjudging a long kernel as tiny would serialise it on the orchestrator);
// the clipping bounds how far one run stretched by preemption can lift it, so a tiny kernel
// is tiny again after a few samples instead of hundreds.
//
//     KernelTiming t;                 // not measured: t.average_ns() == -1
//     t.record(40, 100);              // tiny
//     t.record(2000000, 100);         // one 2 ms outlier: 40 + (400 - 40) / 4 = 130, not tiny
//     t.record(40, 100); t.record(40, 100);   // 107, then 90: tiny again
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
    const int64_t sample = std::min(ns, 4 * limit_ns);
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
