// engine.h — the state of a Runtime: task ring, ready queues, workers, tracker, scopes, trace.
//
// Threads: one orchestrator thread per run (submit, scopes, tracker, memory pool — all
// single-threaded state lives there), N worker threads (dispatch, execute, complete), and the
// caller of run() (waits, detects deadlock). Cross-thread state is per-task atomics, the
// lock-free ready queues, the memory pool's release stack, and a few counters.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dep_tracker.h"
#include "kernel_timing.h"
#include "memory_pool.h"
#include "pto_orchestration_api.h"
#include "util.h"

namespace pto2::detail {

class RaceChecker;  // race_checker.h

/// Thrown on the orchestrator thread to unwind the entry once the run failed.
struct RunAborted {};

enum class TaskKind : uint8_t { AIC = 0, AIV = 1, MIXED = 2, DUMMY = 3 };

struct KernelInfo {
  std::string name;
  CoreType core = CoreType::AIV;
  PTO2KernelFn fn = nullptr;
};

struct EdgeNode {
  EdgeNode* next;
  uint32_t consumer;
};
inline EdgeNode* const kClosed = reinterpret_cast<EdgeNode*>(uintptr_t{1});

struct alignas(64) TaskSlot {
  std::atomic<uint64_t> raw{0};      // id of the occupant (written by the orchestrator only)
  std::atomic<bool> done{true};      // occupant finished (its consumers are/being released)
  std::atomic<bool> free{true};      // slot may be reused
  std::atomic<int32_t> fanin{0};     // unfinished producers (+ a guard while being submitted)
  // Consumers waiting for this task: a lock-free list of nodes owned by the consumers,
  // closed (kClosed) by the retiring thread, which then releases everyone on it.
  std::atomic<EdgeNode*> fanout{nullptr};
  std::vector<EdgeNode> in_edges;    // nodes this task links into its producers' lists

  TaskKind kind = TaskKind::AIV;
  int32_t kernel[2] = {-1, -1};      // [AIC, AIV]
  PTO2KernelFn fn[2] = {nullptr, nullptr};
  uint32_t block_num = 1;
  bool sync_start = false;
  bool gang = false;
  bool has_pred = false;
  bool untracked_write = false;
  int8_t timing_slot = -1;
  const char* site_file = nullptr;   // DSL submission site (PTO2_SOURCE_SITE): named in errors
  int32_t site_line = 0;
  CoreTaskPredicate pred;
  pto2::SmallVec<Tensor, 4> tensors;
  pto2::SmallVec<uint64_t, 8> scalars;
  std::vector<PTO2Storage*> storages;

  std::atomic<uint32_t> next_block{0};
  std::atomic<uint32_t> blocks_left{0};
  // gang assembly
  std::atomic<uint32_t> claimed[2];
  std::atomic<uint32_t> arrived{0};
  std::atomic<bool> go{false};
  uint32_t need[2] = {0, 0};
  // group flags of a mixed task, one word per block pair (see GroupFlagBits); reset at submit
  std::unique_ptr<std::atomic<uint32_t>[]> gflags;
  uint32_t gflags_cap = 0;
};

// Layout of a mixed task's group flag word: bit side*8+f = flag f signalled by side (0 AIC,
// 1 AIV); bit kGroupDoneBit+side = that side's kernel returned.
constexpr uint32_t kGroupFlags = 8;
constexpr uint32_t kGroupDoneBit = 16;

class Engine;
// What PTO2KernelContext::internal_ points to while a kernel runs.
struct KernelCtxInternal {
  std::string* err;                  // first ctx->fail message
  const Engine* engine;
  std::atomic<uint32_t>* gflags;     // this block pair's group flags; null unless a mixed task
  uint32_t side;                     // 0 AIC, 1 AIV
  uint64_t raw;                      // the task (race checker: pto2_note_access)
};

// One kernel execution in kSampleEvery per thread is timed (two clock reads, which cost tens
// of ns on some machines) to keep the per-kernel average run time current; a kernel not yet
// measured is timed on every run.
constexpr uint32_t kSampleEvery = 64;

struct alignas(64) WorkerStats {
  std::atomic<uint64_t> completed{0};
  uint64_t executed = 0, skipped = 0, cancelled = 0, dummy = 0;
  uint64_t undeferred = 0;  // kernel runs at submission (not counted in `executed`)
  uint32_t runs = 0;  // kernel executions on this thread (every kSampleEvery-th is timed)
  std::atomic<bool> busy{false};
};

struct TraceEvent {
  uint64_t raw;
  int32_t kernel;
  uint32_t block;
  int64_t start_ns, end_ns;
};

struct Scope {
  PTO2ScopeMode mode;
  std::vector<PTO2Storage*> allocs;
};

class Engine {
  // The engine whose orchestration entry runs on this thread (initial-exec: one load, no call).
  __attribute__((tls_model("initial-exec"))) static thread_local Engine* tl_current;

