// options_check.h — RuntimeOptions checks shared by pto2::Runtime and L3Runtime (whose chip
// runtimes are created on first use: a bad chip option is refused when the L3Runtime is
// built, not at its first task).
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>

#include "pto2/runtime.h"

namespace pto2::detail {

// A cluster pairs one AIC and one AIV worker, so more clusters than min(aic, aiv) cannot run;
// the runtime used to cap such a request silently (4 clusters on 1 AIC + 2 AIV workers ran 1).
inline void check_clusters(const RuntimeOptions& o, const char* what) {
  const uint32_t pairs = std::min(o.aic_workers_, o.aiv_workers_);
  if (o.clusters_ <= pairs) return;
  throw std::invalid_argument(std::string(what) + ": clusters " + std::to_string(o.clusters_) +
                              " is more than min(aic_workers " + std::to_string(o.aic_workers_) + ", aiv_workers " +
                              std::to_string(o.aiv_workers_) + ") = " + std::to_string(pairs) +
                              " (a cluster pairs one AIC and one AIV worker); set clusters to at most " +
                              std::to_string(pairs) + " (0 = min(aic, aiv)) or add workers");
}

// In-process chips are threads of this process, each with its own Runtime once used: the bound
// of RuntimeOptions' worker counts. Above it (up to 2^32 - 1 could be asked for) threads were
// started until the system refused one, and the run failed as "Resource temporarily
// unavailable"; 0 chips had no thread to run a next-level task.
constexpr uint32_t kMaxInProcessChips = 4096;

inline void check_inprocess_chips(uint32_t chips) {
  if (chips >= 1 && chips <= kMaxInProcessChips) return;
  throw std::invalid_argument("L3Options: chips " + std::to_string(chips) + " is out of range 1.." +
                              std::to_string(kMaxInProcessChips) +
                              " for the in-process transport (each chip is a thread of this process)");
}

}  // namespace pto2::detail
