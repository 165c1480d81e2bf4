// bench_common.h — Task-Bench-style dependence patterns shared by every system under test.
//
// A graph has `width` points per timestep and `steps` timesteps; point (t, i) depends on the
// points deps(t, i) of timestep t-1. Every system runs the same graphs on `cores` threads in
// all, one of which creates the tasks (and executes some too).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace bench {

enum class Pattern { TRIVIAL, CHAIN, STENCIL_1D, NEAREST, TREE, FFT };
inline const char* pattern_name(Pattern p) {
  switch (p) {
    case Pattern::TRIVIAL: return "trivial";
    case Pattern::CHAIN: return "chain";
    case Pattern::STENCIL_1D: return "stencil_1d";
    case Pattern::NEAREST: return "nearest";
    case Pattern::TREE: return "tree";
    case Pattern::FFT: return "fft";
  }
  return "?";
}
/// Every pattern, or those named in BENCH_PATTERNS (comma-separated, e.g. "trivial,chain").
inline std::vector<Pattern> all_patterns() {
  std::vector<Pattern> all = {Pattern::TRIVIAL, Pattern::CHAIN, Pattern::STENCIL_1D,
                              Pattern::NEAREST, Pattern::TREE,  Pattern::FFT};
  const char* only = std::getenv("BENCH_PATTERNS");
  if (!only || !*only) return all;
  std::vector<Pattern> picked;
  const std::string list = std::string(",") + only + ",";
  for (Pattern p : all)
    if (list.find(std::string(",") + pattern_name(p) + ",") != std::string::npos) picked.push_back(p);
  return picked;
}

/// Points of timestep t-1 that (t, i) depends on (t >= 1), at most 5.
inline int deps_of(Pattern p, int t, int i, int width, int* out) {
  if (t == 0) return 0;
  int n = 0;
  switch (p) {
    case Pattern::TRIVIAL: break;
    case Pattern::CHAIN: out[n++] = i; break;
    case Pattern::STENCIL_1D:
      for (int d = -1; d <= 1; ++d)
        if (i + d >= 0 && i + d < width) out[n++] = i + d;
      break;
    case Pattern::NEAREST:  // radix 5
      for (int d = -2; d <= 2; ++d)
        if (i + d >= 0 && i + d < width) out[n++] = i + d;
      break;
    case Pattern::TREE: out[n++] = i / 2; break;  // fan-out tree: j feeds 2j and 2j+1
    case Pattern::FFT: {
      int lg = 0;
      while ((1 << (lg + 1)) <= width) ++lg;
      const int stride = 1 << ((t - 1) % std::max(lg, 1));
      out[n++] = i;
      const int j = i ^ stride;
      if (j < width && j != i) out[n++] = j;
      break;
    }
  }
  return n;
}

inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// The task body: busy-wait for `grain_ns` (0 = empty).
inline void busy_wait(int64_t grain_ns) {
  if (grain_ns <= 0) return;
  const int64_t end = now_ns() + grain_ns;
  while (now_ns() < end) {
  }
}

struct Config {
  int cores = 2;
  int width = 8;
  int overhead_tasks = 40000;  // tasks for the per-task cost (empty kernels)
  int metg_tasks = 20000;      // tasks per METG probe (at most; ~40 ms of ideal work)
  int repeats = 5;             // best of
};

inline Config config_from_env() {
  Config c;
  if (const char* e = std::getenv("BENCH_CORES")) c.cores = std::atoi(e);
  if (const char* e = std::getenv("BENCH_WIDTH")) c.width = std::atoi(e);
  if (const char* e = std::getenv("BENCH_TASKS")) c.overhead_tasks = std::atoi(e);
  if (const char* e = std::getenv("BENCH_METG_TASKS")) c.metg_tasks = std::atoi(e);
  if (const char* e = std::getenv("BENCH_REPEATS")) c.repeats = std::atoi(e);
  return c;
}

/// run(pattern, width, steps, grain_ns) -> wall seconds for the whole graph.
using RunFn = std::function<double(Pattern, int, int, int64_t)>;