 public:
  explicit Engine(const RuntimeOptions& opt);
  ~Engine();

  // host side
  void register_kernel(int32_t id, const std::string& name, CoreType core, PTO2KernelFn fn);
  RunResult run(const OrchestrationEntry& entry, const ChipStorageTaskArgs& args);
  bool write_trace(const std::string& path) const;
  const RuntimeOptions& options() const { return opt_; }

  // orchestrator side (current run)
  /// `undeferred_checked`: try_submit_undeferred found the task must wait (do not ask again).
  TaskOutputTensors submit(TaskKind kind, int32_t aic_kernel, int32_t aiv_kernel, Arg& params, const char* api,
                           bool undeferred_checked = false);
  enum class Undeferred { kRan, kNotPlain, kMustWait };
  /// The common case of submit, on its own: a plain task (one block, no predicate, timing slot
  /// or runtime-allocated output) of a registered kernel, measured tiny or with the workers
  /// saturated, with nothing in flight to wait for runs undeferred here: kRan, its id in `out`.
  /// Otherwise nothing happened: call submit (which decides everything else, errors too),
  /// telling it when the answer was kMustWait.
  Undeferred try_submit_undeferred(TaskKind kind, int32_t kernel, const Arg& params, TaskOutputTensors& out);
  TaskOutputTensors alloc_tensors(const TensorCreateInfo* const* infos, uint32_t n);
  void wait_for_element(const Tensor& t, uint32_t ndims, const int64_t* idx);
  void scope_begin(PTO2ScopeMode mode);
  void scope_end() noexcept;

  // failure
  void fail(const std::string& msg);
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  [[noreturn]] void abort_orchestration(const std::string& msg);

  static Engine* current() { return tl_current; }

  // race checker (race_checker.h): null unless RuntimeOptions::race_check is on
  RaceChecker* race() const { return race_.get(); }
  bool in_manual_scope() const { return scopes_.back().mode == PTO2ScopeMode::MANUAL; }
  void set_race_check(RaceCheck mode) { opt_.race_check_ = mode; }

 private:
  friend struct WorkerLoop;
  TaskSlot& slot_of(uint64_t raw) { return slots_[(raw - 1) & ring_mask_]; }
  uint32_t slot_index(uint64_t raw) const { return static_cast<uint32_t>((raw - 1) & ring_mask_); }
  // Orchestrator thread. Reads two compact arrays, not the slot: its cache line is the
  // retiring worker's, and the tracker asks about many finished tasks.
  bool is_live(uint64_t raw) {
    const uint64_t i = (raw - 1) & ring_mask_;
    return issued_raw_[i] == raw && retired_raw_[i].load(std::memory_order_acquire) != raw;
  }
  std::string describe(uint64_t raw);
  std::string describe_slot(const TaskSlot& s, uint64_t raw);
  std::string describe_task(TaskKind kind, const int32_t* kernel, uint64_t raw) const;

  // submission helpers
  TaskSlot& acquire_slot(uint64_t raw);
  PTO2Storage* alloc_storage(size_t bytes);
  void drain_released();
  template <class Pred>
  void orchestrator_wait(Pred&& ready, const char* what);
  bool add_edge(uint64_t producer, TaskSlot& consumer, uint32_t consumer_index);
  const Tensor* allocate_and_track(TaskSlot& s, const Arg& params, uint64_t raw, bool manual_scope,
                                   TaskOutputTensors& out, bool& untracked_write);
  bool track_tensors(const Tensor* ts, const PTO2ArgDir* dirs, uint32_t n, uint64_t raw, bool manual_scope);
  bool tensors_must_wait(const Arg& params, bool manual_scope);
  bool any_live(const pto2::SmallVec<PTO2TaskId, 8>& ids);
  void publish(TaskSlot& s, uint64_t raw, const Arg& params, bool gang, const uint32_t* need, uint32_t blocks);
  static void keep_storage(TaskSlot& s, PTO2Storage* storage);

