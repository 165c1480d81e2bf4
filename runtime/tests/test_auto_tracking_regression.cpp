// Regression: automatic tracking lost the dependencies of the task whose access triggered a
// sweep of the tracker (every ~32 tasks of benchmarks/auto_deps_bench.py's `neighbour`).
//
// The task being recorded is not live yet (it is published after its accesses are tracked),
// so a sweep that kept only live tasks dropped that task's fresh records, and the next task
// was not ordered after it. Also: the race checker reports an automatic edge the runtime did
// not link while its producer was live, instead of taking tracked pairs as ordered.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "../src/dep_tracker.h"
#include "../src/engine.h"
#include "../src/race_checker.h"
#include "test_util.h"

using pto2::detail::DepTracker;
using pto2::detail::RaceChecker;
using pto2::detail::Region;

namespace {

constexpr uint32_t kTasks = 100;
float g_buf[(kTasks + 2) * 16 * 16];

Region rows(uint32_t first, uint32_t count) {
  uint32_t full[2] = {(kTasks + 2) * 16, 16}, sh[2] = {count, 16}, off[2] = {first, 0};
  return Region::of(make_tensor_external(g_buf, full, 2, DataType::FLOAT32).view(sh, off));
}

// Tasks are live from their publication (after their own accesses are recorded) on, and
// none finishes: as in the runtime while the workers lag behind the orchestrator.
struct Submitter {
  DepTracker t;
  uint64_t published = 0;  // tasks 1..published are live
  std::vector<uint64_t> deps;
  void access(const Region& r, bool read, bool write, uint64_t self) {
    t.access(g_buf, r, read, write, self, deps, [this](uint64_t x) { return x <= published; });
  }
  bool follows(uint64_t producer) const { return std::find(deps.begin(), deps.end(), producer) != deps.end(); }
};

}  // namespace

TEST(AutoTrackingRegression, OverlappingWindowLoopKeepsEveryEdgeAcrossSweeps) {
  Submitter s;
  for (uint32_t x = 0; x < kTasks; ++x) {
    const uint64_t self = x + 1;
    s.deps.clear();
    s.access(rows(x * 16, 48), true, false, self);       // In: the 48-row window
    s.access(rows(x * 16 + 16, 16), false, true, self);  // Out: its middle 16 rows
    if (x > 0) {
      EXPECT_TRUE(s.follows(self - 1)) << "task " << self << " not ordered after task " << self - 1;
    }
    s.published = self;
  }
}

TEST(AutoTrackingRegression, TileSweepKeepsTheTaskBeingRecorded) {
  Submitter s;
  for (uint32_t x = 0; x < 80; ++x) {  // one write per tile: the 64th insertion sweeps
    s.deps.clear();
    s.access(rows(x * 16, 16), false, true, x + 1);
    s.published = x + 1;
  }
  for (uint32_t x = 0; x < 80; ++x) {
    s.deps.clear();
    s.access(rows(x * 16, 16), true, false, 1000 + x);
    EXPECT_TRUE(s.follows(x + 1)) << "the reader of tile " << x << " misses its writer";
  }
}

namespace {

// Two tracked tasks writing one buffer; `linked` = the producers the runtime reported for the second.
uint64_t check_lost_edge(const std::vector<uint64_t>& linked, bool producer_live, std::string& report) {
  static float buf[16];
  uint32_t sh[1] = {16};
  const Tensor t = make_tensor_external(buf, sh, 1, DataType::FLOAT32);
  RaceChecker rc;
  rc.begin_run(1, ChipStorageTaskArgs{});
  const int32_t kernels[2] = {-1, 0};
  for (uint64_t raw = 1; raw <= 2; ++raw) {
    Arg a;
    a.add_inout(t);
    TaskOutputTensors out;
    rc.on_submit(raw, static_cast<int>(pto2::detail::TaskKind::AIV), kernels, a, out, false);
    rc.on_runtime_edges(raw, raw == 1 ? std::vector<uint64_t>{} : linked,
                        [&](uint64_t r) { return r == 1 && producer_live; });
  }
  return rc.finish(std::vector<pto2::detail::KernelInfo>{}, report);
}

}  // namespace

TEST(AutoTrackingRegression, RaceCheckerReportsAnAutomaticEdgeTheRuntimeLost) {
  std::string report;
  EXPECT_EQ(check_lost_edge({}, true, report), 1u);
  EXPECT_NE(report.find("lost 1 edge(s)"), std::string::npos) << report;
  EXPECT_NE(report.find("task #2"), std::string::npos) << report;
  EXPECT_EQ(check_lost_edge({1}, true, report), 0u) << report;   // linked
  EXPECT_EQ(check_lost_edge({}, false, report), 0u) << report;   // the producer had finished
}
