// pto2/runtime.h — the host API: configure workers, register kernels, run an orchestration.
//
//     pto2::Runtime rt(pto2::RuntimeOptions{}.aic_workers(1).aiv_workers(2));
//     rt.register_kernel(0, "kernel_add", pto2::CoreType::AIV, &kernel_add);
//     pto2::RunResult r = rt.run(aicpu_orchestration_entry, args);
//     if (!r.ok()) puts(r.message.c_str());
//     rt.write_trace("trace.json");
//
// A Runtime owns its worker threads: they live as long as the Runtime, spinning briefly and
// then parking between tasks and between runs. run() executes the orchestration entry on the
// calling thread; one run at a time per Runtime (calls from several threads are serialized).
// cancel() stops a run from any thread or a signal handler. What may be called from which
// thread: docs/runtime.md, "Threads".
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pto2/kernel.h"
#include "pto2/types.h"

namespace pto2 {

enum class CoreType : int32_t { AIC = 0, AIV = 1 };

/// What a run does about missing dependencies (docs/manual_dependencies.md, "The race checker"):
/// Off, or record every tensor access and report conflicting pairs that no dependency orders,
/// as a failed run (Error) or in RunResult::race_report only (Warn).
enum class RaceCheck : uint8_t { Off = 0, Warn = 1, Error = 2 };

struct RuntimeOptions {
  uint32_t aic_workers_ = 1;         ///< host threads running AIC tasks
  uint32_t aiv_workers_ = 2;         ///< host threads running AIV tasks
  /// The modelled chip's core counts (default: Ascend 910B, 24 AIC + 48 AIV). A sync_start
  /// SPMD task may gang up to this many blocks of a type; blocks beyond the workers of that
  /// type run on extra host threads started for gangs (multiplexed onto the host's cores by
  /// the OS). 0 = the worker count (no multiplexing).
  uint32_t aic_cores_ = 24;
  uint32_t aiv_cores_ = 48;
  /// AIC+AIV worker pairs; caps the block count of mixed tasks. 0 = min(aic, aiv); more than
  /// that is refused by the constructor (std::invalid_argument naming the counts).
  uint32_t clusters_ = 0;
  uint32_t task_ring_size_ = 512;    ///< in-flight task slots (back-pressure beyond)
  size_t memory_limit_ = size_t(1) << 32;  ///< bytes of runtime-allocated tensors (back-pressure beyond)
  bool trace_ = false;               ///< record a trace for write_trace()
  uint32_t deadlock_timeout_ms_ = 3000;  ///< no progress for this long while blocked = deadlock
  uint32_t spin_us_ = 50;            ///< idle workers spin this long before parking
  /// The orchestrator thread runs ready single-block tasks itself while it is blocked
  /// (ring/memory full, get_tensor_data) or when more than help_threshold tasks are queued;
  /// with at least help_threshold queued, a new single-block task with nothing to wait for runs
  /// undeferred at submission (RunResult::tasks_undeferred).
  bool orchestrator_helps_ = true;
  uint32_t help_threshold_ = 0;      ///< 0 = 16 x workers
  /// A kernel whose measured average run time is below this many ns runs undeferred (when it
  /// has nothing to wait for): shipping it to a worker would cost more than running it.
  /// 0 = never on that ground. Run times are sampled (1 execution in 64 per thread, and every
  /// execution until the kernel's first measurement).
  uint32_t inline_below_ns_ = 100;
  /// Race checker: `RuntimeOptions{}.race_check(pto2::RaceCheck::Warn)`; `race_check(true)` = Error.
  RaceCheck race_check_ = RaceCheck::Off;