/// Fraction of `threads` cores this process gets right now (1 = dedicated): each of `threads`
/// plain threads busy-waits 10 ms once; availability = 10 ms / wall. On a shared machine
/// this scales the ideal so that load from other processes cancels out of the efficiency.
inline double availability(int threads) {
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // let the runtime's idle threads park
  const int64_t work = 10000000;
  const int64_t t0 = now_ns();
  std::vector<std::thread> th;
  for (int k = 0; k < threads; ++k) th.emplace_back([=] { busy_wait(work); });
  for (auto& t : th) t.join();
  const double wall = static_cast<double>(now_ns() - t0);
  return std::min(1.0, static_cast<double>(work) / wall);
}

/// Set by a system's run function: the fraction of the last run's tasks that executed on the
/// submitting thread (pypto: RunResult::tasks_undeferred / tasks). Systems that cannot tell
/// leave it at 0.
inline double& last_serial_fraction() {
  static double f = 0;
  return f;
}

/// The best of `repeats` runs; `serial` (if given) gets that run's last_serial_fraction().
inline double best_of(const RunFn& run, Pattern p, int width, int steps, int64_t grain, int repeats,
                      double* serial = nullptr) {
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    last_serial_fraction() = 0;
    const double w = run(p, width, steps, grain);
    if (w < best) {
      best = w;
      if (serial) *serial = last_serial_fraction();
    }
  }
  return best;
}

/// A METG figure and how far it can be trusted.
struct Metg {
  double us = -1;           ///< -1: no probe up to 1 ms reached 50%
  double avail_min = 1, avail_max = 1;  ///< CPU availability over the probes
  int serial_probes = 0;    ///< probes not credited: (almost) every task ran on the submitting thread
  /// Availability varied by more than 20% between probes: the machine's load changed meanwhile.
  bool unreliable() const { return avail_max - avail_min > 0.2 * avail_max; }
};

/// METG(50%): the smallest grain (us) at which efficiency = ideal / actual >= 0.5, where
/// ideal = tasks * grain / min(cores, width) / availability, availability being measured right
/// before each probe (a loaded machine cannot fake efficiency, and load that comes and goes
/// shows as an unreliable figure). A probe whose tasks ran serially on the submitting thread
/// (>= 95% of them) is never credited as parallel efficiency. Log-interpolated between probes.
inline Metg metg_us(const RunFn& run, Pattern p, const Config& c) {
  // Effective parallelism of the graph on `cores` threads.
  const double par = std::min<double>(c.cores, c.width);
  Metg m;
  m.avail_min = 1e9;
  m.avail_max = 0;
  double prev_g = 0, prev_e = 0;
  for (double g_us : {0.1, 0.2, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0}) {
    const int64_t g_ns = static_cast<int64_t>(g_us * 1000);
    // ~40 ms of ideal work per probe, between 4 timesteps and metg_tasks tasks.
    const double want = 0.04 * par / (g_us * 1e-6);
    const int tasks_here = static_cast<int>(std::max<double>(c.width * 4, std::min<double>(c.metg_tasks, want)));
    const int steps_here = std::max(4, tasks_here / c.width);
    const double total = static_cast<double>(steps_here) * c.width;
    const double avail = availability(static_cast<int>(par));
    m.avail_min = std::min(m.avail_min, avail);
    m.avail_max = std::max(m.avail_max, avail);
    double wall = 1e30, serial = 0;
    for (int r = 0; r < 3; ++r) {
      last_serial_fraction() = 0;
      const double w = run(p, c.width, steps_here, g_ns);
      if (w < wall) {
        wall = w;
        serial = last_serial_fraction();
      }
    }
    const double ideal = total * g_us * 1e-6 / par / std::max(0.05, avail);
    const bool is_serial = serial >= 0.95;
    const double eff = is_serial ? 0 : ideal / wall;
    m.serial_probes += is_serial;
    if (std::getenv("BENCH_VERBOSE"))
      std::fprintf(stderr, "  %s grain %.1f us: %d tasks, %.0f ns/task, availability %.2f, efficiency %.2f%s\n",
                   pattern_name(p), g_us, static_cast<int>(total), wall * 1e9 / total, avail, ideal / wall,
                   is_serial ? " (serial: not credited)" : "");
    if (eff >= 0.5) {
      if (prev_g == 0) {
        m.us = g_us;
      } else {  // interpolate log(g) linearly in efficiency between the probes
        const double f = (0.5 - prev_e) / std::max(1e-9, eff - prev_e);
        m.us = std::exp(std::log(prev_g) + f * (std::log(g_us) - std::log(prev_g)));
      }
      return m;
    }
    prev_g = g_us;
    prev_e = eff;
  }
  return m;
}

