// pto_l3_api.h — the L3 (distributed HOST) runtime API of libpto2.
//
// A HOST-level orchestration does not submit kernels: it submits *next-level tasks*, each one
// a whole chip-level (L2) orchestration run, to a target registered under a small integer id.
// Generated host code (src/codegen/host) includes only this header:
//
//     TaskArgs args_t0;
//     args_t0.add_tensor(ext_x);
//     args_t0.add_dep_wait(prev);                  // ordering only
//     TaskHandle t0 = submit_next_level(0, args_t0);
//
// Ordering of a next-level task: it starts after every valid add_dep_wait handle finished AND
// after the previous task submitted to the same target id finished (one ordering chain per
// target, in submission order — the per-target stand-in for the per-rank communication
// chain). Invalid handles (TaskHandle{} / TaskHandle::invalid()) contribute no edge.
//
// A dependency-only barrier (what pl.system.task_dummy lowers to) is a fan-in point that runs
// nothing: it finishes once every valid add_dep_wait handle finished, joins no per-target
// chain, and its handle is waited on like any other:
//
//     TaskArgs args_b;
//     args_b.add_dep_wait(t0);
//     args_b.add_dep_wait(t1);
//     TaskHandle both = submit_barrier(args_b);    // invalid if args_b waits on nothing
//     TaskArgs args_c;
//     args_c.add_dep_wait(both);                   // starts after t0 and t1
//
// Host side (on CPU, every target runs its L2 entry as a full libpto2 run on a pool of
// "chip" runtimes, each with its own worker threads):
//
//     pto2::L3Runtime l3(pto2::L3Options{}.chips(2));
//     l3.register_kernel(0, "kernel_add", pto2::CoreType::AIV, &kernel_add);
//     l3.register_target(0, "chip_orch", &chip_orch_entry);
//     l3.register_target_kernel(1, 0, "kernel_mul", pto2::CoreType::AIV, &kernel_mul);  // target 1 only
//     pto2::L3RunResult r = l3.run(&host_entry, args);
//     if (!r.ok()) puts(r.message.c_str());
//
// Errors: a failing next-level task (its L2 run failed, or its entry threw) stops the run: no
// further next-level task starts, submit_next_level() in the host entry throws an internal
// exception that unwinds it, and run() returns the first failure naming the task and target.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pto_orchestration_api.h"

/// The opaque id of a next-level task (what submit_next_level returns). Default = invalid.
struct TaskHandle {
  uint64_t run_ = 0;   ///< the L3 run that issued it (0 = invalid)
  uint64_t index_ = 0;  ///< 1-based task index within that run
  bool is_valid() const { return run_ != 0; }
  static TaskHandle invalid() { return TaskHandle{}; }
};

/// The arguments of one next-level task: the L2 entry sees `tensors`/`scalars` as its
/// ChipStorageTaskArgs; `waits` are ordering-only dependencies.
struct TaskArgs {
  ChipStorageTaskArgs storage;
  std::vector<TaskHandle> waits;

  void add_tensor(const Tensor& t) { storage.add_tensor(t); }
  void add_scalar(uint64_t v) { storage.add_scalar(v); }
  /// Start only after `h` finished. Invalid handles are ignored.
  void add_dep_wait(const TaskHandle& h) {
    if (h.is_valid()) waits.push_back(h);
  }
};

/// Submits a next-level task running the L2 entry registered under `target_id`. Only valid on
/// the thread running the host entry of pto2::L3Runtime::run (else throws std::logic_error).
/// Unknown target ids and handles of another run fail the run.
TaskHandle submit_next_level(int32_t target_id, TaskArgs& args);

/// Submits a dependency-only barrier: it runs nothing on any chip, finishes once every valid
/// add_dep_wait handle of `args` finished, and joins no per-target chain. With no valid wait
/// there is nothing to wait for and it returns TaskHandle::invalid() (as a task_dummy without
/// deps does at L2). `args` must carry no tensors or scalars (else the run fails: they would be
/// silently dropped). Same thread rule and error handling as submit_next_level.
TaskHandle submit_barrier(TaskArgs& args);

