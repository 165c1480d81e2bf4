// worker_pool.h — the threads that run tasks and the queues that feed them: a ready queue per
// core type, the workers (spin briefly, then park, between tasks), gang assembly (mixed and
// sync_start tasks start all their blocks at once) with the helper threads a gang wider than
// the workers needs, and the per-thread counters.
//
//     WorkerPool pool(1, 2, 0, ring.size());            // 1 AIC, 2 AIV workers
//     pool.start([&](int w) { /* the owner's worker loop: pool.next(...), run, retire */ });
//     pool.push(1, idx);                                  // slot idx is ready for an AIV worker
//     pool.push_own(w, 1, idx);                           // ... made ready by worker w's retirement
//     pool.shutdown();                                    // joins every thread
//
// What a task is and how it runs is the owner's (Engine: workers.cpp, completion.cpp); the pool
// only moves slot indices. Gang state lives in the task's slot: the gang methods read the ring.
//
// Ready queues, per core type: a shared one (the orchestrator's pushes, the further blocks of a
// multi-block task) and one per worker of the type, which only that worker pushes to — what
// its retirements make ready (beyond its private "next" slot) — so a worker's push never
// contends with the orchestrator's for the shared queue's tail (a cross-core cache line per
// push). A worker pops its own queue first while it holds tasks this worker pushed (their
// lines are in its cache), then the shared one (what was ready at submission), then steals
// from the others of its type; the orchestrator pops the shared queue when throttled, any
// queue when blocked.
// The orchestrator's throttle counts the workers' queues only while one of them is long
// (backlog_), so a submission reads no line a worker writes per task.
//
// Layout: the queues' ends, the parked-worker counts, the spinning counts and the gang queue
// each have their own cache line: spinning_ changes whenever a worker runs dry, idle_ is read
// by every push, gangs_ by every worker loop.
#pragma once

#include <sched.h>

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "task_ring.h"
#include "util.h"

namespace pto2::detail {

/// No task (a worker's empty "next" slot).
constexpr uint32_t kNoTask = UINT32_MAX;

/// Counters of one thread (a worker, the orchestrator, or a gang helper); its own line. What
/// it retired is counted by Completion (RetireCounts).
struct alignas(64) WorkerStats {
  uint64_t undeferred = 0;  // kernel runs at submission (not counted in `executed`)
  uint32_t runs = 0;  // kernel executions on this thread (every kSampleEvery-th is timed)
  uint32_t next = kNoTask;  // a worker's private "next" task (WorkerPool::next_slot)
  bool backlogged = false;  // a worker's own queue is counted in backlog_ (WorkerPool::push_own)
  // A worker pushed to its own queue since it last found it empty (only it pushes there, so
  // while this is false the queue is empty): pop_for asks that queue first only then.
  bool own_queued = false;
  uint32_t own_pops = 0;    // pops while own_queued (every kSharedFirstEvery-th asks the shared queue first)
  std::atomic<bool> busy{false};
  // This thread's last sampled kernel run (Engine::run_block) took under kPatientBelowNs: it
  // polls for work patiently (WorkerPool::wait_for_task).
  bool patient = false;
};

/// The gang (sync_start SPMD or mixed) tasks waiting to be assembled; one is active at a time.
struct GangQueue {
  std::mutex mu;
  std::deque<uint32_t> queue;            // slot indices, under mu
  std::atomic<int64_t> active{-1};       // the slot being assembled, or -1
  std::atomic<uint32_t> pending{0};      // queue.size(), readable without the lock
};

/// The CPUs the workers may use while the orchestrating thread, running tasks too, is on `orch`:
/// `allowed` less `orch`, in `out` (true); false, with `out` = `allowed`, when no CPU is to be kept
/// free (`orch` is -1, not in `allowed`, or the only CPU there). WorkerPool::keep_workers_off.
///     cpus_away_from(0, {0, 1}, &out) -> true, out = {1}
bool cpus_away_from(int orch, const cpu_set_t& allowed, cpu_set_t* out);

class WorkerPool {
 public:
  /// `aic` + `aiv` workers, room for `max_helpers` gang helpers, queues of `capacity` entries.
  /// No thread runs before start().
  WorkerPool(uint32_t aic, uint32_t aiv, uint32_t max_helpers, uint32_t capacity);
  /// Starts the workers: worker w runs body(w) until it returns (after shutdown()).
  template <class F>
  void start(F body) {
    started_with_known_ = sched_getaffinity(0, sizeof started_with_, &started_with_) == 0;   // the workers inherit it
    for (uint32_t w = 0; w < n_workers_; ++w) threads_.emplace_back([body, w] { body(static_cast<int>(w)); });
  }
  /// Wakes and joins every thread (the owner has raised its failure flag: queued work is
  /// cancelled, not run).
  void shutdown();
  ~WorkerPool() { shutdown(); }

