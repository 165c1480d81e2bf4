// worker_pool.cpp — WorkerPool (worker_pool.h): parking and waking workers, gang assembly,
// the per-thread counters.
#include "worker_pool.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>

namespace pto2::detail {

namespace {
// The CPUs this process may run on (its affinity mask; the hardware's count where that is
// unknown), at least 1.
uint32_t usable_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}
}  // namespace

WorkerPool::WorkerPool(uint32_t aic, uint32_t aiv, uint32_t max_helpers, uint32_t capacity) {
  n_type_[0] = aic;
  n_type_[1] = aiv;
  n_workers_ = aic + aiv;
  // A ready task holds a slot: no queue ever holds more than the ring's slots.
  for (int t = 0; t < 2; ++t) {
    ready_[t].reset(new MpmcQueue<uint32_t>[n_type_[t] + 1]);
    for (uint32_t q = 0; q <= n_type_[t]; ++q) ready_[t][q].reset(capacity);
  }
  wstats_.reset(new WorkerStats[n_workers_ + 1 + max_helpers]);
  n_stats_.store(n_workers_ + 1);
  helper_type_.assign(max_helpers, 0);  // written before each helper starts, never resized
  for (uint32_t w = 0; w < n_workers_; ++w) {
    worker_type_.push_back(w < n_type_[0] ? 0 : 1);
    own_.push_back(1 + (w < n_type_[0] ? w : w - n_type_[0]));
  }
  for (int t = 0; t < 2; ++t) max_spinners_[t] = std::max<uint32_t>(1, std::min<uint32_t>(n_type_[t], usable_cpus()));
}

void WorkerPool::shutdown() {
  shutdown_.store(true, std::memory_order_seq_cst);
  for (int t = 0; t < 2; ++t) idle_[t].notify_all();
  gang_idle_.notify_all();
  for (auto& th : threads_) th.join();
  for (auto& th : gang_helpers_) th.join();
  threads_.clear();
  gang_helpers_.clear();
}

std::string WorkerPool::where(int worker) const {
  if (static_cast<uint32_t>(worker) == n_workers_) return "the orchestrator thread (helping)";
  if (static_cast<uint32_t>(worker) > n_workers_)
    return helper_type_[static_cast<size_t>(worker) - n_workers_ - 1] == 0 ? "AIC gang helper thread" : "AIV gang helper thread";
  return worker_type_[static_cast<size_t>(worker)] == 0 ? "AIC worker" : "AIV worker";
}

bool WorkerPool::any_busy() const {
  bool busy = false;
  for (uint32_t w = 0; w < n_stats_.load(); ++w) busy |= wstats_[w].busy.load();
  return busy;
}

// The queue was empty: spin briefly (yielding, so an oversubscribed orchestrator keeps its
// core), then park. At most max_spinners_ workers of a type spin at once: the others park
// right away (a push that finds no spinner wakes one).
WorkerPool::Next WorkerPool::wait_for_task(uint32_t worker, int type, uint32_t& idx, const TaskRing& ring,
                                           uint32_t spin_us) {
  // spin_us 0: park at once (not counted as a spinner: pushes then wake a parked worker).
  const bool counted = spin_us > 0;
  const bool may_spin =
      counted && spinning_[type].fetch_add(1, std::memory_order_seq_cst) < static_cast<int32_t>(max_spinners_[type]);
  bool got = false;
  if (may_spin) {
    const int64_t deadline = now_ns() + int64_t(spin_us) * 1000;
    // The polls back off (8, 16, ... 64 pauses, ~0.15-1.3 us here): each poll reads the line of
    // the queue cell the orchestrator writes next, and every read makes its next push wait for
    // the line to come back. A worker idle that long is ahead of the orchestrator: picking up a
    // task a microsecond later costs nothing then, and it finds several queued.
    // Patient (WorkerStats::patient: its tasks are tiny, so the orchestrator's submissions are
    // the bottleneck): 64, then 128 pauses (~1.3-2.6 us). The orchestrator then runs a dozen
    // tasks or more ahead, on lines the worker does not touch meanwhile: a task whose producer
    // is still queued is linked behind it (the worker makes it ready: no shared-queue
    // hand-off), and the slots and queue cells it fills are not read by the worker as it
    // writes them. Queued path, interleaved (docs/dev/queued_path.md): MANUAL fft 0.68x,
    // stencil_1d 0.84x, chain 0.93x (session 29); AUTO nearest 0.64x, stencil_1d 0.76x, fft
    // 0.85x once every tiny task made the worker patient (session 38, a machine whose
    // cross-core transfers are slow; an earlier one measured AUTO stencil_1d and nearest
    // 1.06x, when only tasks with few links did).
    const bool patient = wstats_[worker].patient;
    uint32_t pauses = patient ? 64 : 8;
    const uint32_t max_pauses = patient ? 128 : 64;
    for (uint32_t it = 0;; ++it) {
      if (pop_for(worker, type, idx)) {
        got = true;
        break;
      }
      if (shutdown_.load(std::memory_order_relaxed) || gang_wants(type, ring)) break;
      if ((it & 15) == 15) {
        if (now_ns() > deadline) break;
        std::this_thread::yield();
      } else {
        for (uint32_t i = 0; i < pauses; ++i) cpu_relax();
        if (pauses < max_pauses) pauses *= 2;
        // Patient polls are microseconds apart: sixteen of them would overrun spin_us.
        if (patient && now_ns() > deadline) break;
      }
    }
  }
  const bool last_spinner = counted && spinning_[type].fetch_sub(1, std::memory_order_seq_cst) == 1;
  if (got) {
    // Keep one worker looking for more work while this one runs the task.
    // The parked count first: the queues' ends are the pushers' hot lines.
    if (last_spinner && idle_[type].has_waiters() && any_queued_hint(type)) idle_[type].notify_one();
    return Next::kTask;
  }
  if (shutdown_.load(std::memory_order_acquire)) return Next::kShutdown;
  if (gang_wants(type, ring)) return Next::kAgain;
  return park(worker, type, idx, ring);
}

