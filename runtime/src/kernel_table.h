// kernel_table.h — the registered kernels of a Runtime and their measured run times.
//
//     KernelTable k;
//     k.add(3, "kernel_add", CoreType::AIV, &kernel_add);
//     k.registered(3);           // true: id 3 has a function
//     k.fn(3)(&ctx);             // calls it
//     k.record_ns(3, 40);        // a sampled run (any thread)
//     k.is_tiny(3);              // measured below RuntimeOptions::inline_below_ns
//
// Registration happens between runs (host thread); during a run every thread reads the table
// (workers per task, the timings also written by sampled runs): it sits on lines that nothing
// written per submission shares.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernel_timing.h"
#include "pto_orchestration_api.h"

namespace pto2::detail {

struct KernelInfo {
  std::string name;
  CoreType core = CoreType::AIV;
  PTO2KernelFn fn = nullptr;
};

// One kernel execution in kSampleEvery per thread is timed (two clock reads, which cost tens
// of ns on some machines) to keep the per-kernel average run time current; a kernel not yet
// measured is timed on every run.
constexpr uint32_t kSampleEvery = 64;
/// The largest kernel id register_kernel accepts (the table is indexed by id).
constexpr int32_t kMaxKernelId = 1000000;

class KernelTable {
 public:
  /// `tiny_below_ns`: a kernel measured faster than this is tiny (RuntimeOptions::inline_below_ns).
  explicit KernelTable(int64_t tiny_below_ns) : tiny_below_ns_(tiny_below_ns) {}
  /// Registers (or replaces) kernel `id`; its timing starts unmeasured. Throws on a bad id or
  /// a null function.
  void add(int32_t id, const std::string& name, CoreType core, PTO2KernelFn fn);
  /// Throws std::invalid_argument, naming `api`, when `add` would refuse the registration (the L3
  /// runtime checks at its own registration, before the chip runtimes exist).
  static void check(int32_t id, const std::string& name, PTO2KernelFn fn, const char* api);
  /// Kernel `k` is registered with a function.
  bool registered(int32_t k) const {
    return k >= 0 && static_cast<size_t>(k) < kernels_.size() && kernels_[static_cast<size_t>(k)].fn;
  }
  /// `k` is below the number of kernel ids with a timing (every id up to the largest registered).
  bool timed(int32_t k) const { return static_cast<size_t>(k) < timed_size_; }
  PTO2KernelFn fn(int32_t k) const { return kernels_[static_cast<size_t>(k)].fn; }
  /// Names kernel `k` for messages: "'kernel_add' (id 3)", or "id 3" when unregistered.
  std::string describe(int32_t k) const;
  /// The registered kernels by id (unregistered ids have no function).
  const std::vector<KernelInfo>& infos() const { return kernels_; }

  bool is_measured(int32_t k) const { return timing_[static_cast<size_t>(k)].measured(); }
  bool is_tiny(int32_t k) const { return timing_[static_cast<size_t>(k)].below(tiny_below_ns_); }
  /// A timed run of kernel `k` took `ns` (any thread).
  void record_ns(int32_t k, int64_t ns) { timing_[static_cast<size_t>(k)].record(ns, tiny_below_ns_); }

 private:
  std::vector<KernelInfo> kernels_;
  std::unique_ptr<KernelTiming[]> timing_;
  size_t timed_size_ = 0;
  int64_t tiny_below_ns_;
};

}  // namespace pto2::detail