  // ---- threads. Stats indices: [0, workers()) workers, workers() the orchestrator thread,
  // then gang helpers.
  uint32_t workers() const { return n_workers_; }
  /// Workers of core type `t` (0 AIC, 1 AIV).
  uint32_t of_type(int t) const { return n_type_[t]; }
  /// The core type of thread `worker` (a worker or a gang helper).
  int type_of(uint32_t worker) const {
    return worker < n_workers_ ? worker_type_[worker] : helper_type_[worker - n_workers_ - 1];
  }
  /// The thread `worker` in words ("AIV worker", "the orchestrator thread (helping)", ...).
  std::string where(int worker) const;
  /// Stats entries in use (workers, orchestrator, helpers started so far); any thread.
  uint32_t n_stats() const { return n_stats_.load(std::memory_order_acquire); }
  WorkerStats& stats(uint32_t i) { return wstats_[i]; }
  /// The orchestrator thread's counters (undeferred runs, tasks it ran while helping).
  WorkerStats& orchestrator_stats() { return wstats_[n_workers_]; }
  const WorkerStats& stats(uint32_t i) const { return wstats_[i]; }
  /// Some thread is running a kernel now.
  bool any_busy() const;

  // ---- ready queues
  /// Queues slot `idx` for core type `t` (the shared queue) and wakes a parked worker unless a
  /// spinning one will find it.
  void push(int t, uint32_t idx) { push_to(ready_[t][0], t, idx); }
  /// The same, by worker `worker` (of type `t`) whose retirement made the task ready: its own
  /// queue. When that queue reaches the help threshold the worker says so in backlog_ (written
  /// on the crossings only, so the orchestrator's read of it each submission is a cache hit).
  void push_own(uint32_t worker, int t, uint32_t idx) {
    MpmcQueue<uint32_t>& q = ready_[t][own_[worker]];
    push_to(q, t, idx);
    WorkerStats& ws = wstats_[worker];
    ws.own_queued = true;
    if (!ws.backlogged && q.size_hint() >= help_threshold_) {
      ws.backlogged = true;
      backlog_[t].fetch_add(1, std::memory_order_relaxed);
    }
  }
  /// Worker `worker`'s private "next" slot (a task it runs without queueing it; kNoTask when
  /// empty), on its own counters' line.
  uint32_t* next_slot(uint32_t worker) { return &wstats_[worker].next; }
  /// The worker whose next_slot() `slot` is (whoever is handed one is that worker).
  uint32_t worker_of(const uint32_t* slot) const {
    const char* base = reinterpret_cast<const char*>(&wstats_[0].next);
    return static_cast<uint32_t>((reinterpret_cast<const char*>(slot) - base) / sizeof(WorkerStats));
  }
  /// Any ready task of type `t` (the shared queue first, then the workers'): the orchestrator
  /// helping.
  bool pop(int t, uint32_t& idx) {
    for (uint32_t q = 0; q <= n_type_[t]; ++q)
      if (ready_[t][q].pop(idx)) return true;
    return false;
  }
  /// A ready task of type `t` from the shared queue only (the orchestrator's throttle).
  bool pop_shared(int t, uint32_t& idx) { return ready_[t][0].pop(idx); }
  /// The help threshold: queued_at_least's `n` (the workers compare their own queues with it).
  void set_help_threshold(size_t n) { help_threshold_ = n; }
  /// At least `n` tasks are queued for type `t`, in all its queues (the orchestrator's
  /// throttle; orchestrator thread). `head_seen` is the caller's cache of the shared queue's
  /// head (MpmcQueue::size_at_least: the head, the popping workers' line, is read only when
  /// the tail alone says the queue may be long). The workers' own queues are counted only
  /// while one of them says it is long (backlog_): their ends are lines their worker writes
  /// with every task, a miss per read.
  bool queued_at_least(int t, size_t n, size_t& head_seen) {
    if (ready_[t][0].size_at_least(n, head_seen)) return true;
    if (backlog_[t].load(std::memory_order_relaxed) == 0) return false;
    size_t queued = ready_[t][0].size_since(head_seen);
    for (uint32_t q = 1; q <= n_type_[t] && queued < n; ++q) queued += ready_[t][q].size_hint();
    return queued >= n;
  }
  enum class Next { kTask, kAgain, kShutdown };
  /// Worker `worker` (of type `type`) asks for its next task: kTask (in `idx`), kAgain (a gang
  /// wants it, or it was woken: ask again), kShutdown. Spins up to `spin_us`, then parks.
  Next next(uint32_t worker, int type, uint32_t& idx, const TaskRing& ring, uint32_t spin_us) {
    if (pop_for(worker, type, idx)) return Next::kTask;
    return wait_for_task(worker, type, idx, ring, spin_us);
  }
  /// Wakes every parked worker (a failure: they cancel what is queued).
  void wake_all() {
    for (int t = 0; t < 2; ++t) idle_[t].notify_all();
  }
  /// A run starts: wakes parked workers now — as many of each type as may spin — so that they
  /// are spinning (next() finds nothing, so they spin up to spin_us, then park again) rather
  /// than asleep when the first task is queued: a futex wake takes ~10 us to get a thread
  /// running, which the run's setup and first submissions now overlap instead of the first
  /// task waiting for it. No syscall when no worker is parked (back-to-back runs).
  void wake_for_run() {
    for (int t = 0; t < 2; ++t) idle_[t].notify(static_cast<int>(max_spinners_[t]));
  }
  /// Keeps the workers off CPU `cpu`, the orchestrating thread's while it runs tasks too (-1: it
  /// does not, and the workers may use every CPU they started with): each worker's affinity
  /// becomes those CPUs less `cpu` (cpus_away_from). System calls only when `cpu` differs from the
  /// last call's. Orchestrator thread (Engine::run as a run starts, and after each of its waits).
  void keep_workers_off(int cpu);
  /// Workers of type `t` that may spin at once (the others park as soon as they run dry).
  uint32_t max_spinners(int t) const { return max_spinners_[t]; }
  /// A worker whose last sampled task ran shorter than this polls for work patiently (WorkerStats::patient; wait_for_task).
  static constexpr int64_t kPatientBelowNs = 1000;

