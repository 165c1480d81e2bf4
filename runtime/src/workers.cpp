// workers.cpp — what the threads of the WorkerPool (worker_pool.h) do: queueing a ready task,
// the worker loop, running a block, the orchestrator helping, a gang member running its
// block. What follows a task's last block is Completion's (completion.h).
//
// A task whose producers all finished is *ready*. It goes to the ready queue of its core type
// — or, when the completing worker can run it, into that worker's private "next" slot (no
// queue round trip along chains). Gang tasks (mixed kernels, sync_start SPMD) are assembled
// one at a time: idle workers of the needed types join the active gang and all members start
// together.
#include "engine.h"

namespace pto2::detail {

void Engine::push_ready(uint32_t idx) { workers_.push(ring_.at(idx).kind == TaskKind::AIC ? 0 : 1, idx); }

void Engine::schedule(uint32_t idx, int worker_type, uint32_t* local_next) {
  TaskSlot& s = ring_.at(idx);
  if (s.gang) {
    workers_.enqueue_gang(idx, ring_);
    return;
  }
  const int t = s.kind == TaskKind::AIC ? 0 : 1;
  if (local_next && *local_next == kNoTask && t == worker_type && s.block_num == 1) {
    *local_next = idx;
    return;
  }
  // A worker's retirement made it ready (local_next is that worker's next slot): its own
  // queue, so its push does not contend with the orchestrator's for the shared queue's tail.
  if (local_next && t == worker_type) workers_.push_own(workers_.worker_of(local_next), t, idx);
  else push_ready(idx);
}

void Engine::worker_main(int worker) {
  tl_current = in_kernel_mark();  // this thread runs kernels only
  const int type = workers_.type_of(static_cast<uint32_t>(worker));
  // The private next slot lives in the pool, which tells schedule() whose it is.
  uint32_t& local = *workers_.next_slot(static_cast<uint32_t>(worker));
  for (;;) {
    if (workers_.gang_wants(type, ring_) && try_gang(worker, type, &local)) continue;
    uint32_t idx = kNoTask;
    if (local != kNoTask) {
      idx = local;
      local = kNoTask;
    } else {
      const uint32_t spin_us = ran_.load(std::memory_order_relaxed) ? opt_.spin_us_ : 0;
      const WorkerPool::Next next = workers_.next(static_cast<uint32_t>(worker), type, idx, ring_, spin_us);
      if (next == WorkerPool::Next::kShutdown) return;
      if (next == WorkerPool::Next::kAgain) continue;
    }
    execute(idx, type, worker, &local);
  }
}

// One queue entry is one block to claim: whoever pops it is the only thread claiming a block
// of this task, and queues the entry for the next block before running its own.
void Engine::execute(uint32_t idx, int type, int worker, uint32_t* local_next) {
  TaskSlot& s = ring_.at(idx);
  // A single-block task (gangs never come here) is popped by exactly one thread: no block to
  // claim and no count of blocks left to share, so two read-modify-writes per task are saved.
  if (s.block_num == 1) {
    TaskRing::prefetch_first_consumer(s);
    if (!failed()) run_block(worker, s, 0, static_cast<uint32_t>(type), 0);
    Completion::retire(parts(), idx, failed() ? Completion::kCancel : Completion::kRun, type, local_next,
                       static_cast<uint32_t>(worker));
    return;
  }
  const uint32_t block = s.next_block.fetch_add(1, std::memory_order_acq_rel);
  if (failed()) {  // cancel this block and every unclaimed one at once (block_num may be huge)
    s.next_block.store(s.block_num, std::memory_order_relaxed);
    Completion::finish_blocks(parts(), idx, s.block_num - block, type, local_next, static_cast<uint32_t>(worker));
    return;
  }
  if (block + 1 < s.block_num) push_ready(idx);  // the other blocks go to other workers
  run_block(worker, s, block, static_cast<uint32_t>(type), static_cast<int32_t>(block));
  Completion::finish_blocks(parts(), idx, 1, type, local_next, static_cast<uint32_t>(worker));
}

// Runs block `block` (index `block_idx`) of the task in `s`, kernel `kernel_type`: times it when
// sampled, traced or in a timing slot; a failing kernel fails the run.
void Engine::run_block(int worker, TaskSlot& s, uint32_t block, uint32_t kernel_type, int32_t block_idx) {
  const int32_t kernel = s.kernel[kernel_type];
  const PTO2KernelFn fn = kernel >= 0 ? kernels_.fn(kernel) : nullptr;
  // Mixed task: this block pair's group flags; the done bit (set once the kernel's outcome is
  // recorded) lets a sibling waiting for a flag this kernel never signals stop waiting.
  std::atomic<uint32_t>* gflags = s.kind == TaskKind::MIXED && s.gflags ? &s.gflags[block] : nullptr;
  struct DoneBit {
    std::atomic<uint32_t>* f;
    uint32_t side;
    ~DoneBit() { if (f) f->fetch_or(1u << (kGroupDoneBit + side), std::memory_order_acq_rel); }
  } done_bit{gflags, kernel_type};
  if (failed() || !fn) return;
  WorkerStats& ws = workers_.stats(static_cast<uint32_t>(worker));
  // Timed: one run in kSampleEvery, and every run until the kernel has been measured once.
  const bool sampled = ++ws.runs % kSampleEvery == 0 || !kernels_.is_measured(s.kernel[kernel_type]);
  const bool timed = sampled || s.timing_slot >= 0 || opt_.trace_;
  int64_t t0 = timed ? now_ns() : 0;
  ws.busy.store(true, std::memory_order_relaxed);
  std::string err;
  const uint64_t raw = s.raw.load(std::memory_order_relaxed);
  call_kernel(fn, s.tensor_data(), s.tensor_count(), s.scalar_data(), s.scalar_count(), block_idx,
              static_cast<int32_t>(s.block_num), gflags, kernel_type, err, raw);
  ws.busy.store(false, std::memory_order_relaxed);
  if (!err.empty())
    fail(describe_slot(s, raw) + submitted_at(s.site_file, s.site_line) + " block " + std::to_string(block_idx) + "/" + std::to_string(s.block_num) + " on " +
         workers_.where(worker) + " failed: " + err);
  if (timed) {
    const int64_t t1 = now_ns();
    if (sampled) {
      kernels_.record_ns(s.kernel[kernel_type], t1 - t0);
      ws.patient = t1 - t0 < WorkerPool::kPatientBelowNs;
    }
    if (s.timing_slot >= 0) record_.time_slot(s.timing_slot, t0, t1, block == 0);
    if (opt_.trace_)
      record_.block(static_cast<uint32_t>(worker), TraceEvent{raw, s.kernel[kernel_type], static_cast<uint32_t>(block_idx), t0, t1});
  }
}

// The submission throttle asks for a task from the shared queues only (what was ready at
// submission): a task in a worker's own queue was made ready by that worker's retirement, its
// line 0 and often its consumers' are in that worker's cache, and the worker would run it
// next anyway; taking it moves those lines here and back (MANUAL fft and tree: the help took
// ~10 % of the orchestrator's time, most of it in misses). Work in the workers' own queues
// waits for the workers, or for the orchestrator when it blocks (a full ring, a scope's end,
// the tail of the run: the watchdog's wait loop helps with every queue).
bool Engine::help_one(bool workers_queues) {
  if (!opt_.orchestrator_helps_) return false;
  uint32_t idx;
  for (int t = 1; t >= 0; --t) {
    if (workers_queues ? workers_.pop(t, idx) : workers_.pop_shared(t, idx)) {
      // Not marked as in a kernel (as_kernel): per helped task it cost MANUAL tree x1.037 on the
      // short path; once per wait (in WaitHooks) x1.2 on the queued path; around the submission
      // throttle's help x1.031 (dist.py, 21-31 rounds). Documented as for undeferred kernels.
      execute(idx, t, static_cast<int>(workers_.workers()), nullptr);
      return true;
    }
  }
  return false;
}

// ---------------------------------------------------------------- gangs

// A sync_start gang wider than the workers of its type: host threads beyond the workers join
// it (started once, parked between gangs, joined by the destructor). Orchestrator thread.
void Engine::ensure_gang_threads(int type, uint32_t members) {
  workers_.ensure_helpers(type, members, [this](int index, int t) { gang_helper_main(index, t); });
}

void Engine::gang_helper_main(int stats_index, int type) {
  tl_current = in_kernel_mark();
  for (;;) {
    if (workers_.gang_wants(type, ring_) && try_gang(stats_index, type, nullptr)) continue;
    if (!workers_.park_helper(type, ring_)) return;
  }
}

bool Engine::try_gang(int worker, int type, uint32_t* local_next) {
  uint32_t g, member;
  if (!workers_.join_gang(type, ring_, g, member)) return false;
  TaskSlot& s = ring_.at(g);
  // Mixed: block i of the AIC kernel and block i of the AIV kernel; SPMD: block `member`.
  const uint32_t ktype = s.kind == TaskKind::MIXED ? static_cast<uint32_t>(type) : (s.kind == TaskKind::AIC ? 0u : 1u);
  run_block(worker, s, member, ktype, static_cast<int32_t>(member));
  Completion::finish_blocks(parts(), g, 1, type, local_next, static_cast<uint32_t>(worker));
  return true;
}

}  // namespace pto2::detail
