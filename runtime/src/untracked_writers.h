// untracked_writers.h — the tasks with a write the tracker does not see (an Out / InOut / NoDep
// tensor in a MANUAL scope, a manual_dep tensor), which get_tensor_data / set_tensor_data wait
// for. Orchestrator thread only: a submission appends its id, a wait checks the ids appended
// since the last wait. (Was a counter the submission incremented and the retiring worker
// decremented: in MANUAL code, as the compiler's derived dependencies emit it, every task is
// an untracked writer, and that counter's line moved between the cores on every task.)
//
//     UntrackedWriters w;
//     w.add(raw, live);                         // task `raw` writes untracked; live(r): not retired
//     w.wait_all(live, [&](uint64_t r) { ... wait until !live(r) ... });   // then forgets them
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace pto2::detail {

class UntrackedWriters {
 public:
  /// Task `raw` writes untracked. Every kCompactAt ids the retired ones are dropped (a task's
  /// id is retired once its slot was issued again: most are answered by the orchestrator's
  /// own issued marks), so the list stays near the number of live tasks, at most the ring.
  template <class IsLive>
  void add(uint64_t raw, IsLive&& live) {
    ids_.push_back(raw);
    if (ids_.size() >= compact_at_) {
      ids_.erase(std::remove_if(ids_.begin(), ids_.end(), [&](uint64_t r) { return !live(r); }), ids_.end());
      compact_at_ = std::max(kCompactAt, 2 * ids_.size());
    }
  }
  /// Calls wait(r) for each id still live, then forgets them all (they have retired).
  template <class IsLive, class Wait>
  void wait_all(IsLive&& live, Wait&& wait) {
    for (uint64_t r : ids_)
      if (live(r)) wait(r);
    clear();
  }
  /// A run starts (or the list was waited for): none.
  void clear() {
    ids_.clear();
    compact_at_ = kCompactAt;
  }
  size_t size() const { return ids_.size(); }

 private:
  static constexpr size_t kCompactAt = 4096;
  std::vector<uint64_t> ids_;
  size_t compact_at_ = kCompactAt;
};

}  // namespace pto2::detail