  // ---- gangs
  /// Queues the gang task in slot `idx` and activates it if no gang is being assembled.
  void enqueue_gang(uint32_t idx, const TaskRing& ring);
  /// A gang is waiting for members of type `type` (or waits to be activated).
  bool gang_wants(int type, const TaskRing& ring) const {
    const int64_t g = gangs_.active.load(std::memory_order_acquire);
    if (g < 0) return gangs_.pending.load(std::memory_order_acquire) > 0;
    const TaskSlot& s = ring.at(static_cast<uint32_t>(g));
    return s.claimed[type].load(std::memory_order_relaxed) < s.need[type].load(std::memory_order_relaxed);
  }
  /// Joins the active gang as a member of type `type` and waits until all members are there:
  /// true with the gang's slot in `idx` and this member's number in `member` (the caller runs
  /// its block); false if the gang needs no more members of this type.
  bool join_gang(int type, TaskRing& ring, uint32_t& idx, uint32_t& member);
  /// Starts gang helper threads until `members` threads of type `type` can join a gang; helper
  /// `i` (its stats index) runs body(i, type). Orchestrator thread.
  template <class F>
  void ensure_helpers(int type, uint32_t members, F body) {
    while (n_type_[type] + n_helpers_[type] < members) {
      const uint32_t index = n_stats_.load(std::memory_order_relaxed);
      helper_type_[index - n_workers_ - 1] = type;
      n_stats_.store(index + 1, std::memory_order_release);
      ++n_helpers_[type];
      gang_helpers_.emplace_back([body, index, type] { body(static_cast<int>(index), type); });
    }
  }
  /// A gang helper with nothing to join parks until a gang wants its type; false at shutdown.
  bool park_helper(int type, const TaskRing& ring);

