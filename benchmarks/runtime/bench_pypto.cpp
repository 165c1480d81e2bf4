// bench_pypto — the Task-Bench patterns on libpto2, AUTO (dependencies found from overlapping
// tensor regions), MANUAL (explicit task ids in a MANUAL scope) and DERIVED (the AUTO program as
// the compiler's analyze_auto_scopes_for_deps emits it: the AUTO tasks in a MANUAL scope with
// their producers' ids).
#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>

#include "bench_common.h"
#include "pto_orchestration_api.h"

namespace {

void k_busy(PTO2KernelContext* ctx) { bench::busy_wait(static_cast<int64_t>(ctx->scalars[0])); }

// AUTO: a [steps, width, 16] float buffer; point (t, i) reads its deps' cells of row t-1 and
// writes cell (t, i). Only read-after-write conflicts exist, so the graph is exactly the pattern.
// `submit(a)` submits each task's Arg (or, for own_code_ns, only consumes it).
// DERIVED (kIds): what AutoDeriveTaskDependencies makes of that program when it proves every
// hazard (docs/auto_dependencies.md, verdict "manual"): the same tasks with the same views, run
// in a MANUAL scope, each naming its producers' ids (those of its deps in row t-1); `submit(a)`
// returns the task's id. The runtime tracks nothing; the views and the untracked writes stay,
// as in the generated code.
template <bool kIds, class Submit>
void view_graph(const Tensor& cells, bench::Pattern p, int width, int steps, int64_t grain, Submit&& submit) {
  std::vector<PTO2TaskId> prev(kIds ? static_cast<size_t>(width) : 0), cur(kIds ? static_cast<size_t>(width) : 0);
  uint32_t cell_sh[3] = {1, 1, 16};
  int d[8];
  PTO2TaskId ids[8];
  for (int t = 0; t < steps; ++t) {
    for (int i = 0; i < width; ++i) {
      Arg a;
      const int n = bench::deps_of(p, t, i, width, d);
      for (int k = 0; k < n; ++k) {
        uint32_t off[3] = {static_cast<uint32_t>(t - 1), static_cast<uint32_t>(d[k]), 0};
        a.add_input(cells.view(cell_sh, off));
        if constexpr (kIds) ids[k] = prev[static_cast<size_t>(d[k])];
      }
      uint32_t off[3] = {static_cast<uint32_t>(t), static_cast<uint32_t>(i), 0};
      a.add_output(cells.view(cell_sh, off));
      if constexpr (kIds) {
        if (n) a.set_dependencies(ids, static_cast<uint32_t>(n));
      }
      a.add_scalar(static_cast<uint64_t>(grain));
      if constexpr (kIds) cur[static_cast<size_t>(i)] = submit(a);
      else submit(a);
    }
    if constexpr (kIds) std::swap(prev, cur);
  }
}
template <class Submit>
void auto_graph(const Tensor& cells, bench::Pattern p, int width, int steps, int64_t grain, Submit&& submit) {
  view_graph<false>(cells, p, width, steps, grain, submit);
}
template <class Submit>
void derived_graph(const Tensor& cells, bench::Pattern p, int width, int steps, int64_t grain, Submit&& submit) {
  view_graph<true>(cells, p, width, steps, grain, submit);
}

// MANUAL: point (t, i) depends on the task ids of its deps in row t-1 (explicit dependencies
// in a MANUAL scope); `submit(a)` returns the task's id.
template <class Submit>
void manual_graph(bench::Pattern p, int width, int steps, int64_t grain, Submit&& submit) {
  std::vector<PTO2TaskId> prev(static_cast<size_t>(width)), cur(static_cast<size_t>(width));
  int d[8];
  PTO2TaskId ids[8];
  for (int t = 0; t < steps; ++t) {
    for (int i = 0; i < width; ++i) {
      Arg a;
      const int n = bench::deps_of(p, t, i, width, d);
      for (int k = 0; k < n; ++k) ids[k] = prev[static_cast<size_t>(d[k])];
      if (n) a.set_dependencies(ids, static_cast<uint32_t>(n));
      a.add_scalar(static_cast<uint64_t>(grain));
      cur[static_cast<size_t>(i)] = submit(a);
    }
    std::swap(prev, cur);
  }
}

TaskOutputTensors alloc_cells(int width, int steps) {
  uint32_t sh[3] = {static_cast<uint32_t>(steps), static_cast<uint32_t>(width), 16};
  return alloc_tensors(TensorCreateInfo(sh, 3, DataType::FLOAT32));
}

double run_auto(pto2::Runtime& rt, bench::Pattern p, int width, int steps, int64_t grain) {
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    TaskOutputTensors buf = alloc_cells(width, steps);
    auto_graph(buf.get_ref(0), p, width, steps, grain, [](Arg& a) { rt_submit_aiv_task(0, a); });
  });
  if (!r.ok()) {
    std::fprintf(stderr, "pypto auto failed: %s\n", r.message.c_str());
    std::exit(1);
  }
  bench::last_serial_fraction() = static_cast<double>(r.tasks_undeferred) / static_cast<double>(r.tasks_submitted);
  return r.wall_seconds;
}