  RuntimeOptions& aic_workers(uint32_t n) { aic_workers_ = n; return *this; }
  RuntimeOptions& aiv_workers(uint32_t n) { aiv_workers_ = n; return *this; }
  RuntimeOptions& clusters(uint32_t n) { clusters_ = n; return *this; }
  RuntimeOptions& aic_cores(uint32_t n) { aic_cores_ = n; return *this; }
  RuntimeOptions& aiv_cores(uint32_t n) { aiv_cores_ = n; return *this; }
  RuntimeOptions& task_ring_size(uint32_t n) { task_ring_size_ = n; return *this; }
  RuntimeOptions& memory_limit(size_t bytes) { memory_limit_ = bytes; return *this; }
  RuntimeOptions& trace(bool on) { trace_ = on; return *this; }
  RuntimeOptions& deadlock_timeout_ms(uint32_t ms) { deadlock_timeout_ms_ = ms; return *this; }
  RuntimeOptions& spin_us(uint32_t us) { spin_us_ = us; return *this; }
  RuntimeOptions& orchestrator_helps(bool on) { orchestrator_helps_ = on; return *this; }
  RuntimeOptions& help_threshold(uint32_t n) { help_threshold_ = n; return *this; }
  RuntimeOptions& inline_below_ns(uint32_t ns) { inline_below_ns_ = ns; return *this; }
  RuntimeOptions& race_check(RaceCheck mode) { race_check_ = mode; return *this; }
  RuntimeOptions& race_check(bool on) { race_check_ = on ? RaceCheck::Error : RaceCheck::Off; return *this; }
};

struct TimingSlotSpan {
  uint32_t slot;
  uint64_t tasks;
  double start_us;  ///< earliest dispatch, from the start of the run
  double end_us;    ///< latest finish
  double duration_us() const { return end_us - start_us; }
};

struct RunResult {
  bool ok() const { return message.empty(); }
  std::string message;  ///< empty on success; else the first failure (names task and kernel)
  uint64_t tasks_submitted = 0;  ///< including dummy tasks
  uint64_t tasks_executed = 0;   ///< tasks whose kernel ran
  /// Of those, tasks run undeferred: on the orchestrator thread at submission, because they
  /// had nothing to wait for and either help_threshold tasks were queued or their kernel is
  /// shorter than inline_below_ns.
  uint64_t tasks_undeferred = 0;
  uint64_t tasks_skipped = 0;    ///< tasks retired by a false predicate
  uint64_t tasks_dummy = 0;
  uint64_t auto_edges = 0;       ///< dependency edges found by automatic tracking (to live tasks)
  uint64_t explicit_edges = 0;   ///< edges from set_dependencies (to live tasks)
  double wall_seconds = 0;
  size_t peak_bytes = 0;         ///< peak bytes of live runtime-allocated tensors
  size_t pool_bytes = 0;         ///< bytes the memory pool holds from the system
  std::vector<TimingSlotSpan> timing_slots;  ///< one per slot used
  /// Race checker (RuntimeOptions::race_check): unordered conflicting task pairs found, and
  /// their report (in Error mode also the run's `message`).
  uint64_t races = 0;
  std::string race_report;
  /// (earlier, later) task ids (PTO2TaskId::value()), one per pair. Messages, traces and graphs
  /// number a run's tasks from 1 instead ("task #3": the run's third submission), since ids count
  /// on across the runs of a runtime.
  std::vector<std::pair<uint64_t, uint64_t>> race_pairs;
};

using OrchestrationEntry = std::function<void(const ChipStorageTaskArgs&)>;

namespace detail {
class Engine;
}

class Runtime {
 public:
  explicit Runtime(const RuntimeOptions& options = RuntimeOptions{});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  /// Registers kernel `id` (ids 0..1000000). Not during a run: then (from the entry, a kernel or
  /// another thread) it throws std::logic_error.
  Runtime& register_kernel(int32_t id, const std::string& name, CoreType core, PTO2KernelFn fn);
  /// Runs `entry(args)` on the calling thread (the orchestrator thread of the run) while the
  /// workers execute ready tasks; returns when everything finished or the run failed (then
  /// remaining tasks are cancelled). Options out of range throw std::invalid_argument from
  /// the constructor (aic_workers / aiv_workers above 4096, task_ring_size above 2^24). Called
  /// inside a run of this Runtime (its entry or a kernel) it would wait for itself: it returns
  /// at once with a RunResult saying so.
  RunResult run(const OrchestrationEntry& entry, const ChipStorageTaskArgs& args = ChipStorageTaskArgs{});
  /// Stops the run in progress, if any: tasks not yet started are cancelled, the next call of
  /// the orchestration into the runtime unwinds it, and run() returns (within the time the
  /// kernels running now take) with RunResult::message "cancelled: ...". The Runtime stays
  /// usable. Thread-safe and async-signal-safe (atomics and futex wakes only):
  ///     std::thread t([&] { rt.run(entry, args); });  rt.cancel();  t.join();
  void cancel() noexcept;
  /// Writes the trace of the last run (needs RuntimeOptions::trace(true)) as Chrome JSON. False
  /// when the file cannot be written, with the path and the OS's reason in `*error` (if given):
  /// "could not write the trace to /tmp/x/t.json: No such file or directory". False during a
  /// run ("write_trace: a run of this Runtime is in progress ...").
  bool write_trace(const std::string& path, std::string* error = nullptr) const;
  const RuntimeOptions& options() const;
  /// Changes RuntimeOptions::race_check for the following runs. Not during a run (throws
  /// std::logic_error).
  void set_race_check(RaceCheck mode);
  /// Writes the task graph of the last run as Graphviz DOT (tasks with kernel, core type and
  /// DSL line; automatic, explicit and get_tensor_data-wait edges styled apart; barriers and
  /// predicate-skipped tasks marked). The graph is the race checker's record, so the run needs
  /// race_check Warn or Error; false otherwise or when the file cannot be written, saying which
  /// (with the OS's reason) in `*error` (if given); false during a run.
  ///     rt.set_race_check(pto2::RaceCheck::Warn); rt.run(entry, args); rt.write_graph("g.dot");
  bool write_graph(const std::string& path, std::string* error = nullptr) const;
  /// Tasks submitted and completed so far in the run in progress (or the last run), for a
  /// progress indicator. Thread-safe, callable while run() executes on another thread; the
  /// two counts are read apart, so completed <= submitted holds but they may lag a little.
  ///     uint64_t sub = 0, done = 0;  rt.progress(&sub, &done);
  void progress(uint64_t* submitted, uint64_t* completed) const noexcept;

 private:
  std::unique_ptr<detail::Engine> engine_;
};

}  // namespace pto2