  // scheduling (scheduler.cpp)
  enum Outcome : int { kRun = 0, kSkip = 1, kCancel = 2, kDummy = 3 };
  int inline_outcome(TaskSlot& s);
  void push_ready(uint32_t idx);
  void schedule(uint32_t idx, int worker_type, uint32_t* local_next);
  void on_ready(uint32_t idx, int worker_type, uint32_t* local_next, uint32_t stats);
  void retire(uint32_t idx, int outcome, int worker_type, uint32_t* local_next, uint32_t stats);
  void run_block(int worker, TaskSlot& s, uint32_t block, uint32_t kernel_type, int32_t block_idx);
  void call_kernel(PTO2KernelFn fn, const Tensor* tensors, uint32_t n_tensors, const uint64_t* scalars,
                   uint32_t n_scalars, int32_t block_idx, int32_t block_num, std::atomic<uint32_t>* gflags,
                   uint32_t side, std::string& err, uint64_t raw) const;
  std::string where(int worker) const;
  void run_undeferred(TaskKind kind, int32_t kernel, const Arg& params, uint64_t raw, int type);
  void run_undeferred_inline(TaskKind kind, int32_t kernel, const Arg& params, uint64_t raw, int type);
  void run_undeferred_timed(TaskKind kind, int32_t kernel, const Arg& params, uint64_t raw, int type);
  void undeferred_failed(TaskKind kind, int32_t kernel, uint64_t raw, int type, const Arg& params);
  void finish_block(uint32_t idx, int worker_type, uint32_t* local_next, int worker);
  void activate_gang();
  bool gang_wants(int type);
  bool try_gang(int worker, int type, uint32_t* local_next);
  void worker_main(int worker);
  void execute(uint32_t idx, int type, int worker, uint32_t* local_next);
  bool help_one();  // orchestrator: run one ready task inline

  RuntimeOptions opt_;
  std::vector<KernelInfo> kernels_;
  // Run time of each kernel id from sampled executions (kernel_timing.h).
  std::unique_ptr<KernelTiming[]> kernel_ns_;
  size_t kernel_ns_size_ = 0;
  bool is_measured(int32_t kernel) const { return kernel_ns_[static_cast<size_t>(kernel)].measured(); }
  bool is_tiny(int32_t kernel) const {
    return kernel_ns_[static_cast<size_t>(kernel)].below(static_cast<int64_t>(opt_.inline_below_ns_));
  }
  void record_kernel_ns(int32_t kernel, int64_t ns) {
    kernel_ns_[static_cast<size_t>(kernel)].record(ns, static_cast<int64_t>(opt_.inline_below_ns_));
  }
  uint32_t n_workers_ = 0;
  uint32_t n_type_[2] = {0, 0};
  uint32_t clusters_ = 0;
  size_t help_threshold_ = 32;
  // Per core type: orchestrator_helps, no trace (a traced task needs its slot), and workers
  // of that type (a task for a type without workers must fail in submit).
  bool undeferred_on_[2] = {false, false};
  std::string undeferred_err_;  // a failing undeferred kernel's message (orchestrator thread)

  // ring
  std::unique_ptr<TaskSlot[]> slots_;
  std::unique_ptr<uint64_t[]> issued_raw_;                // per slot: its occupant (orchestrator only)
  std::unique_ptr<std::atomic<uint64_t>[]> retired_raw_;  // per slot: the last occupant retired
  uint64_t ring_mask_ = 0;
  uint32_t ring_size_ = 0;
  uint64_t next_raw_ = 1;       // orchestrator: next id
  uint64_t run_first_raw_ = 1;  // first id of the current run

  // ready queues by core type, gang queue
  MpmcQueue<uint32_t> ready_[2];
  WaitPoint idle_[2];
  std::atomic<int32_t> spinning_[2] = {};
  std::mutex gang_mu_;
  std::deque<uint32_t> gang_queue_;
  std::atomic<int64_t> active_gang_{-1};
  std::atomic<uint32_t> gang_pending_{0};

  // progress / completion
  uint64_t total_submitted_ = 0;  // orchestrator (read by run() after joining it)
  /// Tasks submitted and not yet retired (orchestrator thread, or after it joined).
  int64_t inflight() const {
    uint64_t done = 0;
    for (uint32_t w = 0; w <= n_workers_; ++w) done += wstats_[w].completed.load(std::memory_order_acquire);
    return static_cast<int64_t>(total_submitted_ - done);
  }
  /// inflight() == 0, remembered while nothing is submitted to the workers (orchestrator thread).
  bool quiet() {
    if (quiet_at_ == total_submitted_) return true;
    if (inflight() != 0) return false;
    quiet_at_ = total_submitted_;
    return true;
  }
  uint64_t quiet_at_ = ~uint64_t(0);  // total_submitted_ when inflight() was last seen 0
  std::atomic<int64_t> untracked_live_{0};
  WaitPoint progress_;
  // While the orchestrator waits for task slots: the two task ids whose retirement may end
  // the wait ([0] == 0: any retirement wakes a waiting orchestrator).
  std::atomic<uint64_t> wake_on_[2] = {};
  std::atomic<bool> orchestration_done_{false};

