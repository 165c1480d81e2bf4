// tile_table.h — flat hash map from a tile's first byte to its access state (last writer and
// the readers since).
//
// The dependency tracker's hot path: while a storage is accessed as a grid of equal,
// aligned tiles, every access is one lookup here. Open addressing with linear probing over
// one array of slots (key and state together: a probe and the state it finds share a cache
// line), Fibonacci hashing of the key, load factor <= 1/2. Beside it a compact array of each
// slot's stamp, the newest task that touched the tile (0 = empty slot, 8 bytes): the periodic
// sweep of finished tiles (drop_finished: the tracker calls it when the table would grow,
// amortized O(1) per access) reads the stamps, not the 80-byte slots. Orchestrator thread only.
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
    if (size_ >= half_) reset_keeping(capacity_ * 2);
    // The arrays and mask in locals: a store of a stamp or writer (uint64_t) could alias the
    // members (size_t), which the compiler would then reload after every store.
    uint64_t* const newest = newest_.get();
    Slot* const slots = slots_.get();
    const size_t mask = mask_;
    size_t i = home(key);
    while (uint64_t stamp = newest[i]) {
      if (slots[i].key == key) {
        newest[i] = stamp > self ? stamp : self;
        inserted = false;
        return slots[i].state;
      }
      i = (i + 1) & mask;
    }
    newest[i] = self;
    slots[i].key = key;
    slots[i].state.writer = 0;
    slots[i].state.readers.clear();
    ++size_;
    inserted = true;
    return slots[i].state;
  }

  /// The state of `key`, or nullptr.
  const TileState* find(int64_t key) const {
    for (size_t i = home(key); newest_[i]; i = (i + 1) & mask_)
      if (slots_[i].key == key) return &slots_[i].state;
    return nullptr;
  }

  /// Drops every entry whose stamp is <= `floor` (all its tasks are at or below it), reading
  /// the stamps only (and the keys of the entries a deletion moves).
  void drop_finished(uint64_t floor) {
    const uint64_t* stamp = newest_.get();
    remove_if([stamp, floor](size_t i) { return stamp[i] <= floor; });
  }

  /// Keeps only the entries for which keep(key, state) is true (it may edit the state). In
  /// place: no array is reallocated.
  template <class Keep>
  void retain(Keep&& keep) {
    remove_if([&](size_t i) { return !keep(slots_[i].key, slots_[i].state); });
  }

  /// After a sweep (drop_finished / retain): shrinks the arrays once the table was left under
  /// 1/16 full by kSparseSweeps sweeps in a row. A single sparse sweep is usually a moment
  /// when the workers had caught up with every task: shrinking then would only make the
  /// table grow back through every size (a reallocation and rehash each) as the live work
  /// returns. A table kept large and sparse costs memory only: a sweep comes due after
  /// capacity / 2 insertions, so its scan stays O(1) per insertion.
  void shrink_if_sparse() {
    if (capacity_ <= kMinCapacity || size_ * 16 >= capacity_) {
      sparse_sweeps_ = 0;
      return;
    }
    if (++sparse_sweeps_ < kSparseSweeps) return;
    sparse_sweeps_ = 0;
    size_t cap = kMinCapacity;
    while (size_ * 4 > cap) cap *= 2;
    reset_keeping(cap);
  }
  static constexpr int kSparseSweeps = 4;

  template <class F>
  void for_each(F&& f) const {
    for (size_t i = 0; i < capacity_; ++i)
      if (newest_[i]) f(slots_[i].key, slots_[i].state);
  }

  size_t size() const { return size_; }
  /// The slot where `key`'s probe starts (tests build colliding and wrapping runs with it).
  size_t home_slot(int64_t key) const { return home(key); }
  /// Slots in the array: an insertion that would make size() exceed capacity() / 2 first
  /// doubles it (rehashing every entry).
  size_t capacity() const { return capacity_; }
  void clear() {
    reset(kMinCapacity);
    sparse_sweeps_ = 0;
  }

  /// The smallest (and first) capacity: the table never shrinks below it.
  static constexpr size_t kMinCapacity = 64;

 private:
  struct Slot {
    int64_t key = 0;
    TileState state;
  };

  size_t home(int64_t key) const {
    return static_cast<size_t>((static_cast<uint64_t>(key) * 0x9E3779B97F4A7C15ull) >> shift_);
  }

  void reset(size_t capacity) {
    slots_.reset(new Slot[capacity]);
    newest_.reset(new uint64_t[capacity]());
    capacity_ = capacity;
    half_ = capacity / 2;
    mask_ = capacity - 1;
    shift_ = 64;
    for (size_t c = capacity; c > 1; c >>= 1) --shift_;
    size_ = 0;
  }

  // Moves slot `from`'s entry into the empty slot `to`.
  void move_entry(size_t from, size_t to) {
    newest_[to] = newest_[from];
    slots_[to].key = slots_[from].key;
    slots_[to].state.writer = slots_[from].state.writer;
    slots_[to].state.readers = std::move(slots_[from].state.readers);
    newest_[from] = 0;
  }

  // Deletes the entries of the used slots i for which drop(i) is true, in one pass: each
  // kept entry moves back to the first empty slot from its home (the slot it would be
  // inserted at now), so every remaining key stays reachable without tombstones. One
  // backward-shift deletion per entry would walk the rest of its probe run again for every
  // deletion in the run; here each run is walked once, and a kept entry's home is computed
  // only when its run has a hole before it.
  template <class Drop>
  void remove_if(Drop&& drop) {
    if (size_ == 0) return;
    uint64_t* stamp = newest_.get();
    // Start after an empty slot (at most half the slots are used): no probe run crosses it,
    // so the home of every entry met lies in the part of the pass already done, where the
    // slots are final. The pass is two plain ranges: (start, capacity) then [0, start).
    size_t start = 0;
    while (stamp[start]) ++start;
    size_t holes = 0;  // slots emptied in the current run: none, and no entry of it can move
    auto visit = [&](size_t i) {
      if (!stamp[i]) {  // an empty slot ends the run (the pass only empties slots behind it)
        holes = 0;
      } else if (drop(i)) {
        stamp[i] = 0;
        --size_;
        ++holes;
      } else if (holes) {
        size_t j = home(slots_[i].key);
        while (j != i && stamp[j]) j = (j + 1) & mask_;
        if (j != i) move_entry(i, j);  // fills one hole, leaves one at i
      }
    };
    for (size_t i = start + 1; i < capacity_; ++i) visit(i);
    for (size_t i = 0; i < start; ++i) visit(i);
  }

  // Re-inserts the used slots into fresh arrays of `capacity` slots (out of line: rare, and
  // find_or_insert is inlined into every access).
  __attribute__((noinline)) void reset_keeping(size_t capacity) {
    std::unique_ptr<Slot[]> old_slots = std::move(slots_);
    std::unique_ptr<uint64_t[]> old_newest = std::move(newest_);
    const size_t old_capacity = capacity_;
    reset(capacity);
    for (size_t j = 0; j < old_capacity; ++j) {
      if (!old_newest[j]) continue;
      size_t i = home(old_slots[j].key);
      while (newest_[i]) i = (i + 1) & mask_;
      newest_[i] = old_newest[j];
      slots_[i].key = old_slots[j].key;
      slots_[i].state.writer = old_slots[j].state.writer;
      slots_[i].state.readers = std::move(old_slots[j].state.readers);
      ++size_;
    }
  }

  std::unique_ptr<Slot[]> slots_;
  std::unique_ptr<uint64_t[]> newest_;  // per slot: the stamp, 0 = empty
  size_t capacity_ = 0, mask_ = 0, size_ = 0;
  size_t half_ = 0;  // capacity_ / 2: an insertion at this size first doubles the arrays
  int shift_ = 64;
  int sparse_sweeps_ = 0;  // sweeps in a row that left the table sparse
};

}  // namespace pto2::detail