double run_derived(pto2::Runtime& rt, bench::Pattern p, int width, int steps, int64_t grain) {
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    TaskOutputTensors buf = alloc_cells(width, steps);
    PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
      derived_graph(buf.get_ref(0), p, width, steps, grain, [](Arg& a) { return rt_submit_aiv_task(0, a).task_id(); });
    }
  });
  if (!r.ok()) {
    std::fprintf(stderr, "pypto derived failed: %s\n", r.message.c_str());
    std::exit(1);
  }
  bench::last_serial_fraction() = static_cast<double>(r.tasks_undeferred) / static_cast<double>(r.tasks_submitted);
  return r.wall_seconds;
}

double run_manual(pto2::Runtime& rt, bench::Pattern p, int width, int steps, int64_t grain) {
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
      manual_graph(p, width, steps, grain, [](Arg& a) { return rt_submit_aiv_task(0, a).task_id(); });
    }
  });
  if (!r.ok()) {
    std::fprintf(stderr, "pypto manual failed: %s\n", r.message.c_str());
    std::exit(1);
  }
  bench::last_serial_fraction() = static_cast<double>(r.tasks_undeferred) / static_cast<double>(r.tasks_submitted);
  return r.wall_seconds;
}

// Takes an Arg as a submission would, without submitting it: the orchestration's own code.
__attribute__((noinline)) void consume(Arg& a) { asm volatile("" : : "r"(&a) : "memory"); }

// The orchestration's own code per task (building each task's Arg: views, dependencies,
// scalars), with nothing submitted: best of 5 runs of the per-task cost's task count, ns per
// task. The part of a per-task cost that no runtime can remove; printed as JSON records.
void measure_own_code(pto2::Runtime& rt, const bench::Config& c) {
  const int steps = std::max(1, c.overhead_tasks / c.width);
  const double tasks = static_cast<double>(steps) * c.width;
  for (bench::Pattern p : bench::all_patterns()) {
    for (const char* mode : {"auto", "manual", "derived"}) {
      double best = 1e30;
      for (int r = 0; r < 5; ++r) {
        rt.run([&](const ChipStorageTaskArgs&) {
          TaskOutputTensors buf = alloc_cells(c.width, steps);
          const int64_t t0 = bench::now_ns();
          uint64_t fake = 0;  // ids as the runtime would hand them out
          auto fake_submit = [&](Arg& a) {
            consume(a);
            PTO2TaskId id;
            id.raw = ++fake;
            return id;
          };
          if (mode[0] == 'a') auto_graph(buf.get_ref(0), p, c.width, steps, 0, [](Arg& a) { consume(a); });
          else if (mode[0] == 'm') manual_graph(p, c.width, steps, 0, fake_submit);
          else derived_graph(buf.get_ref(0), p, c.width, steps, 0, fake_submit);
          best = std::min(best, static_cast<double>(bench::now_ns() - t0));
        });
      }
      std::printf("{\"own_code_ns\": %.1f, \"pattern\": \"%s\", \"mode\": \"%s\"}\n", best / tasks,
                  bench::pattern_name(p), mode);
    }
  }
  std::fflush(stdout);
}

