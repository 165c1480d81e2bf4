// workers.cpp — what the threads of the WorkerPool (worker_pool.h) do: queueing a ready task,
// the worker loop, the orchestrator helping, a gang member running its block.
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
  push_ready(idx);
}

void Engine::worker_main(int worker) {
  const int type = workers_.type_of(static_cast<uint32_t>(worker));
  uint32_t local = kNoTask;
  for (;;) {
    if (workers_.gang_wants(type, ring_) && try_gang(worker, type, &local)) continue;
    uint32_t idx = kNoTask;
    if (local != kNoTask) {
      idx = local;
      local = kNoTask;
    } else {
      const WorkerPool::Next next = workers_.next(type, idx, ring_, opt_.spin_us_);
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
    if (!failed()) run_block(worker, s, 0, static_cast<uint32_t>(type), 0);
    retire(idx, failed() ? kCancel : kRun, type, local_next, static_cast<uint32_t>(worker));
    return;
  }
  const uint32_t block = s.next_block.fetch_add(1, std::memory_order_acq_rel);
  if (failed()) {  // cancel this block and every unclaimed one at once (block_num may be huge)
    s.next_block.store(s.block_num, std::memory_order_relaxed);
    finish_blocks(idx, s.block_num - block, type, local_next, worker);
    return;
  }
  if (block + 1 < s.block_num) push_ready(idx);  // the other blocks go to other workers
  run_block(worker, s, block, static_cast<uint32_t>(type), static_cast<int32_t>(block));
  finish_blocks(idx, 1, type, local_next, worker);
}

bool Engine::help_one() {
  if (!opt_.orchestrator_helps_) return false;
  uint32_t idx;
  for (int t = 1; t >= 0; --t) {
    if (workers_.pop(t, idx)) {
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
  finish_blocks(g, 1, type, local_next, worker);
  return true;
}

}  // namespace pto2::detail
