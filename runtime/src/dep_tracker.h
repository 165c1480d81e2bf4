// dep_tracker.h — automatic dependencies from overlapping regions of the same storage.
//
// Per storage (keyed by Tensor::data) the live regions, each with O(1)-ish state: its last
// writer and the readers since that write. An access collects
//   read  -> the last writer of every overlapping region                (RaW)
//   write -> the last writer and the readers of every overlapping region (WaW, WaR)
// then records itself. A write that covers a region replaces it (its tasks are now ordered
// before the writer, so later accesses reach them transitively).
//
// Regions are indexed by their first byte (ordered map) with the longest live region's length
// as the search window, so a lookup visits only candidates near the accessed bytes: O(log n +
// overlapping regions). Entries whose tasks all finished are dropped when visited, and a
// storage is swept whenever its entry count doubled since the last sweep (amortized O(1)),
// so state is bounded by live work, not by the program's history ("finished" is the caller's
// `live` predicate: a traced run counts every task live, DependencyLinker::recording_live).
// Orchestrator thread only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <map>
#include <unordered_map>
#include <vector>

#include "pto2/task.h"
#include "region.h"
#include "tile_table.h"

namespace pto2::detail {

/// Free-list allocator for the tracker's map nodes (single-threaded use per list).
template <class T>
struct PoolAllocator {
  using value_type = T;
  PoolAllocator() = default;
  template <class U>
  PoolAllocator(const PoolAllocator<U>&) {}
  struct FreeList {
    std::vector<void*> items;
    ~FreeList() {
      for (void* p : items) ::operator delete(p);
    }
  };
  static FreeList& list() {
    static thread_local FreeList l;
    return l;
  }
  T* allocate(size_t n) {
    if (n == 1) {
      FreeList& l = list();
      if (!l.items.empty()) {
        void* p = l.items.back();
        l.items.pop_back();
        return static_cast<T*>(p);
      }
    }
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) {
    if (n == 1 && list().items.size() < 65536) list().items.push_back(p);
    else ::operator delete(p);
  }
  template <class U>
  bool operator==(const PoolAllocator<U>&) const { return true; }
  template <class U>
  bool operator!=(const PoolAllocator<U>&) const { return false; }
};

/// The N bytes at `a` and at `b` are equal (N a multiple of 16): 16 bytes at a time, one test
/// at the end (no branch per word, as a fixed-size memcmp has).
template <size_t N>
inline bool same_bytes(const void* a, const void* b) {
  static_assert(N % 16 == 0, "whole 16-byte words");
  typedef uint64_t Word __attribute__((vector_size(16)));
  Word acc = {0, 0};
#pragma GCC unroll 8
  for (size_t i = 0; i < N; i += 16) {
    Word x, y;
    std::memcpy(&x, static_cast<const char*>(a) + i, 16);
    std::memcpy(&y, static_cast<const char*>(b) + i, 16);
    acc |= x ^ y;
  }
  return (acc[0] | acc[1]) == 0;
}

class DepTracker {
 public:
  struct Entry {
    Region region;
    uint64_t writer = 0;  // task raw id, 0 = none
    pto2::SmallVec<uint64_t, 6> readers;  // as TileState::readers
  };

  /// access() of tensor `t`'s region under key `t.data`, without building the region when `t`
  /// is the storage's tile prototype moved to another offset on the grid (the common case: a
  /// program walking the tiles of a tensor): one comparison of shapes and strides, then the
  /// tile's grid check (dense tiles: an alignment; strided tiles: the offset's per-axis
  /// coordinates) and hash lookup. `tracker.access(t, true, false, raw, deps, live);`
  /// Inlined into the caller's loop over a task's tensors: the common case (the storage of the
  /// previous access, a tile of its grid) costs no call; the rest is out of line.
  template <class IsLive>
  __attribute__((always_inline)) void access(const Tensor& t, bool read, bool write, uint64_t self,
                                             std::vector<uint64_t>& deps, IsLive&& live) {
    Storage& st = t.data == last_key_ ? *last_ : storage_slow(t.data);
    if (__builtin_expect(st.tiled && st.sig.form.same_view(t), 1)) {
      // A strided tile whose first byte is already a key is that tile (same shapes, strides
      // and offset): the divisions of the grid check are paid once per tile, not per access.
      const int64_t lo = st.sig.form.lo_of(t);
      if (__builtin_expect(st.sig.dense ? st.sig.lo_on_grid(lo) : st.tiles.find(lo) || st.sig.box_on_grid(t.offset), 1)) {
        access_tile(st, lo, read, write, self, deps, live);
        return;
      }
    }
    record_view(st, t, read, write, self, deps, live);
  }

