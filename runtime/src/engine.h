// engine.h — a Runtime's engine: the parts it is made of, and the map of the files that
// implement them.
//
// Threads: the caller of run() is the orchestrator thread for that run (submission, scopes,
// dependency tracking, the memory pool's allocations — all single-threaded state lives there;
// it also waits for the tail and watches for deadlock), and N worker threads, alive as long as
// the Runtime (dispatch, execute, complete; they spin briefly, then park, between tasks and
// between runs). Cross-thread state is per-task atomics (the ring), the lock-free ready
// queues, the memory pool's release stack, and a few counters.
//
// The parts. Each is a plain member of Engine with its own state and header (no virtual
// calls, no pointer to reach it: the per-task path pays nothing for the split); a part that
// needs another's state gets it as an argument (Watchdog and Completion: a hooks struct
// holding one reference to the Engine, so the parts are reached as members). Engine wires
// them together: the operations that span parts (submit, the worker loop, run) are its own,
// by file below.
//   KernelTable       kernel_table.h       registered kernels and their sampled run times
//   TaskRing          task_ring.h          task slots (TaskSlot), live/retired ids
//   SubmitState       submit_state.h       submission: next task id, checks, slot filling, run counts
//   DependencyLinker  dependency_linker.h  the tracker (AUTO), a task's producers, edge linking
//   ScopeStack        scope_stack.h        PTO2_SCOPE nesting, runtime tensors, the memory pool
//   WorkerPool        worker_pool.h/.cpp   ready queues, workers (spin, park), gangs, thread stats
//   Completion        completion.h/.cpp    retirement: release of consumers, slot, storages; retired counts
//   Watchdog          watchdog.h           the one wait-for-progress loop, deadlock detection
//   FailureState      failure.h            the failure flag, first message, cancellation
//   RunRecord         run_record.h         trace events, orchestrator spans, timing slots
//
// Engine's operations, one file each:
//   submit.cpp        submission: SubmitState's steps, and submit, which drives them
//   short_path.h      the inlined short path (try_submit_undeferred)
//   dependencies.cpp  DependencyLinker, allocate_and_track, get_tensor_data waits
//   scopes.cpp        PTO2_SCOPE, alloc_tensors, the memory limit (allocation back-pressure)
//   workers.cpp       what a thread does with a task: the worker loop, running a block, helping,
//                     gang members
//   watchdog.cpp      what a stall means (deadlock in the orchestration, or at the tail)
//   kernel_abi.cpp    the functions kernels call (ctx->fail, group flags, pto2_note_access)
//   engine.cpp        construction, KernelTable, failure and cancellation, run()
//   trace.cpp         the Chrome trace of the last run; task_graph.cpp its DOT graph
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "completion.h"
#include "dependency_linker.h"
#include "failure.h"
#include "kernel_table.h"
#include "scope_stack.h"
#include "submit_state.h"
#include "tensor_check.h"
#include "untracked_writers.h"
#include "pto_orchestration_api.h"
#include "run_record.h"
#include "task_ring.h"
#include "util.h"
#include "watchdog.h"
#include "worker_pool.h"

namespace pto2::detail {

class RaceChecker;  // race_checker.h

/// Thrown on the orchestrator thread to unwind the entry once the run failed.
struct RunAborted {};

/// get/set_tensor_data's element check (dependencies.cpp), in a run and outside one: `ndims`
/// indices for a tensor of that rank, each inside its axis. Also refuses what a Tensor whose public fields were written by hand may hold: a rank above
/// PTO2_MAX_DIMS, a dtype that is no DataType, an element address past int64, and, with
/// `in_run` (a runtime tensor's storage is alive only then), an element outside its storage.
bool element_index_in_range(const Tensor& t, uint32_t ndims, const int64_t* idx, bool in_run);
/// The error for indices element_index_in_range refuses: "prog.py:12: get_tensor_data: index 9
/// out of range on axis 0 (extent 4)" (the site when `file` and `line` > 0 are given).
std::string element_index_error(const Tensor& t, uint32_t ndims, const int64_t* idx, bool for_write, const char* file,
                                int32_t line);

class Engine;
// What PTO2KernelContext::internal_ points to while a kernel runs.
struct KernelCtxInternal {
  std::string* err;                  // first ctx->fail message
  const Engine* engine;
  std::atomic<uint32_t>* gflags;     // this block pair's group flags; null unless a mixed task
  uint32_t side;                     // 0 AIC, 1 AIV
  uint64_t raw;                      // the task (race checker: pto2_note_access)
};


class Engine {
  // The engine whose orchestration entry runs on this thread (initial-exec: one load, no call),
  // or kInKernel on a thread running a kernel (workers, gang helpers, and the orchestrator while
  // it runs one): orchestration functions called there are refused, never run re-entrantly.
  __attribute__((tls_model("initial-exec"))) static thread_local Engine* tl_current;