// Parks until notified. The timeout is a safety net (every push that finds no spinner wakes a
// parked worker): a wait that times out looks at the queues once more and parks again, without
// spinning, and it is longer the more workers share a spinner's place, so that the parked
// workers' looks (each reads every queue of the type) cost the same however many there are.
WorkerPool::Next WorkerPool::park(uint32_t worker, int type, uint32_t& idx, const TaskRing& ring) {
  const int64_t timeout = kParkTimeoutNs * std::max<uint32_t>(1, n_type_[type] / max_spinners_[type]);
  for (;;) {
    const uint32_t key = idle_[type].prepare();
    if (pop_for(worker, type, idx)) {
      idle_[type].cancel();
      return Next::kTask;
    }
    if (!all_empty_now(type) || shutdown_.load(std::memory_order_seq_cst) || gang_wants(type, ring)) {
      // (not empty: a push is still writing its cell: look again)
      idle_[type].cancel();
      return Next::kAgain;
    }
    if (idle_[type].wait(key, timeout)) return Next::kAgain;
  }
}

bool cpus_away_from(int orch, const cpu_set_t& allowed, cpu_set_t* out) {
  *out = allowed;
  if (orch < 0 || orch >= CPU_SETSIZE || !CPU_ISSET(orch, &allowed) || CPU_COUNT(&allowed) < 2) return false;
  CPU_CLR(orch, out);
  return true;
}

// The orchestrating thread runs tasks too (orchestrator_helps): its CPU is busy for the whole run,
// and a worker there waits behind it while it runs the run's tasks itself. On a VM, Linux counts
// an idle vCPU the host has descheduled as busy (preempted): it wakes a worker on its waker's CPU
// and does not pull a thread queued behind another to the idle vCPU. So the orchestrator keeps
// the workers off its CPU itself, and again whenever it finds itself on another CPU. (Session 26
// had each woken worker move itself, then stay on the CPUs it moved to: an orchestrator that
// later moved onto those found its worker stuck behind it, runnable for the whole of a call pattern
// that never let the worker park: the tiled-GEMM example ran its 4 tasks on one CPU, 123 us a
// call instead of 67, in most rounds of kernel_bench's GEMM case.)
void WorkerPool::keep_workers_off(int cpu) {
  if (cpu == kept_off_ || !started_with_known_) return;
  kept_off_ = cpu;
  cpu_set_t mask;
  cpus_away_from(cpu, started_with_, &mask);
  for (auto& th : threads_) pthread_setaffinity_np(th.native_handle(), sizeof mask, &mask);
}

// ---------------------------------------------------------------- gangs

void WorkerPool::enqueue_gang(uint32_t idx, const TaskRing& ring) {
  {
    std::lock_guard<std::mutex> lk(gangs_.mu);
    gangs_.queue.push_back(idx);
    gangs_.pending.fetch_add(1, std::memory_order_seq_cst);
  }
  activate_gang(ring);
}

bool WorkerPool::park_helper(int type, const TaskRing& ring) {
  if (shutdown_.load(std::memory_order_acquire)) return false;
  const uint32_t key = gang_idle_.prepare();
  if (shutdown_.load(std::memory_order_seq_cst) || gang_wants(type, ring)) {
    gang_idle_.cancel();
    return true;
  }
  gang_idle_.wait(key, 200000000);
  return true;
}

void WorkerPool::activate_gang(const TaskRing& ring) {
  int64_t none = -1;
  if (gangs_.active.load(std::memory_order_acquire) >= 0) return;
  uint32_t idx;
  {
    std::lock_guard<std::mutex> lk(gangs_.mu);
    if (gangs_.queue.empty() || gangs_.active.load(std::memory_order_acquire) >= 0) return;
    idx = gangs_.queue.front();
    gangs_.queue.pop_front();
    gangs_.pending.fetch_sub(1, std::memory_order_seq_cst);
    gangs_.active.compare_exchange_strong(none, static_cast<int64_t>(idx), std::memory_order_seq_cst);
  }
  for (int t = 0; t < 2; ++t)
    if (ring.at(idx).need[t].load(std::memory_order_relaxed)) idle_[t].notify_all();
  gang_idle_.notify_all();
}

bool WorkerPool::join_gang(int type, TaskRing& ring, uint32_t& idx, uint32_t& member) {
  int64_t g = gangs_.active.load(std::memory_order_acquire);
  if (g < 0) {
    activate_gang(ring);
    g = gangs_.active.load(std::memory_order_acquire);
    if (g < 0) return false;
  }
  TaskSlot& s = ring.at(static_cast<uint32_t>(g));
  const uint32_t need = s.need[type].load(std::memory_order_relaxed);
  if (s.claimed[type].load(std::memory_order_relaxed) >= need) return false;
  member = s.claimed[type].fetch_add(1, std::memory_order_acq_rel);
  if (member >= need) return false;
  const uint32_t total = s.need[0].load(std::memory_order_relaxed) + s.need[1].load(std::memory_order_relaxed);
  if (s.arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == total) {
    gangs_.active.store(-1, std::memory_order_seq_cst);
    s.go.store(true, std::memory_order_release);
    activate_gang(ring);
  } else {
    uint32_t spins = 0;
    while (!s.go.load(std::memory_order_acquire)) {
      if (++spins < 4000) cpu_relax();
      else std::this_thread::yield();
    }
  }
  idx = static_cast<uint32_t>(g);
  return true;
}

}  // namespace pto2::detail