  /// Records an access of task `self` and appends the tasks it must follow to `deps`.
  template <class IsLive>
  void access(const void* key, const Region& r, bool read, bool write, uint64_t self, std::vector<uint64_t>& deps,
              IsLive&& live) {
    record(storage(key), r, nullptr, read, write, self, deps, live);
  }

  /// True if accessing `r` now would have to wait for a live task (a live writer of an
  /// overlapping region; for a write also a live reader). Changes nothing. May answer true
  /// when unsure (a region off the storage's tile grid): the caller then records the access.
  template <class IsLive>
  bool must_wait(const void* key, const Region& r, bool write, IsLive&& live) {
    if (r.empty) return false;
    const Storage* known = find_storage(key);
    if (!known) return false;
    const Storage& st = *known;
    auto busy = [&](const auto& e) {
      if (e.writer && live(e.writer)) return true;
      if (write)
        for (uint64_t rd : e.readers)
          if (live(rd)) return true;
      return false;
    };
    if (st.tiled) {
      if (st.tiles.size() == 0) return false;
      if (!st.sig.valid || !st.sig.matches(r)) return true;
      const TileState* t = st.tiles.find(r.lo);
      return t && busy(*t);
    }
    for (auto it = st.by_lo.lower_bound(r.lo - st.max_len); it != st.by_lo.end() && it->first < r.hi; ++it)
      if (it->second.region.hi > r.lo && regions_overlap(it->second.region, r) && busy(it->second)) return true;
    return false;
  }

  /// Live tasks that last wrote a region overlapping `r`.
  template <class IsLive>
  void writers_of(const void* key, const Region& r, std::vector<uint64_t>& out, IsLive&& live) {
    auto sit = map_.find(key);
    if (sit == map_.end()) return;
    Storage& st = sit->second;
    st.tiles.for_each([&](int64_t lo, const TileState& t) {
      if (t.writer && live(t.writer) && regions_overlap(tile_region(st, lo), r)) out.push_back(t.writer);
    });
    for (auto it = st.by_lo.lower_bound(r.lo - st.max_len); it != st.by_lo.end() && it->first < r.hi; ++it) {
      const Entry& e = it->second;
      if (e.writer && live(e.writer) && regions_overlap(e.region, r)) out.push_back(e.writer);
    }
  }

  /// Live tasks that last wrote or read a region overlapping `r` (what a write of `r` waits for).
  template <class IsLive>
  void accessors_of(const void* key, const Region& r, std::vector<uint64_t>& out, IsLive&& live) {
    auto sit = map_.find(key);
    if (sit == map_.end()) return;
    Storage& st = sit->second;
    auto add = [&](const auto& e) {
      if (e.writer && live(e.writer)) out.push_back(e.writer);
      for (uint64_t rd : e.readers)
        if (live(rd)) out.push_back(rd);
    };
    st.tiles.for_each([&](int64_t lo, const TileState& t) {
      if (regions_overlap(tile_region(st, lo), r)) add(t);
    });
    for (auto it = st.by_lo.lower_bound(r.lo - st.max_len); it != st.by_lo.end() && it->first < r.hi; ++it)
      if (regions_overlap(it->second.region, r)) add(it->second);
  }