 private:
  void push_to(MpmcQueue<uint32_t>& q, int t, uint32_t idx) {
    while (!q.push(idx)) cpu_relax();
    // Dekker pairing with the worker's spinning_ decrement + prepare() + all_empty_now().
    // push() claimed its cell with a seq_cst read-modify-write, a full barrier: no fence here
    // (an mfence per task). The parked count is read first: it changes only when a worker parks
    // or wakes, so while every worker is awake this costs no cache miss (spinning_ changes with
    // every task a worker picks up).
    if (idle_[t].has_waiters() && spinning_[t].load(std::memory_order_seq_cst) == 0) idle_[t].notify_one();
  }
  /// Worker `worker`'s next ready task: its own queue while it may hold tasks (what this
  /// worker's retirements made ready beyond its next slot: their line 0, often their
  /// consumers', are in this worker's cache), then the shared queue (what was ready at
  /// submission), then the other workers' queues. While the own queue stays non-empty every
  /// kSharedFirstEvery-th pop asks the shared queue first, so that its tasks wait a bounded
  /// number of pops (as work-stealing schedulers check their global queue). A worker that
  /// pushed nothing to its own queue since finding it empty (AUTO: nearly every task comes
  /// from the shared queue, ready at submission) pops exactly as before: the shared queue
  /// first, its own queue not even read.
  bool pop_for(uint32_t worker, int t, uint32_t& idx) {
    if (__builtin_expect(wstats_[worker].own_queued, false) && pop_own_first(worker, t, idx)) return true;
    // The old path, as it was written (the same code: a rearranged version kept the worker's
    // stats line in a register across the shared pop, and AUTO's queued path, nearly all of
    // whose pops come here, measured 3-10 % slower with it).
    const uint32_t own = own_[worker], n = n_type_[t];
    MpmcQueue<uint32_t>& q = ready_[t][own];
    if (ready_[t][0].pop(idx)) return true;
    const bool got = q.pop(idx);
    withdraw_backlog(worker, q, t);
    if (got) return true;
    for (uint32_t k = 1; k < n; ++k)
      if (ready_[t][1 + (own - 1 + k) % n].pop(idx)) return true;
    return false;
  }
  /// pop_for's first try while worker `worker`'s own queue may hold tasks: that queue (the
  /// shared one every kSharedFirstEvery-th time). Out of line: the path of a worker whose
  /// tasks all come from the shared queue (AUTO) stays as it was.
  [[gnu::noinline]] bool pop_own_first(uint32_t worker, int t, uint32_t& idx) {
    WorkerStats& ws = wstats_[worker];
    if (++ws.own_pops % kSharedFirstEvery == 0 && ready_[t][0].pop(idx)) return true;
    MpmcQueue<uint32_t>& q = ready_[t][own_[worker]];
    const bool got = q.pop(idx);
    if (!got) ws.own_queued = false;  // only this worker pushes there: it stays empty until it does
    withdraw_backlog(worker, q, t);
    return got;
  }
  /// Hysteresis: the backlog is withdrawn below half the threshold (rounded up: an empty queue
  /// always withdraws it, so backlogged implies own_queued), so a queue hovering around it does
  /// not write backlog_ with every task.
  void withdraw_backlog(uint32_t worker, MpmcQueue<uint32_t>& q, int t) {
    WorkerStats& ws = wstats_[worker];
    if (ws.backlogged && q.size_hint() < help_threshold_ - help_threshold_ / 2) {
      ws.backlogged = false;
      backlog_[t].fetch_sub(1, std::memory_order_relaxed);
    }
  }
  /// Every queue of type `t` is empty, sequentially consistent with the pushes (empty_now).
  bool all_empty_now(int t) const {
    for (uint32_t q = 0; q <= n_type_[t]; ++q)
      if (!ready_[t][q].empty_now()) return false;
    return true;
  }
  /// Some queue of type `t` looks non-empty (no ordering: a hint).
  bool any_queued_hint(int t) const {
    for (uint32_t q = 0; q <= n_type_[t]; ++q)
      if (!ready_[t][q].empty_hint()) return true;
    return false;
  }
  // 8 rather than 32: the shared queue's tasks (ready at submission) then wait less behind a
  // worker's own backlog and the throttle helps less often (MANUAL stencil_1d x0.80-0.89 and
  // nearest x0.88-0.98 of 32; tree x0.99-1.04, fft x1.00-1.01).
  static constexpr uint32_t kSharedFirstEvery = 8;
  Next wait_for_task(uint32_t worker, int type, uint32_t& idx, const TaskRing& ring, uint32_t spin_us);
  Next park(uint32_t worker, int type, uint32_t& idx, const TaskRing& ring);
  static constexpr int64_t kParkTimeoutNs = 200000000;  // 200 ms per worker a spinner's place is shared by
  void activate_gang(const TaskRing& ring);

