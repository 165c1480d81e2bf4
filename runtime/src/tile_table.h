// tile_table.h — flat hash map from a tile's first byte to its access state (last writer and
// the readers since).
//
// The dependency tracker's hot path: while a storage is accessed as a grid of equal,
// aligned tiles, every access is one lookup here. Open addressing with linear probing,
// Fibonacci hashing of the key, load factor <= 1/2. Two parallel arrays: a compact head per
// slot (key and the newest task that touched the tile, 16 bytes) and the state (72 bytes).
// Probing and the periodic sweep of finished tiles (drop_finished: the tracker calls it when
// the table doubled since the last sweep, amortized O(1) per access) read the heads only, so a
// sweep walks a sixth of the memory it would with the states inline. Orchestrator thread only.
#pragma once

#include <cstdint>
#include <memory>

#include "pto2/task.h"

namespace pto2::detail {

struct TileState {
  uint64_t writer = 0;  // task raw id, 0 = none
  // Tasks that read since that write. Six inline: a tile read by up to six tasks between two
  // writes (every Task-Bench pattern, stencils of radius 2) never allocates.
  pto2::SmallVec<uint64_t, 6> readers;
};

class TileTable {
 public:
  TileTable() { reset(kMinCapacity); }

  /// The state of `key`, stamped as touched by task `self` (a task id, >= 1: every task named
  /// in the state is <= the stamp); a fresh (empty) one is inserted when absent. The reference
  /// is valid until the next insertion, drop_finished() or retain().
  TileState& find_or_insert(int64_t key, uint64_t self, bool& inserted) {
    if ((size_ + 1) * 2 > capacity_) reset_keeping(capacity_ * 2);
    size_t i = home(key);
    while (heads_[i].newest) {
      if (heads_[i].key == key) {
        if (self > heads_[i].newest) heads_[i].newest = self;
        inserted = false;
        return states_[i];
      }
      i = (i + 1) & mask_;
    }
    heads_[i].key = key;
    heads_[i].newest = self;
    states_[i].writer = 0;
    states_[i].readers.clear();
    ++size_;
    inserted = true;
    return states_[i];
  }

  /// The state of `key`, or nullptr.
  const TileState* find(int64_t key) const {
    for (size_t i = home(key); heads_[i].newest; i = (i + 1) & mask_)
      if (heads_[i].key == key) return &states_[i];
    return nullptr;
  }

  /// Drops every entry whose stamp is <= `floor` (all its tasks are at or below it), reading
  /// the heads only.
  void drop_finished(uint64_t floor) {
    const Head* h = heads_.get();  // erase_at moves entries, never the array
    for (size_t i = 0; i < capacity_;) {
      // One unsigned comparison: an empty slot's 0 wraps around to the largest value.
      if (h[i].newest - 1 < floor) {
        erase_at(i);  // slot i now holds a later entry of the run (or nothing): look again
        continue;
      }
      ++i;
    }
    shrink_if_sparse();
  }

  /// Keeps only the entries for which keep(key, state) is true (it may edit the state; it
  /// may be asked twice about one entry). In place: deleting shifts the rest of the probe
  /// run back, so no array is reallocated unless the table is far too large.
  template <class Keep>
  void retain(Keep&& keep) {
    for (size_t i = 0; i < capacity_;) {
      if (heads_[i].newest && !keep(heads_[i].key, states_[i])) {
        erase_at(i);
        continue;
      }
      ++i;
    }
    shrink_if_sparse();
  }

  template <class F>
  void for_each(F&& f) const {
    for (size_t i = 0; i < capacity_; ++i)
      if (heads_[i].newest) f(heads_[i].key, states_[i]);
  }

  size_t size() const { return size_; }
  /// Slots in the array: an insertion that would make size() exceed capacity() / 2 first
  /// doubles it (rehashing every entry).
  size_t capacity() const { return capacity_; }
  void clear() { reset(kMinCapacity); }

 private:
  static constexpr size_t kMinCapacity = 64;
  struct Head {
    int64_t key = 0;
    uint64_t newest = 0;  // 0: empty slot
  };

  size_t home(int64_t key) const {
    return static_cast<size_t>((static_cast<uint64_t>(key) * 0x9E3779B97F4A7C15ull) >> shift_);
  }

  void reset(size_t capacity) {
    heads_.reset(new Head[capacity]);
    states_.reset(new TileState[capacity]);
    capacity_ = capacity;
    mask_ = capacity - 1;
    shift_ = 64;
    for (size_t c = capacity; c > 1; c >>= 1) --shift_;
    size_ = 0;
  }

  void shrink_if_sparse() {
    if (capacity_ > kMinCapacity && size_ * 16 < capacity_) {
      size_t cap = kMinCapacity;
      while (size_ * 4 > cap) cap *= 2;
      reset_keeping(cap);
    }
  }

  // Backward-shift deletion: moves later entries of the probe run into the hole so that
  // every remaining key stays reachable from its home slot without tombstones.
  void erase_at(size_t hole) {
    heads_[hole].newest = 0;
    --size_;
    for (size_t j = (hole + 1) & mask_; heads_[j].newest; j = (j + 1) & mask_) {
      const size_t h = home(heads_[j].key);
      // Entry j may fill the hole iff its home is not cyclically in (hole, j].
      const bool home_after_hole = hole <= j ? (h > hole && h <= j) : (h > hole || h <= j);
      if (home_after_hole) continue;
      heads_[hole] = heads_[j];
      states_[hole].writer = states_[j].writer;
      states_[hole].readers = std::move(states_[j].readers);
      heads_[j].newest = 0;
      hole = j;
    }
  }

  // Re-inserts the used slots into fresh arrays of `capacity` slots.
  void reset_keeping(size_t capacity) {
    std::unique_ptr<Head[]> old_heads = std::move(heads_);
    std::unique_ptr<TileState[]> old_states = std::move(states_);
    const size_t old_capacity = capacity_;
    reset(capacity);
    for (size_t j = 0; j < old_capacity; ++j) {
      if (!old_heads[j].newest) continue;
      size_t i = home(old_heads[j].key);
      while (heads_[i].newest) i = (i + 1) & mask_;
      heads_[i] = old_heads[j];
      states_[i].writer = old_states[j].writer;
      states_[i].readers = std::move(old_states[j].readers);
      ++size_;
    }
  }

  std::unique_ptr<Head[]> heads_;
  std::unique_ptr<TileState[]> states_;
  size_t capacity_ = 0, mask_ = 0, size_ = 0;
  int shift_ = 64;
};

}  // namespace pto2::detail