// Released by measure_submit_alone once the submissions it times are done.
std::atomic<bool> gate_open{false};
void k_gate(PTO2KernelContext*) {
  while (!gate_open.load(std::memory_order_acquire)) {
  }
}

// What a submission costs the orchestrator alone, ns per task: the only worker is held in a
// gate task while 480 tasks (a ring of 512: no back-pressure) are submitted, so nothing
// crosses to another core meanwhile but the slots' lines (the worker ran their previous
// tasks). The short path is off and the throttle never helps, and every producer is still
// queued: each dependency is linked, as in the queued path's linked regime (patient workers,
// docs/dev/queued_path.md, "Session 38"), minus its cross-core transfers. A run in the eager
// regime (producers retired before their consumers are submitted: nothing to link) can cost
// the orchestrator less, and pays transfers instead. Best of 100 runs; JSON records.
void measure_submit_alone(const bench::Config& c) {
  pto2::Runtime rt(pto2::RuntimeOptions{}.aic_workers(0).aiv_workers(1).inline_below_ns(0).task_ring_size(512)
                       .help_threshold(1u << 30));
  rt.register_kernel(0, "busy", pto2::CoreType::AIV, &k_busy);
  rt.register_kernel(1, "gate", pto2::CoreType::AIV, &k_gate);
  const int steps = std::max(1, 480 / c.width);
  const double tasks = static_cast<double>(steps) * c.width;
  for (bench::Pattern p : bench::all_patterns()) {
    for (const char* mode : {"auto", "manual", "derived"}) {
      const bool manual = mode[0] != 'a';
      double best = 1e30;
      for (int r = 0; r < 100; ++r) {
        gate_open.store(false, std::memory_order_release);
        int64_t ns = 0;
        pto2::RunResult res = rt.run([&](const ChipStorageTaskArgs&) {
          TaskOutputTensors buf = alloc_cells(c.width, steps);
          PTO2_SCOPE(manual ? PTO2ScopeMode::MANUAL : PTO2ScopeMode::AUTO) {
            Arg g;
            rt_submit_aiv_task(1, g);
            const int64_t t0 = bench::now_ns();
            if (mode[0] == 'm') manual_graph(p, c.width, steps, 0, [](Arg& a) { return rt_submit_aiv_task(0, a).task_id(); });
            else if (mode[0] == 'd')
              derived_graph(buf.get_ref(0), p, c.width, steps, 0, [](Arg& a) { return rt_submit_aiv_task(0, a).task_id(); });
            else auto_graph(buf.get_ref(0), p, c.width, steps, 0, [](Arg& a) { rt_submit_aiv_task(0, a); });
            ns = bench::now_ns() - t0;
            gate_open.store(true, std::memory_order_release);
          }
        });
        if (!res.ok()) {
          std::fprintf(stderr, "submit_alone failed: %s\n", res.message.c_str());
          std::exit(1);
        }
        best = std::min(best, static_cast<double>(ns));
      }
      std::printf("{\"submit_alone_ns\": %.1f, \"pattern\": \"%s\", \"mode\": \"%s\"}\n", best / tasks,
                  bench::pattern_name(p), mode);
    }
  }
  std::fflush(stdout);
}

