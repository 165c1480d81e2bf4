// tracker_bench — the AUTO dependency tracker alone (DepTracker, as Engine::track_tensors
// drives it) on bench_pypto's Task-Bench accesses, with a deterministic schedule: a task
// finishes `lag` tasks after it was recorded (a worker that trails the orchestrator by half
// of the default ring). Single-threaded, so its instruction count is repeatable on a loaded
// machine:
//   g++ -O2 -std=c++17 -DNDEBUG -Iruntime/include benchmarks/runtime/tracker_bench.cpp
//       -Lbuild/pto2 -lpto2 -Wl,-rpath,build/pto2 -o tracker_bench   (one command)
//   valgrind --tool=callgrind --toggle-collect='(anonymous namespace)::track_pattern(*' ./tracker_bench [tasks] [lag] [strided]
// (not '*track_pattern*': that also matches the tracker's functions instantiated with this file's
// lambdas, and a matching function entered inside track_pattern toggles collection OFF, so a
// tracker whose access() is out of line would look cheaper than it is)
// prints one JSON record per pattern (wall ns per task, best of 5) and, under callgrind, the
// collected instructions / (5 * tasks) give the instructions per task of the tracker plus
// building the views (Tensor::view, the same on both sides of an A/B comparison).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "../../runtime/src/dep_tracker.h"
#include "bench_common.h"

namespace {

// Every access of the pattern's `steps` x `width` tasks, as bench_pypto's run_auto submits
// them ([steps, width, 16] floats; task (t, i) reads its deps' cells of row t-1, writes (t, i)).
// `strided`: cells are 4x4 tiles of a [4 * steps, 4 * width] matrix instead (a program walking
// the 2-D tiles of a matrix: strided views). Returns the producers found (a checksum, so
// nothing is optimised away).
__attribute__((noinline)) uint64_t track_pattern(bench::Pattern p, int width, int steps, uint64_t lag, bool strided) {
  static std::vector<float> buf;  // never written: only its addresses are tracked
  buf.resize(static_cast<size_t>(steps) * width * 16);
  uint32_t sh[3] = {static_cast<uint32_t>(steps), static_cast<uint32_t>(width), 16};
  uint32_t sh2[2] = {4 * static_cast<uint32_t>(steps), 4 * static_cast<uint32_t>(width)};
  const Tensor cells = strided ? make_tensor_external(buf.data(), sh2, 2, DataType::FLOAT32)
                               : make_tensor_external(buf.data(), sh, 3, DataType::FLOAT32);
  uint32_t cell_sh[3] = {1, 1, 16};
  uint32_t tile_sh[2] = {4, 4};
  const auto cell = [&](int t, int i) {
    uint32_t off[3] = {static_cast<uint32_t>(t), static_cast<uint32_t>(i), 0};
    uint32_t off2[2] = {4 * static_cast<uint32_t>(t), 4 * static_cast<uint32_t>(i)};
    return strided ? cells.view(tile_sh, off2) : cells.view(cell_sh, off);
  };
  pto2::detail::DepTracker tracker;
  std::vector<uint64_t> deps;
  uint64_t self = 0, found = 0;
  const auto live = [&](uint64_t x) { return x + lag > self; };
  int d[8];
  for (int t = 0; t < steps; ++t) {
    for (int i = 0; i < width; ++i) {
      ++self;
      deps.clear();
      const int n = bench::deps_of(p, t, i, width, d);
      for (int k = 0; k < n; ++k) tracker.access(cell(t - 1, d[k]), true, false, self, deps, live);
      tracker.access(cell(t, i), false, true, self, deps, live);
      found += deps.size();
    }
  }
  return found;
}

}  // namespace

int main(int argc, char** argv) {
  const int tasks = argc > 1 ? std::atoi(argv[1]) : 40000;
  const uint64_t lag = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 256;
  const bool strided = argc > 3 && std::strcmp(argv[3], "strided") == 0;
  const int width = 8, steps = std::max(1, tasks / width);
  for (bench::Pattern p : bench::all_patterns()) {
    int64_t best = INT64_MAX;
    uint64_t found = 0;
    for (int r = 0; r < 5; ++r) {
      const int64_t t0 = bench::now_ns();
      found = track_pattern(p, width, steps, lag, strided);
      best = std::min(best, bench::now_ns() - t0);
    }
    std::printf("{\"pattern\": \"%s\", \"tiles\": \"%s\", \"tasks\": %d, \"lag\": %llu, \"producers\": %llu, "
                "\"ns_per_task\": %.1f}\n",
                bench::pattern_name(p), strided ? "strided" : "dense", steps * width, static_cast<unsigned long long>(lag),
                static_cast<unsigned long long>(found), static_cast<double>(best) / (steps * width));
  }
  return 0;
}
