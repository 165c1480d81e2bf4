// tile_table.h — flat hash map from a tile's first byte to its access state (last writer and
// the readers since).
//
// The dependency tracker's hot path: while a storage is accessed as a grid of equal,
// aligned tiles, every access is one lookup here. Open addressing with linear probing over
// one array (no node allocation, one cache line per slot), Fibonacci hashing of the key,
// load factor <= 1/2. Entries are dropped in bulk by retain(), which rebuilds the array: the
// tracker calls it when the table doubled since the last sweep (amortized O(1) per access).
// Orchestrator thread only.
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

  /// The state of `key`; a fresh (empty) one is inserted when absent. The reference is valid
  /// until the next insertion or retain().
  TileState& find_or_insert(int64_t key, bool& inserted) {
    if ((size_ + 1) * 2 > capacity_) reset_keeping(capacity_ * 2);
    size_t i = home(key);
    while (slots_[i].used) {
      if (slots_[i].key == key) {
        inserted = false;
        return slots_[i].state;
      }
      i = (i + 1) & mask_;
    }
    slots_[i].used = true;
    slots_[i].key = key;
    slots_[i].state.writer = 0;
    slots_[i].state.readers.clear();
    ++size_;
    inserted = true;
    return slots_[i].state;
  }

  /// The state of `key`, or nullptr.
  const TileState* find(int64_t key) const {
    for (size_t i = home(key); slots_[i].used; i = (i + 1) & mask_)
      if (slots_[i].key == key) return &slots_[i].state;
    return nullptr;
  }

  /// Keeps only the entries for which keep(key, state) is true (it may edit the state; it
  /// may be asked twice about one entry). In place: deleting shifts the rest of the probe
  /// run back, so no array is reallocated unless the table is far too large.
  template <class Keep>
  void retain(Keep&& keep) {
    for (size_t i = 0; i < capacity_;) {
      if (slots_[i].used && !keep(slots_[i].key, slots_[i].state)) {
        erase_at(i);  // slot i now holds a later entry of the run (or nothing): look again
        continue;
      }
      ++i;
    }
    if (capacity_ > kMinCapacity && size_ * 16 < capacity_) {
      size_t cap = kMinCapacity;
      while (size_ * 4 > cap) cap *= 2;
      reset_keeping(cap);
    }
  }

  template <class F>
  void for_each(F&& f) const {
    for (size_t i = 0; i < capacity_; ++i)
      if (slots_[i].used) f(slots_[i].key, slots_[i].state);
  }

  size_t size() const { return size_; }
  void clear() { reset(kMinCapacity); }

 private:
  static constexpr size_t kMinCapacity = 64;
  struct Slot {
    int64_t key = 0;
    bool used = false;
    TileState state;
  };

  size_t home(int64_t key) const {
    return static_cast<size_t>((static_cast<uint64_t>(key) * 0x9E3779B97F4A7C15ull) >> shift_);
  }

  void reset(size_t capacity) {
    slots_.reset(new Slot[capacity]);
    capacity_ = capacity;
    mask_ = capacity - 1;
    shift_ = 64;
    for (size_t c = capacity; c > 1; c >>= 1) --shift_;
    size_ = 0;
  }

  // Backward-shift deletion: moves later entries of the probe run into the hole so that
  // every remaining key stays reachable from its home slot without tombstones.
  void erase_at(size_t hole) {
    slots_[hole].used = false;
    --size_;
    for (size_t j = (hole + 1) & mask_; slots_[j].used; j = (j + 1) & mask_) {
      const size_t h = home(slots_[j].key);
      // Entry j may fill the hole iff its home is not cyclically in (hole, j].
      const bool home_after_hole = hole <= j ? (h > hole && h <= j) : (h > hole || h <= j);
      if (home_after_hole) continue;
      slots_[hole].used = true;
      slots_[hole].key = slots_[j].key;
      slots_[hole].state.writer = slots_[j].state.writer;
      slots_[hole].state.readers = std::move(slots_[j].state.readers);
      slots_[j].used = false;
      hole = j;
    }
  }

  // Re-inserts the used slots into a fresh array of `capacity` slots.
  void reset_keeping(size_t capacity) {
    std::unique_ptr<Slot[]> old = std::move(slots_);
    const size_t old_capacity = capacity_;
    reset(capacity);
    for (size_t j = 0; j < old_capacity; ++j) {
      Slot& o = old[j];
      if (!o.used) continue;
      size_t i = home(o.key);
      while (slots_[i].used) i = (i + 1) & mask_;
      slots_[i].used = true;
      slots_[i].key = o.key;
      slots_[i].state.writer = o.state.writer;
      slots_[i].state.readers = std::move(o.state.readers);
      ++size_;
    }
  }

  std::unique_ptr<Slot[]> slots_;
  size_t capacity_ = 0, mask_ = 0, size_ = 0;
  int shift_ = 64;
};

}  // namespace pto2::detail