  void erase(const void* key) {
    map_.erase(key);
    last_key_ = nullptr;
    last_ = nullptr;
  }
  void clear() {
    map_.clear();
    last_key_ = nullptr;
    last_ = nullptr;
  }
  size_t storages() const { return map_.size(); }
  size_t entries(const void* key) const {
    auto it = map_.find(key);
    return it == map_.end() ? 0 : it->second.by_lo.size() + it->second.tiles.size();
  }

 private:
  using Map = std::multimap<int64_t, Entry, std::less<int64_t>, PoolAllocator<std::pair<const int64_t, Entry>>>;

  // Tiling fast path: while every region of a storage has the same shape and layout and is
  // aligned to its own extent (a tile grid), two regions overlap iff they are the same tile,
  // so lookups are a hash on the first byte.
  // A tile as the tensor that viewed it: any tensor of the same rank, dtype, shapes and
  // strides views the same bytes moved by its offset, so its region need not be built.
  struct TensorForm {
    uint32_t ndims = ~0u;  // ~0u: no form yet (no tensor has that rank: same_view needs no flag)
    uint32_t elem = 0;
    DataType dtype = DataType::FLOAT32;
    // A tile at element offset `o` starts at byte `base + o * elem` (dense tiles: the form's
    // region moved by the offset; strided ones: every stride of a box is positive, base 0).
    int64_t base = 0;
    uint32_t shapes[PTO2_MAX_DIMS] = {};
    int64_t strides[PTO2_MAX_DIMS] = {};
    bool valid() const { return ndims != ~0u; }
    void set(const Tensor& t, int64_t region_lo, bool dense) {
      ndims = t.ndims;
      elem = elem_bytes(t.dtype);
      dtype = t.dtype;
      base = dense ? wrap_mad(region_lo, t.offset, -static_cast<int64_t>(elem)) : 0;
      for (uint32_t d = 0; d < PTO2_MAX_DIMS; ++d) {  // every axis: same_view compares them all
        shapes[d] = t.shapes[d];
        strides[d] = t.strides[d];
      }
    }
    int64_t lo_of(const Tensor& t) const { return wrap_mad(base, t.offset, elem); }
    // Rank (no form yet: ~0u, never equal) and dtype; then the axes at a fixed count (vectorized, no per-axis
    // branch): up to rank four (most tensors) the first four axes, half the words, else all
    // eight. Axes past ndims do not change the region: a tensor whose differ (the runtime
    // makes them zero) at most misses this fast path.
    bool same_view(const Tensor& t) const {
      if (t.ndims != ndims || t.dtype != dtype) return false;
      if (ndims <= 4) return same_bytes<16>(t.shapes, shapes) & same_bytes<32>(t.strides, strides);
      return same_bytes<sizeof shapes>(t.shapes, shapes) & same_bytes<sizeof strides>(t.strides, strides);
    }
  };