// `serial`: the fraction of the per-task run's tasks that ran on the submitting thread (pypto:
// undeferred, e.g. by the throttle once the ready queue is long; 0 for the peers).
inline void emit(const char* pattern, const char* mode, const char* system, int64_t tasks, double ns_per_task,
                 const Metg& metg, double serial) {
  char metg_json[160] = "null";
  if (metg.us >= 0) std::snprintf(metg_json, sizeof metg_json, "%.2f", metg.us);
  std::printf("{\"pattern\": \"%s\", \"mode\": \"%s\", \"system\": \"%s\", \"tasks\": %lld, \"ns_per_task\": %.1f, "
              "\"metg_us\": %s, \"avail_min\": %.2f, \"avail_max\": %.2f, \"serial_probes\": %d, \"unreliable\": %s, \"serial_fraction\": %.3f}\n",
              pattern, mode, system, static_cast<long long>(tasks), ns_per_task, metg_json, metg.avail_min,
              metg.avail_max, metg.serial_probes, metg.unreliable() ? "true" : "false", serial);
  std::fflush(stdout);
}

/// Measures per-task cost and METG for every pattern and prints JSON records.
inline void measure_all(const RunFn& run, const char* mode, const char* system, const Config& c, bool with_metg) {
  for (Pattern p : all_patterns()) {
    const int steps = std::max(1, c.overhead_tasks / c.width);
    const int64_t tasks = static_cast<int64_t>(steps) * c.width;
    run(p, c.width, std::max(1, steps / 10), 0);  // warm-up
    double serial = 0;
    const double wall = best_of(run, p, c.width, steps, 0, c.repeats, &serial);
    const Metg metg = with_metg ? metg_us(run, p, c) : Metg{};
    emit(pattern_name(p), mode, system, tasks, wall * 1e9 / static_cast<double>(tasks), metg, serial);
  }
}

__attribute__((noinline)) inline void empty_call(int64_t* sink) { asm volatile("" : : "r"(sink) : "memory"); }

/// The two floors every per-task cost is compared with, printed as JSON records:
/// serial_call_ns — a serial loop calling an empty, non-inlined function (per call);
/// handoff_ns — one cross-core handoff: a value passed to a thread spinning on another core
/// and back, divided by two (best of 20 rounds of 5000 round trips: a shared machine
/// deschedules the spinning partner now and then).
inline void measure_floors() {
  int64_t sink = 0;
  const int n = 10000000;
  double serial = 1e30;
  for (int r = 0; r < 5; ++r) {
    const int64_t t0 = now_ns();
    for (int i = 0; i < n; ++i) empty_call(&sink);
    serial = std::min(serial, static_cast<double>(now_ns() - t0) / n);
  }
  double handoff = 1e30;
  for (int r = 0; r < 20; ++r) {
    std::atomic<int64_t> ball{0};
    const int trips = 5000;
    std::thread other([&] {
      for (int64_t i = 1; i <= trips; ++i) {
        while (ball.load(std::memory_order_acquire) != 2 * i - 1) {
        }
        ball.store(2 * i, std::memory_order_release);
      }
    });
    const int64_t t0 = now_ns();
    for (int64_t i = 1; i <= trips; ++i) {
      ball.store(2 * i - 1, std::memory_order_release);
      while (ball.load(std::memory_order_acquire) != 2 * i) {
      }
    }
    handoff = std::min(handoff, static_cast<double>(now_ns() - t0) / trips / 2);
    other.join();
  }
  std::printf("{\"floor\": \"serial_call_ns\", \"ns\": %.2f}\n{\"floor\": \"handoff_ns\", \"ns\": %.1f}\n", serial, handoff);
  std::fflush(stdout);
}

}  // namespace bench