namespace pto2 {

/// An L2 orchestration entry (the generated `aicpu_orchestration_entry`).
using L2Entry = void (*)(const ChipStorageTaskArgs&);
/// A HOST orchestration entry (the generated `host_orchestration_entry`).
using HostEntry = void (*)(const ChipStorageTaskArgs&);

class L3Transport;

struct L3Options {
  uint32_t chips_ = 1;           ///< next-level tasks that may run at the same time (in-process transport)
  RuntimeOptions chip_options_;  ///< options of each chip's libpto2 Runtime
  /// Live next-level tasks (submitted, not yet retired) before submit blocks (back-pressure):
  /// the bound on the runtime's memory, whatever the number of tasks a run submits.
  uint32_t window_ = 1024;
  /// Keep an L3TaskRecord per executed task in L3RunResult::tasks (memory grows with the run).
  bool record_tasks_ = true;
  /// Where next-level tasks run; nullptr = in-process (chips_ chip runtimes on threads).
  std::shared_ptr<L3Transport> transport_;
  L3Options& chips(uint32_t n) { chips_ = n; return *this; }
  L3Options& chip_options(const RuntimeOptions& o) { chip_options_ = o; return *this; }
  L3Options& window(uint32_t n) { window_ = n; return *this; }
  L3Options& record_tasks(bool on) { record_tasks_ = on; return *this; }
  L3Options& transport(std::shared_ptr<L3Transport> t) { transport_ = std::move(t); return *this; }
};

struct L3TaskRecord {
  uint64_t index;        ///< 1-based submission index (barriers take indices too)
  int32_t target_id;
  uint32_t chip;         ///< which chip ran it (under MPI: chip c is rank c + 1)
  double start_us;       ///< from the start of the run (dispatch, as seen by the host)
  double end_us;         ///< completion, as seen by the host
  RunResult result;      ///< the nested libpto2 run
  std::vector<uint64_t> deps;  ///< indices it waited on (dep-waits, chain edge), for traces
};

struct L3RunResult {
  bool ok() const { return message.empty(); }
  std::string message;             ///< empty on success; else the first failure
  uint64_t tasks_submitted = 0;    ///< submit_next_level calls (barriers excluded)
  uint64_t tasks_executed = 0;     ///< next-level tasks that ran to completion (barriers excluded)
  uint64_t barriers = 0;           ///< submit_barrier calls that returned a valid handle
  uint64_t wait_edges = 0;         ///< add_dep_wait edges (valid handles), barriers' included
  uint64_t chain_edges = 0;        ///< per-target ordering chain edges
  uint64_t peak_live_tasks = 0;    ///< most next-level tasks alive at once (<= L3Options::window_)
  /// Tensor bytes the transport moved (0 in-process, where memory is shared): from the host
  /// (rank 0) to chips, from chips back into the caller's arrays, and chip to chip directly.
  uint64_t bytes_to_chips = 0;
  uint64_t bytes_from_chips = 0;
  uint64_t bytes_between_chips = 0;
  double wall_seconds = 0;
  std::vector<L3TaskRecord> tasks;  ///< every executed next-level task (no barriers), in submission order
  /// Every barrier that returned a valid handle: (its index, the indices it waited on), in
  /// submission order (with L3Options::record_tasks_; traces draw edges through them).
  std::vector<std::pair<uint64_t, std::vector<uint64_t>>> barrier_deps;
};

/// One ready next-level task, handed by the scheduler to a transport. `args` stays valid until
/// the transport calls L3Executor::complete for `index`.
struct L3Dispatch {
  uint64_t index = 0;
  int32_t target_id = -1;
  const ChipStorageTaskArgs* args = nullptr;
  std::vector<uint64_t> deps;
  /// 0, or the task this one was queued behind on its chip (L3Executor::placed): it may be
  /// handed out before that task finished, and must not run if that task failed.
  uint64_t after = 0;
};

/// What a transport reports for a finished next-level task.
struct L3Completion {
  uint64_t index = 0;
  uint32_t chip = 0;
  double start_us = 0, end_us = 0;
  RunResult result;
  std::string error;  ///< empty = success; else why it failed (the scheduler adds task and target)
};

/// The scheduler side a transport talks to during a run (implemented by L3Runtime).
class L3Executor {
 public:
  virtual ~L3Executor() = default;
  /// Waits up to `timeout_us` (< 0: until the runtime shuts down) for a ready task. Returns
  /// false when none came in time or on shutdown. After a failure no task is handed out.
  virtual bool next(L3Dispatch& out, int64_t timeout_us) = 0;
  /// The transport will run task `index` (just handed out) on chip `chip`, after everything
  /// placed there before and in that order. Consumers whose only unfinished producer is
  /// `index` are then queued behind it on that chip (next_early), so a chain of tasks flows
  /// to one chip without a round trip per task. Optional: a transport that never calls it
  /// gets every task through next(). Call from the one thread serving `chip`.
  virtual void placed(uint64_t index, uint32_t chip) = 0;
  /// Non-blocking: a task queued behind an earlier one on `chip` (see placed), if any. After
  /// a failure no task is handed out. Same thread rule as placed.
  virtual bool next_early(uint32_t chip, L3Dispatch& out) = 0;
  /// Reports a finished task; callable from any thread, once per dispatched task.
  virtual void complete(L3Completion&& done) = 0;
  /// Fails the run with `message` (the first failure wins) without finishing a task.
  virtual void fail(const std::string& message) = 0;
  /// True once the host entry returned and every dispatched task completed, or the run failed
  /// and no dispatched task is still running: the transport may stop serving this run.
  virtual bool run_over() const = 0;
  /// Dispatched tasks not yet completed.
  virtual uint64_t in_flight() const = 0;
  /// Runs target `target_id`'s L2 entry on this process's chip runtime `chip` (kernels as
  /// registered). What the in-process transport does per task, and what an MPI rank serves.
  virtual RunResult run_local(uint32_t chip, int32_t target_id, const ChipStorageTaskArgs& args) = 0;
  /// "'name'" of a registered target, for messages.
  virtual std::string target_name(int32_t target_id) const = 0;
  /// Microseconds since the start of the current run.
  virtual double now_us() const = 0;
  /// The arguments of the current run's host entry: the caller's arrays (what must hold the
  /// outputs when the run ends).
  virtual const ChipStorageTaskArgs& run_args() const = 0;
  /// Adds tensor bytes moved (L3RunResult::bytes_*). Callable from the transport's threads.
  virtual void count_bytes(uint64_t to_chips, uint64_t from_chips, uint64_t between_chips) = 0;
  /// Appends `text` to the failure message of a failed run (what the transport knows about
  /// the output arrays, e.g. writes held on a lost rank). Ignored when the run succeeded.
  virtual void note(const std::string& text) = 0;
};

/// Where next-level tasks run. The in-process transport is built in; MPI ranks come from
/// libpto2_mpi (pto_l3_mpi.h). A transport pulls ready tasks with L3Executor::next and reports
/// each with L3Executor::complete.
class L3Transport {
 public:
  virtual ~L3Transport() = default;
  /// Next-level tasks that may run at once (chips).
  virtual uint32_t chips() const = 0;
  /// Where chip `chip` is, for messages: "chip 1" or "rank 2".
  virtual std::string where(uint32_t chip) const { return "chip " + std::to_string(chip); }
  /// A run starts: serve `ex` until ex.run_over().
  virtual void begin(L3Executor& ex) = 0;
  /// The run is over (ex.run_over() is true): stop serving it; returns once nothing of the
  /// transport touches the run any more.
  virtual void end() = 0;
};

class L3Runtime {
 public:
  explicit L3Runtime(const L3Options& options = L3Options{});
  ~L3Runtime();
  L3Runtime(const L3Runtime&) = delete;
  L3Runtime& operator=(const L3Runtime&) = delete;