  struct Signature {
    Region proto;  // the first tile seen: the others are this one at another offset
    TensorForm form;  // the tensor form of one of the tiles (access(const Tensor&))
    bool valid = false;
    bool dense = false;
    int64_t len = 0;
    bool len_pow2 = false;  // alignment by mask instead of a division
    uint32_t elem = 0, ndims = 0;
    int64_t rem = 0;
    uint32_t shapes[PTO2_MAX_DIMS] = {};
    int64_t strides[PTO2_MAX_DIMS] = {};
    uint32_t order[PTO2_MAX_DIMS] = {};  // strided tiles: the axes by stride (stride_order)
    static bool aligned(const Region& r) {
      const int64_t len = wrap_mad(r.hi, r.lo, -1);  // (wraps only for fields written by hand)
      if (r.dense) return len > 0 && r.lo % len == 0;
      if (!r.box) return false;
      for (uint32_t d = 0; d < r.ndims; ++d)
        if (r.shapes[d] == 0 || r.start[d] % r.shapes[d] != 0) return false;
      return true;
    }
    static Signature of(const Region& r) {
      Signature g;
      if (!aligned(r)) return g;
      g.proto = r;
      g.valid = true;
      g.dense = r.dense;
      g.len = wrap_mad(r.hi, r.lo, -1);
      g.len_pow2 = (g.len & (g.len - 1)) == 0;
      g.elem = r.elem;
      g.ndims = r.ndims;
      g.rem = r.rem;
      if (r.dense) return g;
      for (uint32_t d = 0; d < r.ndims; ++d) {
        g.shapes[d] = r.shapes[d];
        g.strides[d] = r.strides[d];
      }
      stride_order(g.ndims, g.strides, g.order);  // true: r is a box
      return g;
    }
    // A dense region of the signature's length starting at byte `lo` is a tile of the grid.
    bool lo_on_grid(int64_t lo) const { return len_pow2 ? (lo & (len - 1)) == 0 : lo % len == 0; }
    // A strided tile of the signature's shapes and strides at element offset `offset` is a
    // tile of the grid (as matches() decides for its region). Its first byte is then
    // `offset * elem`: every stride of a box is positive.
    bool box_on_grid(int64_t offset) const {
      int64_t start[PTO2_MAX_DIMS], r;
      if (!decompose_offset(offset, ndims, shapes, strides, order, start, r) || r != rem) return false;
      for (uint32_t d = 0; d < ndims; ++d)
        if (start[d] % shapes[d] != 0) return false;
      return true;
    }
    bool matches(const Region& r) const {
      if (dense) return r.dense && r.hi - r.lo == len && (len_pow2 ? (r.lo & (len - 1)) == 0 : r.lo % len == 0);
      if (r.dense || !r.box || r.ndims != ndims || r.elem != elem || r.rem != rem) return false;
      for (uint32_t d = 0; d < ndims; ++d)
        if (r.shapes[d] != shapes[d] || r.strides[d] != strides[d] || r.start[d] % shapes[d] != 0) return false;
      return true;
    }
  };

  struct Storage {
    bool tiled = true;
    Signature sig;
    TileTable tiles;  // tiled mode: first byte -> state
    Map by_lo;
    Map::iterator finger = by_lo.end();  // where the previous access ended (end() = none)
    int64_t max_len = 0;
    // The first sweep is due when the fresh table would grow: a small live set then never
    // makes it grow and shrink back (two allocations and rehashes per sweep).
    size_t sweep_at = TileTable::kMinCapacity / 2;
  };

  static Map::iterator erase(Storage& st, Map::iterator it) {
    if (it == st.finger) st.finger = st.by_lo.end();
    return st.by_lo.erase(it);
  }

  // lower_bound(key), walking a few steps from the finger when it is close (cache-hot nodes).
  static Map::iterator seek(Storage& st, int64_t key) {
    Map::iterator it = st.finger;
    if (it != st.by_lo.end()) {
      if (it->first >= key) {
        for (int k = 0; k < 24; ++k) {
          if (it == st.by_lo.begin()) return it;
          Map::iterator prev = std::prev(it);
          if (prev->first < key) return it;
          it = prev;
        }
      } else {
        for (int k = 0; k < 24; ++k) {
          ++it;
          if (it == st.by_lo.end() || it->first >= key) return it;
        }
      }
    }
    return st.by_lo.lower_bound(key);
  }

  // The storage's state, or nullptr if it has none (no insertion).
  Storage* find_storage(const void* key) {
    if (key == last_key_) return last_;
    auto it = map_.find(key);
    if (it == map_.end()) return nullptr;
    last_key_ = key;
    last_ = &it->second;
    return last_;
  }

  Storage& storage(const void* key) { return key == last_key_ ? *last_ : storage_slow(key); }
  // Another storage than the previous access's (out of line: accesses mostly repeat one).
  __attribute__((noinline)) Storage& storage_slow(const void* key) {
    last_ = &map_[key];
    last_key_ = key;
    return *last_;
  }

  // access(const Tensor&) off the fast path: the region built, then the general record.
  template <class IsLive>
  __attribute__((noinline)) void record_view(Storage& st, const Tensor& t, bool read, bool write, uint64_t self,
                                             std::vector<uint64_t>& deps, IsLive& live) {
    record(st, Region::of(t), &t, read, write, self, deps, live);
  }

