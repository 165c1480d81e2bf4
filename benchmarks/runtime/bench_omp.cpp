// bench_omp — the Task-Bench patterns on OpenMP tasks with depend clauses. Built twice: with
// g++ (libgomp) and clang++ (libomp). One thread (single) creates the tasks; all execute.
#include <omp.h>

#include <cstring>
#include <memory>

#include "bench_common.h"

#ifndef BENCH_SYSTEM
#define BENCH_SYSTEM "openmp"
#endif

namespace {

struct alignas(64) Cell {
  char pad[64];
};

double run_omp(bench::Pattern p, int width, int steps, int64_t grain, int cores) {
  std::unique_ptr<Cell[]> cells(new Cell[static_cast<size_t>(steps) * width]);
  Cell* c = cells.get();
  const int64_t t0 = bench::now_ns();
#pragma omp parallel num_threads(cores)
#pragma omp single
  {
    int d[8];
    for (int t = 0; t < steps; ++t) {
      for (int i = 0; i < width; ++i) {
        const int n = bench::deps_of(p, t, i, width, d);
        Cell* out = &c[static_cast<size_t>(t) * width + i];
        Cell* in = t > 0 ? &c[static_cast<size_t>(t - 1) * width] : c;
        switch (n) {
          case 0:
#pragma omp task depend(out : out[0]) firstprivate(grain)
            bench::busy_wait(grain);
            break;
          case 1:
#pragma omp task depend(out : out[0]) depend(in : in[d[0]]) firstprivate(grain)
            bench::busy_wait(grain);
            break;
          case 2:
#pragma omp task depend(out : out[0]) depend(in : in[d[0]], in[d[1]]) firstprivate(grain)
            bench::busy_wait(grain);
            break;
          case 3:
#pragma omp task depend(out : out[0]) depend(in : in[d[0]], in[d[1]], in[d[2]]) firstprivate(grain)
            bench::busy_wait(grain);
            break;
          case 4:
#pragma omp task depend(out : out[0]) depend(in : in[d[0]], in[d[1]], in[d[2]], in[d[3]]) firstprivate(grain)
            bench::busy_wait(grain);
            break;
          default:
#pragma omp task depend(out : out[0]) depend(in : in[d[0]], in[d[1]], in[d[2]], in[d[3]], in[d[4]]) firstprivate(grain)
            bench::busy_wait(grain);
            break;
        }
      }
    }
#pragma omp taskwait
  }
  return static_cast<double>(bench::now_ns() - t0) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  bench::Config c = bench::config_from_env();
  const bool metg = !(argc > 1 && std::strcmp(argv[1], "--no-metg") == 0);
  auto run = [&](bench::Pattern p, int w, int s, int64_t g) { return run_omp(p, w, s, g, c.cores); };
  // depend clauses are the data-driven (auto) form; the same graph serves the manual row.
  bench::measure_all(run, "auto", BENCH_SYSTEM, c, metg);
  return 0;
}
