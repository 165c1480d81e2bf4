// dep_tracker.h — automatic dependencies from overlapping regions of the same storage.
//
// Per storage (keyed by Tensor::data) a short list of live regions, each with O(1)-ish state:
// its last writer and the readers since that write. An access collects
//   read  -> the last writer of every overlapping region           (RaW)
//   write -> the last writer and the readers of every overlapping region (WaW, WaR)
// then records itself. A write that covers a region replaces it (its tasks are now ordered
// before the writer, so later accesses reach them transitively). Entries whose tasks all
// finished are pruned on the way, so the list holds live work only: lookup cost does not grow
// with the program's history. Used only by the orchestrator thread (no locking).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "region.h"

namespace pto2::detail {

class DepTracker {
 public:
  struct Entry {
    Region region;
    uint64_t writer = 0;  // task raw id, 0 = none
    std::vector<uint64_t> readers;
  };

  /// Records an access of task `self` and appends the tasks it must follow to `deps`.
  template <class IsLive>
  void access(const void* key, const Region& r, bool read, bool write, uint64_t self, std::vector<uint64_t>& deps,
              IsLive&& live) {
    if (r.empty) return;
    std::vector<Entry>& list = map_[key];
    int32_t same = -1;
    for (size_t i = 0; i < list.size();) {
      Entry& e = list[i];
      if (e.writer && e.writer != self && !live(e.writer)) e.writer = 0;
      for (size_t j = 0; j < e.readers.size();) {
        if (e.readers[j] != self && !live(e.readers[j])) {
          e.readers[j] = e.readers.back();
          e.readers.pop_back();
        } else {
          ++j;
        }
      }
      if (e.writer == 0 && e.readers.empty()) {
        remove_at(list, i);
        continue;
      }
      if (regions_overlap(e.region, r)) {
        if (e.writer && e.writer != self) deps.push_back(e.writer);
        if (write) {
          for (uint64_t rd : e.readers)
            if (rd != self) deps.push_back(rd);
          if (!e.region.same_as(r) && region_contains(r, e.region)) {
            remove_at(list, i);
            continue;
          }
        }
        if (same < 0 && e.region.same_as(r)) same = static_cast<int32_t>(i);
      }
      ++i;
    }
    if (same >= 0) {
      Entry& e = list[same];
      if (write) {
        e.writer = self;
        e.readers.clear();
      } else if (read) {
        if (e.readers.empty() || e.readers.back() != self) e.readers.push_back(self);
      }
      return;
    }
    list.emplace_back();
    Entry& e = list.back();
    e.region = r;
    if (write) e.writer = self;
    else e.readers.push_back(self);
  }

  /// Live tasks that last wrote a region overlapping `r`.
  template <class IsLive>
  void writers_of(const void* key, const Region& r, std::vector<uint64_t>& out, IsLive&& live) {
    auto it = map_.find(key);
    if (it == map_.end()) return;
    for (const Entry& e : it->second)
      if (e.writer && live(e.writer) && regions_overlap(e.region, r)) out.push_back(e.writer);
  }

  void erase(const void* key) { map_.erase(key); }
  void clear() { map_.clear(); }
  size_t storages() const { return map_.size(); }

 private:
  static void remove_at(std::vector<Entry>& list, size_t i) {
    if (i + 1 != list.size()) list[i] = std::move(list.back());
    list.pop_back();
  }
  std::unordered_map<const void*, std::vector<Entry>> map_;
};

}  // namespace pto2::detail
