// The dependency tracker on its own: tile-grid fast path, fallback to the general index,
// RaW/WaW/WaR edges, pruning of finished tasks.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <random>
#include <set>

#include "../src/dep_tracker.h"
#include "test_util.h"

using pto2::detail::DepTracker;
using pto2::detail::Region;

namespace {
float g_store[64 * 64];
Tensor grid() {
  uint32_t sh[2] = {64, 64};
  return make_tensor_external(g_store, sh, 2, DataType::FLOAT32);
}
Region tile(uint32_t r, uint32_t c, uint32_t n = 16) {
  uint32_t sh[2] = {n, n}, off[2] = {r, c};
  return Region::of(grid().view(sh, off));
}
struct Fixture {
  DepTracker t;
  std::set<uint64_t> done;
  std::vector<uint64_t> deps;
  std::vector<uint64_t> access(const Region& r, bool read, bool write, uint64_t self) {
    deps.clear();
    t.access(g_store, r, read, write, self, deps, [this](uint64_t x) { return !done.count(x); });
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    return deps;
  }
};
using V = std::vector<uint64_t>;
}  // namespace

TEST(DepTracker, TileGridExactEdges) {
  Fixture f;
  EXPECT_EQ(f.access(tile(0, 0), false, true, 1), V{});
  EXPECT_EQ(f.access(tile(0, 16), false, true, 2), V{});   // other tile: independent
  EXPECT_EQ(f.access(tile(0, 0), true, false, 3), V{1});   // RaW
  EXPECT_EQ(f.access(tile(0, 0), true, false, 4), V{1});
  EXPECT_EQ(f.access(tile(0, 0), false, true, 5), (V{1, 3, 4}));  // WaW + WaR
  EXPECT_EQ(f.access(tile(0, 16), true, true, 6), V{2});
}