 public:
  explicit Engine(const RuntimeOptions& opt);
  ~Engine();

  // ---- host side (engine.cpp)
  void register_kernel(int32_t id, const std::string& name, CoreType core, PTO2KernelFn fn);
  RunResult run(const OrchestrationEntry& entry, const ChipStorageTaskArgs& args);
  /// Stops the current run as soon as possible (see Runtime::cancel). Async-signal-safe.
  void cancel() noexcept;
  // The last run's trace as Chrome JSON (trace.cpp). False when the file cannot be written, with
  // the path and the OS's reason in `*error` (output_file.h).
  bool write_trace(const std::string& path, std::string* error = nullptr) const;
  // The last run's task graph as DOT (task_graph.cpp); false when it was not recorded or the
  // file cannot be written, saying which in `*error`.
  bool write_graph(const std::string& path, std::string* error = nullptr) const;
  /// Tasks submitted / completed so far in the current run (Runtime::progress); any thread.
  void run_progress(uint64_t* submitted, uint64_t* completed) const noexcept;
  const RuntimeOptions& options() const { return opt_; }

  // ---- orchestrator side, current run
  /// `undeferred_checked`: try_submit_undeferred found the task must wait (do not ask again).
  /// The task's id and runtime-allocated outputs land in `out` (a fresh TaskOutputTensors):
  /// filled in place, not returned, so no vector is moved and destroyed per submission.
  void submit(TaskKind kind, int32_t aic_kernel, int32_t aiv_kernel, Arg& params, const char* api, TaskOutputTensors& out,
              bool undeferred_checked = false);
  enum class Undeferred { kRan, kNotPlain, kMustWait };
  /// The common case of submit, on its own: a plain task (one block, no predicate, timing slot
  /// or runtime-allocated output) of a registered kernel, measured tiny or with the workers
  /// saturated, with nothing in flight to wait for runs undeferred here: kRan, its id in `out`.
  /// Otherwise nothing happened: call submit (which decides everything else, errors too),
  /// telling it when the answer was kMustWait. (short_path.h)
  Undeferred try_submit_undeferred(TaskKind kind, int32_t kernel, const Arg& params, TaskOutputTensors& out);
  TaskOutputTensors alloc_tensors(const TensorCreateInfo* const* infos, uint32_t n);
  void wait_for_element(const Tensor& t, uint32_t ndims, const int64_t* idx, bool for_write = false,
                        const char* file = nullptr, int32_t line = 0);
  void scope_begin(PTO2ScopeMode mode);
  void scope_end() noexcept;
  /// A PTO2ScopeGuard's close of the scope it opened at `depth` in run `run`: pops it when it is
  /// the innermost scope of this run; a guard that outlived its run does nothing (the run closed
  /// its scope when it ended); one closing around a still-open inner scope fails the run.
  void scope_end(uint64_t run, uint32_t depth) noexcept;
  uint32_t scope_depth() const { return scopes_.depth(); }
  /// This run's serial, unique across the process's runtimes (0 before the first run).
  uint64_t run_serial() const { return run_serial_; }

  // ---- failure (engine.cpp)
  void fail(const std::string& msg);
  bool failed() const { return failure_.failed(); }
  [[noreturn]] void abort_orchestration(const std::string& msg);