  // access() on the storage's state; `t`, when known, is the tensor whose region `r` is.
  template <class IsLive>
  void record(Storage& st, const Region& r, const Tensor* t, bool read, bool write, uint64_t self,
              std::vector<uint64_t>& deps, IsLive& live) {
    if (r.empty) return;
    if (st.tiled) {
      if (st.tiles.size() == 0 && st.by_lo.empty()) st.sig = Signature::of(r);
      if (st.sig.valid && st.sig.matches(r)) {
        if (t && !st.sig.form.valid()) st.sig.form.set(*t, r.lo, st.sig.dense);
        access_tile(st, r.lo, read, write, self, deps, live);
        return;
      }
      untile(st);  // a region of another shape or alignment: general index from now on
    }
    Entry* same = nullptr;
    auto it = seek(st, r.lo - st.max_len);
    while (it != st.by_lo.end() && it->first < r.hi) {
      Entry& e = it->second;
      if (!refresh(e, self, live)) {
        it = erase(st, it);
        continue;
      }
      if (e.region.hi > r.lo && regions_overlap(e.region, r)) {
        if (e.writer && e.writer != self) deps.push_back(e.writer);
        const bool is_same = e.region.same_as(r);
        if (write) {
          for (uint64_t rd : e.readers)
            if (rd != self) deps.push_back(rd);
          if (!is_same && region_contains(r, e.region)) {
            it = erase(st, it);
            continue;
          }
        }
        if (is_same && !same) same = &e;
      }
      ++it;
    }
    st.finger = it;  // accesses in program order are near each other: start there next time
    if (same) {
      if (write) {
        same->writer = self;
        same->readers.clear();
      } else if (read && (same->readers.empty() || same->readers.back() != self)) {
        same->readers.push_back(self);
      }
      return;
    }
    auto ins = st.by_lo.emplace_hint(it, r.lo, Entry{});
    st.finger = ins;
    Entry& e = ins->second;
    e.region = r;
    if (write) e.writer = self;
    else e.readers.push_back(self);
    if (r.hi - r.lo > st.max_len) st.max_len = r.hi - r.lo;
    if (st.by_lo.size() >= st.sweep_at) sweep(st, self, live);
  }



  template <class IsLive>
  // Inlined into every access: the common case is one hash lookup and a few stores; the
  // rare work (pruning a long readers list, sweeping the table) is out of line.
  __attribute__((always_inline)) void access_tile(Storage& st, int64_t lo, bool read, bool write, uint64_t self,
                                                  std::vector<uint64_t>& deps, IsLive& live) {
    bool inserted;
    TileState& e = st.tiles.find_or_insert(lo, self, inserted);
    if (!inserted) {
      // Only the writer's liveness is checked here: finished producers are filtered when the
      // edge is added, and the readers list is emptied by every write (pruned when it grows).
      if (e.writer && e.writer != self && !live(e.writer)) e.writer = 0;
      if (e.writer && e.writer != self) deps.push_back(e.writer);
      if (write)
        for (uint64_t rd : e.readers)
          if (rd != self) deps.push_back(rd);
    }
    if (write) {
      e.writer = self;
      e.readers.clear();
    } else if (read && (e.readers.empty() || e.readers.back() != self)) {
      if (e.readers.size() >= 16 && (e.readers.size() & (e.readers.size() - 1)) == 0) prune_cold(e, self, live);
      e.readers.push_back(self);
    }
    if (st.tiles.size() >= st.sweep_at) sweep_tiles(st, self, live);
  }