TEST(DepTracker, MisalignedViewFallsBackAndStaysExact) {
  Fixture f;
  f.access(tile(0, 0), false, true, 1);
  f.access(tile(0, 16), false, true, 2);
  f.access(tile(16, 0), false, true, 3);
  f.access(tile(16, 16), false, true, 4);
  f.access(tile(32, 32), false, true, 5);
  EXPECT_EQ(f.access(tile(8, 8), true, false, 6), (V{1, 2, 3, 4}));  // straddles four tiles
  EXPECT_EQ(f.access(tile(40, 40, 8), true, false, 7), V{5});
  uint32_t sh[2] = {64, 64}, off[2] = {0, 0};
  EXPECT_EQ(f.access(Region::of(grid().view(sh, off)), false, true, 8), (V{1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(f.access(tile(0, 0), true, false, 9), V{8});  // the covering write replaced them
}

TEST(DepTracker, FinishedTasksArePruned) {
  Fixture f;
  for (uint64_t i = 1; i <= 10000; ++i) {
    f.access(tile(static_cast<uint32_t>((i % 4) * 16), 0), false, true, i);
    f.done.insert(i);
  }
  EXPECT_LE(f.t.entries(g_store), 64u + 4u);
  EXPECT_EQ(f.access(tile(0, 0), true, false, 20000), V{});
}

TEST(DepTracker, DifferentStoragesAreIndependent) {
  DepTracker t;
  std::vector<uint64_t> deps;
  float a[16], b[16];
  uint32_t sh[1] = {16};
  auto live = [](uint64_t) { return true; };
  t.access(a, Region::of(make_tensor_external(a, sh, 1, DataType::FLOAT32)), false, true, 1, deps, live);
  t.access(b, Region::of(make_tensor_external(b, sh, 1, DataType::FLOAT32)), true, false, 2, deps, live);
  EXPECT_TRUE(deps.empty());
}

TEST(DepTracker, TileTableGrowthKeepsEveryTileState) {
  // 256 live 4x4 tiles (the flat table rehashes several times), each with a writer and six
  // readers (more than the inline reader capacity, so reader lists move between arrays).
  Fixture f;
  uint64_t id = 1;
  for (uint32_t r = 0; r < 64; r += 4)
    for (uint32_t c = 0; c < 64; c += 4) f.access(tile(r, c, 4), false, true, id++);
  for (int k = 0; k < 6; ++k)
    for (uint32_t r = 0; r < 64; r += 4)
      for (uint32_t c = 0; c < 64; c += 4) f.access(tile(r, c, 4), true, false, id++);
  EXPECT_EQ(f.t.entries(g_store), 256u);
  for (uint32_t r = 0; r < 64; r += 4) {
    for (uint32_t c = 0; c < 64; c += 4) {
      const uint64_t writer = 1 + (r / 4) * 16 + c / 4;
      V want{writer};
      for (uint64_t k = 0; k < 6; ++k) want.push_back(writer + 256 * (k + 1));
      EXPECT_EQ(f.access(tile(r, c, 4), false, true, id++), want) << "tile " << r << "," << c;
    }
  }
}

TEST(DepTracker, WritersOfAnElementInATileGrid) {
  Fixture f;
  f.access(tile(0, 0), false, true, 1);
  f.access(tile(0, 16), false, true, 2);
  f.access(tile(16, 16), false, true, 3);
  int64_t idx[2] = {17, 20};
  std::vector<uint64_t> out;
  f.t.writers_of(g_store, Region::element(grid(), idx), out, [](uint64_t) { return true; });
  EXPECT_EQ(out, V{3});
  out.clear();
  f.done.insert(3);
  f.t.writers_of(g_store, Region::element(grid(), idx), out, [&](uint64_t x) { return !f.done.count(x); });
  EXPECT_TRUE(out.empty());
}

TEST(DepTracker, MustWaitProbesWithoutRecording) {
  Fixture f;
  auto live = [&](uint64_t x) { return !f.done.count(x); };
  EXPECT_FALSE(f.t.must_wait(g_store, tile(0, 0), true, live));  // nothing known yet
  f.access(tile(0, 0), false, true, 1);                          // writer 1
  f.access(tile(0, 16), true, false, 2);                         // reader 2
  EXPECT_TRUE(f.t.must_wait(g_store, tile(0, 0), false, live));   // RaW on live 1
  EXPECT_FALSE(f.t.must_wait(g_store, tile(0, 16), false, live)); // read after read
  EXPECT_TRUE(f.t.must_wait(g_store, tile(0, 16), true, live));   // WaR on live 2
  EXPECT_FALSE(f.t.must_wait(g_store, tile(16, 16), true, live)); // untouched tile
  EXPECT_TRUE(f.t.must_wait(g_store, tile(8, 8), false, live));   // off the grid: unsure
  f.done.insert(1);
  f.done.insert(2);
  EXPECT_FALSE(f.t.must_wait(g_store, tile(0, 0), true, live));
  EXPECT_FALSE(f.t.must_wait(g_store, tile(0, 16), true, live));
  EXPECT_EQ(f.t.entries(g_store), 2u);  // probing recorded nothing
  // General index (after an off-grid access): exact overlap, live writers and readers only.
  f.access(tile(8, 8), true, false, 3);
  EXPECT_TRUE(f.t.must_wait(g_store, tile(0, 0), true, live));    // WaR on live 3 (overlaps)
  EXPECT_FALSE(f.t.must_wait(g_store, tile(0, 0), false, live));  // RaR
  EXPECT_FALSE(f.t.must_wait(g_store, tile(32, 32), true, live)); // disjoint
}

TEST(TileTable, DropFinishedMatchesAReferenceMap) {
  // Random keys (many sharing home slots and probe runs), stamped with growing task ids and
  // touched again now and then; drop_finished at a rising floor must drop exactly the entries
  // whose newest stamp is at or below it and keep every other one reachable with its state.
  using pto2::detail::TileState;
  using pto2::detail::TileTable;
  std::mt19937_64 rng(7);
  TileTable table;
  std::map<int64_t, std::pair<uint64_t, uint64_t>> ref;  // key -> (newest stamp, writer)
  uint64_t self = 0, floor = 0;
  for (int round = 0; round < 40; ++round) {
    for (int k = 0; k < 300; ++k) {
      ++self;
      const int64_t key = static_cast<int64_t>(rng() % 2048) * 64 - 4096;  // negative keys too
      bool inserted = false;
      TileState& s = table.find_or_insert(key, self, inserted);
      EXPECT_EQ(inserted, !ref.count(key));
      if (!inserted) {
        EXPECT_EQ(s.writer, ref[key].second);
      }
      s.writer = self;
      ref[key] = {self, self};
    }
    floor += 150 + rng() % 200;
    table.drop_finished(floor);
    for (auto it = ref.begin(); it != ref.end();) it = it->second.first <= floor ? ref.erase(it) : std::next(it);
    ASSERT_EQ(table.size(), ref.size()) << "round " << round;
    for (const auto& [key, v] : ref) {
      const TileState* s = table.find(key);
      ASSERT_NE(s, nullptr) << "key " << key << " lost after a sweep, round " << round;
      EXPECT_EQ(s->writer, v.second);
    }
    size_t seen = 0;
    table.for_each([&](int64_t key, const TileState&) {
      ++seen;
      EXPECT_TRUE(ref.count(key)) << "key " << key << " survived a sweep it should not have";
    });
    EXPECT_EQ(seen, ref.size());
  }
}

namespace {
// Sweeps a table whose keys all start their probes in the last four or first two slots (so
// the probe runs collide and wrap past slot 0) with drop(key, stamp) and checks it against a
// reference: exactly the kept keys remain, each reachable with its state.
template <class Sweep>
void check_wrapping_runs(uint64_t seed, Sweep&& sweep) {
  using pto2::detail::TileState;
  using pto2::detail::TileTable;
  std::mt19937_64 rng(seed);
  TileTable probe;
  const size_t cap = probe.capacity();
  std::vector<int64_t> keys;  // keys whose home is cap-4 .. cap-1, 0 or 1
  for (int64_t k = 1; keys.size() < 40; ++k)
    if ((probe.home_slot(k * 64) + 4) % cap < 6) keys.push_back(k * 64);
  for (int round = 0; round < 200; ++round) {
    TileTable table;
    std::map<int64_t, uint64_t> ref;  // key -> stamp (= writer)
    std::shuffle(keys.begin(), keys.end(), rng);
    const size_t n = 8 + rng() % 20;  // below half the capacity: no growth
    for (size_t k = 0; k < n; ++k) {
      bool inserted = false;
      table.find_or_insert(keys[k], k + 1, inserted).writer = k + 1;
      ref[keys[k]] = k + 1;
    }
    ASSERT_EQ(table.capacity(), cap);
    const uint64_t floor = rng() % (n + 1);
    sweep(table, floor, rng());
    for (auto it = ref.begin(); it != ref.end();) it = it->second <= floor ? ref.erase(it) : std::next(it);
    ASSERT_EQ(table.size(), ref.size()) << "round " << round;
    for (const auto& [key, stamp] : ref) {
      const TileState* s = table.find(key);
      ASSERT_NE(s, nullptr) << "live key " << key << " unreachable after a sweep, round " << round;
      EXPECT_EQ(s->writer, stamp);
    }
    for (size_t k = n; k < keys.size(); ++k) EXPECT_EQ(table.find(keys[k]), nullptr);
  }
}
}  // namespace

TEST(TileTable, SweepKeepsWrappingProbeRunsReachable) {
  // drop_finished: by stamp alone.
  check_wrapping_runs(11, [](pto2::detail::TileTable& t, uint64_t floor, uint64_t) { t.drop_finished(floor); });
}

TEST(TileTable, RetainKeepsWrappingProbeRunsReachable) {
  // retain: by the state (the writer), asked once per entry.
  check_wrapping_runs(12, [](pto2::detail::TileTable& t, uint64_t floor, uint64_t) {
    std::map<int64_t, int> asked;
    t.retain([&](int64_t key, pto2::detail::TileState& s) {
      ++asked[key];
      return s.writer > floor;
    });
    for (const auto& [key, times] : asked) EXPECT_EQ(times, 1) << "key " << key;
  });
}

TEST(TileTable, ShrinksOnlyAfterSparseSweepsInARow) {
  // One sweep that finds nearly every task finished (the workers caught up) must not shrink
  // the arrays: the live work returns and the table would grow back through every size.
  // kSparseSweeps sparse sweeps in a row do shrink it, keeping every live entry.
  using pto2::detail::TileTable;
  TileTable table;
  bool inserted = false;
  for (int64_t k = 0; k < 1000; ++k) table.find_or_insert(k * 64, static_cast<uint64_t>(k + 1), inserted);
  const size_t big = table.capacity();
  ASSERT_GE(big, 2048u);
  table.drop_finished(990);  // 10 entries left: sparse
  for (int i = 1; i < TileTable::kSparseSweeps; ++i) {
    table.shrink_if_sparse();
    EXPECT_EQ(table.capacity(), big) << "shrunk after " << i << " sparse sweeps";
  }
  for (int64_t k = 0; k < 600; ++k) table.find_or_insert((2000 + k) * 64, 2000 + k, inserted);
  table.shrink_if_sparse();  // not sparse: the count starts again
  table.drop_finished(2589);  // 10 entries left (stamps 2590..2599): sparse again
  for (int i = 1; i < TileTable::kSparseSweeps; ++i) table.shrink_if_sparse();
  EXPECT_EQ(table.capacity(), big);
  table.shrink_if_sparse();
  EXPECT_EQ(table.capacity(), TileTable::kMinCapacity);
  EXPECT_EQ(table.size(), 10u);
  for (int64_t k = 590; k < 600; ++k) EXPECT_NE(table.find((2000 + k) * 64), nullptr) << k;
}

TEST(DepTracker, TensorAccessesAlternatingStoragesKeepTheirOwnTiles) {
  // access(const Tensor&) remembers the previous access's storage (no lookup when the next
  // tensor views the same one): tiles at the same offsets of two storages, accessed in turn,
  // and a storage erased while remembered, must each see only their own tasks.
  DepTracker t;
  std::vector<uint64_t> deps;
  static float a[4 * 16], b[4 * 16];
  uint32_t sh[2] = {4, 16}, tile_sh[2] = {1, 16};
  const Tensor ta = make_tensor_external(a, sh, 2, DataType::FLOAT32);
  const Tensor tb = make_tensor_external(b, sh, 2, DataType::FLOAT32);
  auto live = [](uint64_t) { return true; };
  auto row = [&](const Tensor& base, uint32_t r) {
    uint32_t off[2] = {r, 0};
    return base.view(tile_sh, off);
  };
  auto access = [&](const Tensor& v, bool write, uint64_t self) {
    deps.clear();
    t.access(v, !write, write, self, deps, live);
    std::sort(deps.begin(), deps.end());
    return deps;
  };
  for (uint32_t r = 0; r < 4; ++r) {
    EXPECT_EQ(access(row(ta, r), true, 1 + 2 * r), V{});  // writers: a rows 1, 3, 5, 7
    EXPECT_EQ(access(row(tb, r), true, 2 + 2 * r), V{});  // b rows 2, 4, 6, 8
  }
  for (uint32_t r = 0; r < 4; ++r) {
    EXPECT_EQ(access(row(ta, r), false, 10 + r), V{1 + 2 * r}) << "a row " << r;
    EXPECT_EQ(access(row(tb, r), false, 20 + r), V{2 + 2 * r}) << "b row " << r;
  }
  EXPECT_EQ(access(row(tb, 1), true, 30), (V{4, 21}));
  t.erase(b);  // b is the remembered storage: forgetting it must not leave a stale one
  EXPECT_EQ(access(row(tb, 1), false, 31), V{});
  EXPECT_EQ(access(row(ta, 1), true, 32), (V{3, 11}));
  EXPECT_EQ(t.storages(), 2u);
}

TEST(TileTable, GrowsWhenAnInsertionWouldPassHalfFull) {
  // Load factor <= 1/2: kMinCapacity / 2 keys fit, the next insertion doubles the arrays.
  using pto2::detail::TileTable;
  TileTable table;
  bool inserted = false;
  for (int64_t k = 0; k < static_cast<int64_t>(TileTable::kMinCapacity / 2); ++k)
    table.find_or_insert(k * 64, static_cast<uint64_t>(k + 1), inserted);
  EXPECT_EQ(table.capacity(), TileTable::kMinCapacity);
  table.find_or_insert(0, 100, inserted);  // a key already present: the check runs first
  EXPECT_FALSE(inserted);
  EXPECT_EQ(table.capacity(), 2 * TileTable::kMinCapacity);
  EXPECT_EQ(table.size(), TileTable::kMinCapacity / 2);
}

TEST(TileTable, StampKeepsTheNewestTask) {
  // A lookup by an older task than the stamp (a tracker fed ids out of order) must not lower
  // it: drop_finished would then drop a tile whose newest task is still running.
  using pto2::detail::TileTable;
  TileTable table;
  bool inserted = false;
  table.find_or_insert(64, 10, inserted);
  table.find_or_insert(64, 5, inserted);
  EXPECT_FALSE(inserted);
  table.drop_finished(7);
  EXPECT_NE(table.find(64), nullptr);
  table.find_or_insert(64, 12, inserted);
  table.drop_finished(11);
  EXPECT_NE(table.find(64), nullptr);
  table.drop_finished(12);
  EXPECT_EQ(table.find(64), nullptr);
}