  /// tl_current's mark for a thread running a kernel (never dereferenced).
  static Engine* in_kernel_mark() { return reinterpret_cast<Engine*>(uintptr_t{1}); }
  /// The engine whose orchestration runs on this thread; null outside a run and in a kernel.
  static Engine* current() { return tl_current == in_kernel_mark() ? nullptr : tl_current; }
  /// Either: one compare (the API's entry points: the common case is a current engine).
  static Engine* current_or_mark() { return tl_current; }
  static bool in_kernel() { return tl_current == in_kernel_mark(); }
  /// Calls `f` (which runs a kernel) with this orchestrator thread marked as in a kernel.
  template <class F>
  static void as_kernel(F&& f) {
    struct Restore {
      Engine* was;
      ~Restore() { tl_current = was; }
    } restore{tl_current};
    tl_current = in_kernel_mark();
    f();
  }
  /// Throws std::logic_error naming `api` when a run of this engine is in progress (also from
  /// its entry or a kernel); else returns the run lock, held while `api` changes or reads
  /// what a run uses ("not during a run": register_kernel, set_race_check, write_trace/graph).
  std::unique_lock<std::mutex> between_runs(const char* api) const;

  // ---- race checker (race_checker.h): null unless RuntimeOptions::race_check is on
  RaceChecker* race() const { return race_.get(); }
  /// The run's task number (#1 first) of task id `raw`, as error messages print it.
  uint64_t task_number(uint64_t raw) const { return sub_.number(raw); }
  bool in_manual_scope() const { return scopes_.in_manual(); }
  void set_race_check(RaceCheck mode) {
    auto lk = between_runs("set_race_check");
    opt_.race_check_ = mode;
  }
  /// The producers the last submit() linked the task after (automatic, then explicit; empty
  /// for a task run undeferred). The race checker verifies them (RaceChecker::on_runtime_edges).
  const std::vector<uint64_t>& last_submit_deps() const { return linker_.producers(); }
  /// Task `raw` was submitted and has not retired (orchestrator thread).
  bool task_live(uint64_t raw) const { return ring_.is_live(raw); }

 private:
  std::string describe_slot(const TaskSlot& s, uint64_t raw) const { return describe_task(s.kind, s.kernel, raw); }
  std::string describe_task(TaskKind kind, const int32_t* kernel, uint64_t raw) const;

  // ---- submission (submit.cpp; validation, filling and publishing a slot are SubmitState's)
  /// The slot of task `raw`, waiting until it is free (ring full). submit() checks the common
  /// case, a free slot, inline (SubmitState::free_slot).
  TaskSlot& acquire_slot(uint64_t raw);
  static void keep_storage(TaskSlot& s, PTO2Storage* storage);
  void run_undeferred(TaskKind kind, int32_t kernel, const Arg& params, uint64_t raw, int type);
  void run_undeferred_inline(TaskKind kind, int32_t kernel, const Arg& params, uint64_t raw, int type);
  void run_undeferred_timed(TaskKind kind, int32_t kernel, const Arg& params, uint64_t raw, int type);
  void undeferred_failed(TaskKind kind, int32_t kernel, uint64_t raw, int type, const Arg& params);

  // ---- dependency tracking (dependencies.cpp; the linker is dependency_linker.h)
  bool is_live(uint64_t raw) const { return ring_.is_live(raw); }
  /// Allocates the task's runtime outputs (into `out`) and records its accesses in the
  /// linker; returns the predicate's element (kept alive like a tensor), or nullptr.
  const Tensor* allocate_and_track(TaskSlot& s, const Arg& params, uint64_t raw, bool manual_scope,
                                   TaskOutputTensors& out, bool& untracked_write);

  // ---- scopes and memory (scopes.cpp)
  PTO2Storage* alloc_storage(size_t bytes);
  void drain_released();