  // workers
  std::vector<std::thread> threads_;
  std::vector<int> worker_type_;
  std::unique_ptr<WorkerStats[]> wstats_;
  std::atomic<bool> shutdown_{false};
  std::vector<std::vector<TraceEvent>> trace_;  // per worker

  // orchestrator-only state
  DepTracker tracker_;
  MemoryPool pool_;
  std::vector<Scope> scopes_;
  std::vector<PTO2Storage*> run_allocs_;  // the outermost scope's, released after the tail
  std::vector<uint64_t> dep_scratch_;
  Tensor pred_scratch_;  // the element a predicate reads (submission scratch)
  uint64_t n_submitted_ = 0, n_dummy_submitted_ = 0, auto_edges_ = 0, explicit_edges_ = 0;
  std::vector<std::pair<uint64_t, uint64_t>> trace_edges_;
  std::vector<std::pair<uint64_t, int32_t>> trace_tasks_;  // raw -> kernel id for names

  // failure
  std::atomic<bool> failed_{false};
  std::mutex fail_mu_;
  std::string fail_msg_;
  bool poisoned_ = false;

  // timing
  int64_t run_start_ns_ = 0;
  struct SlotTiming {
    std::atomic<int64_t> start{INT64_MAX};
    std::atomic<int64_t> end{0};
    std::atomic<uint64_t> tasks{0};
  } timing_[16];

  std::mutex run_mu_;
  std::unique_ptr<RaceChecker> race_;
  std::thread::id orch_thread_id_;
};

// ---------------------------------------------------------------- inline paths

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

// A dependency-free single-block task run on the orchestrator thread at submission, reading
// its arguments in place. It takes no slot and is neither in total_submitted_ nor in any
// `completed` count: it is submitted and finished within the call, so it is never in flight.
__attribute__((always_inline)) inline void Engine::run_undeferred_inline(TaskKind kind, int32_t kernel,
                                                                         const Arg& params, uint64_t raw, int type) {
  WorkerStats& ws = wstats_[n_workers_];
  if (__builtin_expect(++ws.runs % kSampleEvery == 0, 0)) return run_undeferred_timed(kind, kernel, params, raw, type);
  std::string& err = undeferred_err_;  // empty; reused, so no string is made per task
  call_kernel(kernels_[static_cast<size_t>(kernel)].fn, params.tensors().data(), params.tensor_count(),
              params.scalars().data(), params.scalars().size(), 0, 1, nullptr, static_cast<uint32_t>(type), err, raw);
  if (__builtin_expect(!err.empty(), 0)) undeferred_failed(kind, kernel, raw, type, params);
  ++ws.undeferred;
}

inline Engine::Undeferred Engine::try_submit_undeferred(TaskKind kind, int32_t kernel, const Arg& params,
                                                        TaskOutputTensors& out) {
  const int type = kind == TaskKind::AIC ? 0 : 1;
  if (!undeferred_on_[type] || static_cast<size_t>(kernel) >= kernel_ns_size_ || !params.is_plain() || failed())
    return Undeferred::kNotPlain;
  // Tiny, or the workers are saturated (the throttle: queueing one more only adds latency).
  if (!is_tiny(kernel) && (!is_measured(kernel) || ready_[type].size_hint() < help_threshold_))
    return Undeferred::kNotPlain;
  const auto& deps = params.dependencies();
  for (const PTO2TaskId& d : deps)
    if (!d.is_valid() || d.raw >= next_raw_) return Undeferred::kNotPlain;  // submit() reports it
  // With nothing in flight, every producer and every explicit dependency has finished.
  if (!quiet() && (tensors_must_wait(params, scopes_.back().mode == PTO2ScopeMode::MANUAL) || any_live(deps)))
    return Undeferred::kMustWait;
  const uint64_t raw = next_raw_++;
  ++n_submitted_;
  out.id_.raw = raw;
  run_undeferred_inline(kind, kernel, params, raw, type);
  return Undeferred::kRan;
}

}  // namespace pto2::detail