  uint32_t n_workers_ = 0;
  uint32_t n_type_[2] = {0, 0};
  // Per core type: at most this many of its workers spin for work at once, one per usable
  // CPU. More would only take turns on the CPUs with the threads running tasks, each polling
  // every queue of its type: with thousands of workers on two CPUs, idle polling buried the
  // work (2,048 workers: 16 CPU-s to start them, 1 s per run of 16 tasks).
  uint32_t max_spinners_[2] = {1, 1};
  // By core type: [0] the shared queue, [own_[w]] worker w's (1 + its rank among its type).
  std::unique_ptr<MpmcQueue<uint32_t>[]> ready_[2];
  std::vector<uint32_t> own_;  // by worker
  size_t help_threshold_ = SIZE_MAX;
  // Per core type: the workers whose own queue holds help_threshold_ tasks or more (written
  // when one crosses it, read by every submission).
  alignas(64) std::atomic<uint32_t> backlog_[2] = {};
  alignas(64) WaitPoint idle_[2];  // parked workers by core type
  alignas(64) std::atomic<int32_t> spinning_[2] = {};
  alignas(64) GangQueue gangs_;
  std::vector<std::thread> threads_;
  std::vector<int> worker_type_;
  std::unique_ptr<WorkerStats[]> wstats_;
  std::atomic<uint32_t> n_stats_{0};        // entries of wstats_ in use
  std::vector<std::thread> gang_helpers_;   // orchestrator thread only (and shutdown)
  uint32_t n_helpers_[2] = {0, 0};
  std::vector<int> helper_type_;            // core type, by stats index - n_workers_ - 1
  WaitPoint gang_idle_;                     // parked gang helpers
  std::atomic<bool> shutdown_{false};
  cpu_set_t started_with_;          // the CPUs the workers started with (start())
  bool started_with_known_ = false;
  int kept_off_ = -1;               // keep_workers_off's last CPU (orchestrator thread)
};

}  // namespace pto2::detail