  // ---- ready queues and workers (workers.cpp)
  void push_ready(uint32_t idx);
  void schedule(uint32_t idx, int worker_type, uint32_t* local_next);
  void worker_main(int worker);
  void execute(uint32_t idx, int type, int worker, uint32_t* local_next);
  /// Runs block `block` of the task in `s` (its kernel `kernel_type`, index `block_idx`).
  void run_block(int worker, TaskSlot& s, uint32_t block, uint32_t kernel_type, int32_t block_idx);
  void call_kernel(PTO2KernelFn fn, const Tensor* tensors, uint32_t n_tensors, const uint64_t* scalars,
                   uint32_t n_scalars, int32_t block_idx, int32_t block_num, std::atomic<uint32_t>* gflags,
                   uint32_t side, std::string& err, uint64_t raw) const;
  /// Orchestrator: runs one ready task inline; with `workers_queues` false, only one from a
  /// shared queue (the submission throttle: see help_one in workers.cpp).
  bool help_one(bool workers_queues = true);
  /// Joins the active gang (WorkerPool::join_gang) and runs this member's block.
  bool try_gang(int worker, int type, uint32_t* local_next);
  /// Starts gang helper threads until `members` threads of core type `type` can join a gang.
  void ensure_gang_threads(int type, uint32_t members);
  void gang_helper_main(int stats_index, int type);

  // ---- completion (the part is completion.h; Completion's calls take these parts)
  /// What Completion drives when a task retires: the Engine's parts, reached as members.
  struct CompletionParts {
    Engine& e;
    Completion& completion() const { return e.completion_; }
    TaskRing& ring() const { return e.ring_; }
    bool failed() const { return e.failed(); }
    MemoryPool& pool() const { return e.scopes_.pool(); }
    void schedule(uint32_t idx, int worker_type, uint32_t* local_next) const {
      e.schedule(idx, worker_type, local_next);
    }
    /// A task retired because its predicate was false: the race checker and the trace (completion.cpp).
    void skipped(uint32_t thread, const TaskSlot& s, uint64_t raw) const;
    void retired(uint64_t raw) const { e.watchdog_.on_retired(raw); }
  };
  CompletionParts parts() { return CompletionParts{*this}; }
  /// The producers of the task in slot `idx` have all finished (Completion::on_ready).
  void on_ready(uint32_t idx, int worker_type, uint32_t* local_next, uint32_t stats) {
    Completion::on_ready(parts(), idx, worker_type, local_next, stats);
  }

  // ---- waiting (the loop is the Watchdog's, watchdog.h; what a stall means, watchdog.cpp)
  /// What the watchdog asks of the engine while the orchestrator waits.
  struct WaitHooks {
    Engine& e;
    bool help_one() { return e.help_one(); }
    uint64_t progress() const { return e.progress(); }
    bool failed() const { return e.failed(); }
    bool any_busy() const { return e.workers_.any_busy(); }
    void woke() { e.keep_workers_off_this_cpu(); }   // the orchestrator may wake on another CPU
  };
  /// WorkerPool::keep_workers_off for the orchestrating thread's CPU now (orchestrator thread).
  void keep_workers_off_this_cpu() { workers_.keep_workers_off(opt_.orchestrator_helps_ ? sched_getcpu() : -1); }
  /// The orchestrator waits (inside submission, allocation or get_tensor_data) for `what`:
  /// throws RunAborted if the run fails meanwhile; a stall is a deadlock (fails the run).
  template <class Pred>
  void orchestrator_wait(Pred&& ready, const char* what) {
    switch (watchdog_.wait(WaitHooks{*this}, ready, true, true, 2000000)) {
      case Watchdog::WaitEnd::kReady: return;
      case Watchdog::WaitEnd::kFailed: throw RunAborted{};
      case Watchdog::WaitEnd::kStalled: orchestrator_stalled(what);
    }
  }
  [[noreturn]] void orchestrator_stalled(const char* what);
  /// Waits for every task of the run to retire; a stall fails the run and poisons the runtime.
  void wait_for_tail();
  /// wait_for_tail's first part: polls up to spin_us for the last retirements (watchdog.cpp).
  void poll_for_tail();
  uint64_t progress() const { return completion_.retired(workers_.n_stats()); }  // tasks retired so far (all threads)