  /// Registers kernel `id` for every target (on every chip runtime). Not during a run (throws
  /// std::logic_error); a bad id or a null function throws std::invalid_argument here.
  L3Runtime& register_kernel(int32_t id, const std::string& name, CoreType core, PTO2KernelFn fn);
  /// Registers kernel `id` for the runs of `target_id` only (each L2 orchestration numbers its
  /// kernels from 0, so two targets may use the same id for different kernels). Such a target
  /// runs on its own per-chip runtimes that see the shared kernels plus its own. Not during a run.
  L3Runtime& register_target_kernel(int32_t target_id, int32_t id, const std::string& name, CoreType core,
                                    PTO2KernelFn fn);
  /// Registers the L2 entry that next-level tasks of `target_id` run. Not during a run.
  L3Runtime& register_target(int32_t target_id, const std::string& name, L2Entry entry);
  /// Runs `entry(args)` on the calling thread; returns when every next-level task finished or
  /// the run failed. One run at a time (callers on other threads wait); from this runtime's own
  /// host entry or an L2 entry it would wait for itself: refused (the result's message says so).
  L3RunResult run(HostEntry entry, const ChipStorageTaskArgs& args = ChipStorageTaskArgs{});
  /// Runs one next-level task of `target_id` right here on chip runtime `chip` (what an MPI
  /// rank does with a task it receives). `RunResult r = l3.run_target(0, 0, args);` Not during
  /// a run of this L3Runtime (throws std::logic_error: the chips are in use).
  RunResult run_target(uint32_t chip, int32_t target_id, const ChipStorageTaskArgs& args);
  /// Chip runtimes of this process (L3Options::chips_).
  uint32_t local_chips() const;

  struct Impl;

 private:
  Impl* impl_;
};

}  // namespace pto2