// The fixed cost of a run: Runtime::run of an empty orchestration (median of 20000 runs, ns),
// the workers kept alive between runs.
void measure_empty_run(pto2::Runtime& rt) {
  std::vector<int64_t> ns;
  for (int i = 0; i < 20000; ++i) {
    const int64_t t0 = bench::now_ns();
    pto2::RunResult r = rt.run([](const ChipStorageTaskArgs&) {});
    ns.push_back(bench::now_ns() - t0);
    if (!r.ok()) std::exit(1);
  }
  std::sort(ns.begin(), ns.end());
  std::printf("{\"floor\": \"empty_run_ns\", \"ns\": %lld}\n", static_cast<long long>(ns[ns.size() / 2]));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  bench::Config c = bench::config_from_env();
  const bool metg = !(argc > 1 && std::strcmp(argv[1], "--no-metg") == 0);
  // cores - 1 workers plus the orchestrating thread, which executes tasks too (undeferred, when
  // blocked, and at the tail of a run): `cores` threads, like OpenMP's team (the master thread
  // creates the tasks) and TBB's arena (the main thread builds the graph). BENCH_PTO2_WORKERS
  // overrides the worker count.
  uint32_t workers = static_cast<uint32_t>(c.cores > 1 ? c.cores - 1 : 1);
  if (const char* e = std::getenv("BENCH_PTO2_WORKERS")) workers = static_cast<uint32_t>(std::atoi(e));
  pto2::RuntimeOptions opt = pto2::RuntimeOptions{}.aic_workers(0).aiv_workers(workers);
  // BENCH_INLINE_BELOW_NS=0 turns off running measured-tiny kernels undeferred (docs/runtime.md),
  // to see the cost of the queued path with empty kernels.
  if (const char* e = std::getenv("BENCH_INLINE_BELOW_NS")) opt.inline_below_ns(static_cast<uint32_t>(std::atoi(e)));
  // Profiling knobs (callgrind A/B of the orchestrator path): BENCH_RING_SIZE larger than the
  // task count and a large BENCH_HELP_THRESHOLD keep the submitting thread from running tasks,
  // so its instruction count is the submission cost alone.
  if (const char* e = std::getenv("BENCH_RING_SIZE")) opt.task_ring_size(static_cast<uint32_t>(std::atoi(e)));
  if (const char* e = std::getenv("BENCH_HELP_THRESHOLD")) opt.help_threshold(static_cast<uint32_t>(std::atoi(e)));
  pto2::Runtime rt(opt);
  rt.register_kernel(0, "busy", pto2::CoreType::AIV, &k_busy);
  // --floors: the two floors (bench_common.h), the fixed cost of an empty run and the
  // orchestration's own code per task, nothing else.
  if (argc > 1 && std::strcmp(argv[1], "--floors") == 0) {
    bench::measure_floors();
    measure_empty_run(rt);
    measure_own_code(rt, c);
    measure_submit_alone(c);
    return 0;
  }
  // BENCH_SYSTEM_NAME names the records (run.sh: "pypto_queued" for the short path off).
  const char* system = std::getenv("BENCH_SYSTEM_NAME") ? std::getenv("BENCH_SYSTEM_NAME") : "pypto";
  // BENCH_MODES=auto, manual or derived runs one mode only (profiling).
  const std::string modes = std::getenv("BENCH_MODES") ? std::getenv("BENCH_MODES") : "auto,manual,derived";
  if (modes.find("auto") != std::string::npos)
    bench::measure_all([&](bench::Pattern p, int w, int s, int64_t g) { return run_auto(rt, p, w, s, g); }, "auto",
                       system, c, metg);
  if (modes.find("manual") != std::string::npos)
    bench::measure_all([&](bench::Pattern p, int w, int s, int64_t g) { return run_manual(rt, p, w, s, g); },
                       "manual", system, c, metg);
  if (modes.find("derived") != std::string::npos)
    bench::measure_all([&](bench::Pattern p, int w, int s, int64_t g) { return run_derived(rt, p, w, s, g); },
                       "derived", system, c, metg);
  return 0;
}