  /// Tasks submitted and not yet retired (orchestrator thread).
  int64_t inflight() const { return sub_.inflight(progress()); }
  /// inflight() == 0, remembered while nothing is submitted to the workers (orchestrator thread).
  bool quiet() {
    return sub_.quiet([this] { return progress(); });
  }
  /// At least `n` tasks are queued for core type `type` (orchestrator thread).
  bool queued_at_least(int type, size_t n) { return workers_.queued_at_least(type, n, sub_.head_seen(type)); }

  // ---- configuration
  RuntimeOptions opt_;
  uint32_t n_cores_[2] = {0, 0};  // modelled cores per type (>= its workers): the widest sync_start gang
  uint32_t clusters_ = 0;
  size_t help_threshold_ = 32;
  // Per core type: orchestrator_helps, no trace (a traced task needs its slot), and workers
  // of that type (a task for a type without workers must fail in submit).
  bool undeferred_on_[2] = {false, false};

  KernelTable kernels_;  // registered functions and their run time from sampled executions

  TaskRing ring_;  // read by every thread on every task: never on a line written per submission

  // Written on every submission: a new cache line (alignas), so the workers' reads of the
  // fields above (ring_, kernels_) never miss.
  SubmitState sub_;

  // ---- dependency tracking, scopes and memory (orchestrator thread)
  DependencyLinker linker_;  // tracker, the producers of the task being submitted, edges
  UntrackedWriters untracked_;  // tasks with an untracked write, for get/set_tensor_data
  uint64_t run_serial_ = 0;  // run(): the process-wide serial of the current run (PTO2ScopeGuard)
  ScopeStack scopes_;        // PTO2_SCOPE nesting, runtime tensors and their memory pool

  WorkerPool workers_;  // ready queues, workers, gangs, per-thread stats (its own lines)

  // ---- completion and waiting (own lines: read or written at every retirement)
  Completion completion_;  // retirement, the retired counts
  Watchdog watchdog_;  // the orchestrator's waits and their wake-ups; deadlock detection

  FailureState failure_;  // read by every thread per task, written once: its own line

  RunRecord record_;  // trace events, orchestrator spans, timing slots of the last run

  mutable std::mutex run_mu_;
  std::atomic<bool> running_{false};  // a run is in progress (between_runs; set under run_mu_)
  bool last_run_queued_ = false;  // the last run queued tasks for the workers (run(): wake them early)
  // A run has started: until then an idle worker parks at once. Spinning before any run found
  // nothing and took the CPUs from the thread starting the others (4,096 workers took ~0.9 s).
  std::atomic<bool> ran_{false};
  std::unique_ptr<RaceChecker> race_;
};

// The layout rules above, kept by the parts' own alignment: each starts a cache line.
static_assert(alignof(SubmitState) >= 64 && alignof(WorkerPool) >= 64 && alignof(Completion) >= 64 &&
                  alignof(Watchdog) >= 64 && alignof(FailureState) >= 64,
              "a part written per submission or per task must not share a line with the ring or kernel table");

// " submitted at prog.py:42" for a task whose submission named its DSL line, else "".
inline std::string submitted_at(const char* file, int32_t line) {
  return file && line > 0 ? std::string(" submitted at ") + file + ":" + std::to_string(line) : std::string();
}

// Runs one block of a kernel; a failure message lands in `err` (left empty on success).
inline void Engine::call_kernel(PTO2KernelFn fn, const Tensor* tensors, uint32_t n_tensors, const uint64_t* scalars,
                                uint32_t n_scalars, int32_t block_idx, int32_t block_num, std::atomic<uint32_t>* gflags,
                                uint32_t side, std::string& err, uint64_t raw) const {
  PTO2KernelContext ctx;
  ctx.tensors = tensors;
  ctx.tensor_count = n_tensors;
  ctx.scalars = scalars;
  ctx.scalar_count = n_scalars;
  ctx.block_idx = block_idx;
  ctx.block_num = block_num;
  KernelCtxInternal internal{&err, this, gflags, side, raw};
  ctx.internal_ = &internal;
  try {
    fn(&ctx);
  } catch (std::exception& e) {
    err = std::string("threw: ") + e.what();
  } catch (...) {
    err = "threw an unknown exception";
  }
}

}  // namespace pto2::detail

#include "short_path.h"
