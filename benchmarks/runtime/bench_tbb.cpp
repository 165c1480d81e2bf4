// bench_tbb — the Task-Bench patterns on the oneTBB flow graph (continue_node per point, an
// edge per dependency). Graph construction is part of the measured time (submission to
// completion), like task submission is for the other systems.
#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/global_control.h>

#include <cstring>
#include <memory>

#include "bench_common.h"

namespace {

double run_tbb(bench::Pattern p, int width, int steps, int64_t grain) {
  using Node = tbb::flow::continue_node<tbb::flow::continue_msg>;
  const int64_t t0 = bench::now_ns();
  tbb::flow::graph g;
  std::vector<std::unique_ptr<Node>> nodes;
  nodes.reserve(static_cast<size_t>(steps) * width);
  std::vector<Node*> roots;
  int d[8];
  for (int t = 0; t < steps; ++t) {
    for (int i = 0; i < width; ++i) {
      nodes.emplace_back(new Node(g, [grain](const tbb::flow::continue_msg&) { bench::busy_wait(grain); }));
      Node* n = nodes.back().get();
      const int k = bench::deps_of(p, t, i, width, d);
      for (int j = 0; j < k; ++j)
        tbb::flow::make_edge(*nodes[static_cast<size_t>(t - 1) * width + d[j]], *n);
      if (k == 0) roots.push_back(n);
    }
  }
  for (Node* r : roots) r->try_put(tbb::flow::continue_msg());
  g.wait_for_all();
  return static_cast<double>(bench::now_ns() - t0) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  bench::Config c = bench::config_from_env();
  const bool metg = !(argc > 1 && std::strcmp(argv[1], "--no-metg") == 0);
  tbb::global_control gc(tbb::global_control::max_allowed_parallelism, static_cast<size_t>(c.cores));
  bench::measure_all(run_tbb, "auto", "tbb_flow", c, metg);
  return 0;
}