  // Drops the tiles whose tasks have all finished. First by the finished floor alone (a tile
  // whose newest task is at or below it is dead: one comparison on the table's compact heads,
  // no liveness lookups); only when that frees less than a quarter (a long task holds the
  // floor back) task by task, as prune does. The next sweep is due when the table would grow
  // (half full): a sweep scans every slot, so it runs as late as it can. When more than a
  // quarter of the slots stay in use, the table grows first, so that every sweep frees at
  // least a quarter of the slots it scans (amortized O(1) per access).
  template <class IsLive>
  __attribute__((noinline)) void sweep_tiles(Storage& st, uint64_t self, IsLive& live) {
    advance_floor(self, live);
    const size_t before = st.tiles.size();
    st.tiles.drop_finished(floor_);
    if (st.tiles.size() * 4 > before * 3) st.tiles.retain([&](int64_t, TileState& t) { return prune(t, self, live); });
    st.tiles.shrink_if_sparse();
    const size_t half = st.tiles.capacity() / 2;
    st.sweep_at = std::max<size_t>(TileTable::kMinCapacity / 2, st.tiles.size() * 2 <= half ? half : 2 * half);
  }
  // Moves floor_ up past the tasks that have finished. Only tasks before `self` (the one being
  // recorded, not yet live) are asked; each id is passed once in the tracker's life.
  template <class IsLive>
  void advance_floor(uint64_t self, IsLive& live) {
    while (floor_ + 1 < self && !live(floor_ + 1)) ++floor_;
  }
  template <class IsLive>
  __attribute__((noinline)) static void prune_cold(TileState& e, uint64_t self, IsLive& live) {
    prune(e, self, live);
  }

  // The region of the tile starting at byte `lo` (every tile has the signature's shape).
  static Region tile_region(const Storage& st, int64_t lo) {
    return st.sig.proto.at_offset(st.sig.proto.offset + (lo - st.sig.proto.lo) / st.sig.proto.elem);
  }

  static void untile(Storage& st) {
    st.tiled = false;
    st.tiles.for_each([&](int64_t lo, const TileState& t) {
      Entry e;
      e.region = tile_region(st, lo);
      e.writer = t.writer;
      e.readers = t.readers;
      const int64_t len = e.region.hi - e.region.lo;
      if (len > st.max_len) st.max_len = len;
      st.by_lo.emplace(lo, std::move(e));
    });
    st.tiles.clear();
    st.finger = st.by_lo.end();
  }

  // Drops finished tasks (other than `self`) from a writer + readers record; false if nothing
  // live remains. `self` (the task whose access is being recorded) is never dropped: it is not
  // published yet, so `live(self)` is false, but later tasks must still be ordered after it.
  // The readers keep their (submission) order.
  template <class Rec, class IsLive>
  static bool prune(Rec& e, uint64_t self, IsLive& live) {
    if (e.writer && e.writer != self && !live(e.writer)) e.writer = 0;
    uint32_t kept = 0;
    for (uint32_t j = 0; j < e.readers.size(); ++j)
      if (e.readers[j] == self || live(e.readers[j])) e.readers[kept++] = e.readers[j];
    while (e.readers.size() > kept) e.readers.pop_back();
    return e.writer != 0 || !e.readers.empty();
  }
  template <class IsLive>
  static bool refresh(Entry& e, uint64_t self, IsLive& live) {
    return prune(e, self, live);
  }

  // `self` is the task being recorded: it is not live yet (published after its accesses are
  // tracked), so it must be kept explicitly or the sweep would drop its own fresh records.
  template <class IsLive>
  static void sweep(Storage& st, uint64_t self, IsLive& live) {
    int64_t max_len = 0;
    st.finger = st.by_lo.end();
    for (auto it = st.by_lo.begin(); it != st.by_lo.end();) {
      if (!refresh(it->second, self, live)) {
        it = st.by_lo.erase(it);
      } else {
        max_len = std::max(max_len, it->second.region.hi - it->second.region.lo);
        ++it;
      }
    }
    st.max_len = max_len;
    st.sweep_at = std::max<size_t>(64, st.by_lo.size() * 2);
  }

  std::unordered_map<const void*, Storage> map_;
  const void* last_key_ = nullptr;
  Storage* last_ = nullptr;
  // Every task id <= floor_ has finished. Task ids only grow over the tracker's life (the
  // engine never reuses one, across runs too), so a finished id stays finished: clear() keeps it.
  uint64_t floor_ = 0;
};

}  // namespace pto2::detail
