// workers.cpp — ready queues and workers: queueing a ready task, the worker loop (spin
// briefly, then park), the orchestrator helping, and gang assembly.
//
// A task whose producers all finished is *ready*. It goes to the ready queue of its core type
// — or, when the completing worker can run it, into that worker's private "next" slot (no
// queue round trip along chains). Gang tasks (mixed kernels, sync_start SPMD) are assembled
// one at a time: idle workers of the needed types join the active gang and all members start
// together.
#include "engine.h"

namespace pto2::detail {

namespace {
constexpr uint32_t kNone = UINT32_MAX;
}  // namespace

void Engine::push_ready(uint32_t idx) { push_ready_to(ring_.at(idx).kind == TaskKind::AIC ? 0 : 1, idx); }

void Engine::schedule(uint32_t idx, int worker_type, uint32_t* local_next) {
  TaskSlot& s = ring_.at(idx);
  if (s.gang) {
    {
      std::lock_guard<std::mutex> lk(gangs_.mu);
      gangs_.queue.push_back(idx);
      gangs_.pending.fetch_add(1, std::memory_order_seq_cst);
    }
    activate_gang();
    return;
  }
  const int t = s.kind == TaskKind::AIC ? 0 : 1;
  if (local_next && *local_next == kNone && t == worker_type && s.block_num == 1) {
    *local_next = idx;
    return;
  }
  push_ready(idx);
}

void Engine::worker_main(int worker) {
  const int type = worker_type_[static_cast<size_t>(worker)];
  uint32_t local = kNone;
  MpmcQueue<uint32_t>& q = ready_[type];
  for (;;) {
    if (gang_wants(type) && try_gang(worker, type, &local)) continue;
    uint32_t idx = kNone;
    if (local != kNone) {
      idx = local;
      local = kNone;
    } else if (!q.pop(idx)) {
      // Spin briefly (yielding, so an oversubscribed orchestrator keeps its core), then park.
      spinning_[type].fetch_add(1, std::memory_order_seq_cst);
      const int64_t deadline = now_ns() + int64_t(opt_.spin_us_) * 1000;
      bool got = false;
      for (uint32_t it = 0;; ++it) {
        if (q.pop(idx)) {
          got = true;
          break;
        }
        if (shutdown_.load(std::memory_order_relaxed) || gang_wants(type)) break;
        if ((it & 15) == 15) {
          if (now_ns() > deadline) break;
          std::this_thread::yield();
        } else {
          for (int i = 0; i < 8; ++i) cpu_relax();
        }
      }
      const bool last_spinner = spinning_[type].fetch_sub(1, std::memory_order_seq_cst) == 1;
      if (got) {
        // Keep one worker looking for more work while this one runs the task.
        if (last_spinner && !q.empty_hint()) idle_[type].notify_one();
      } else {
        if (shutdown_.load(std::memory_order_acquire)) return;
        if (gang_wants(type)) continue;
        const uint32_t key = idle_[type].prepare();
        if (q.pop(idx)) {
          idle_[type].cancel();
        } else if (!q.empty_now() || shutdown_.load(std::memory_order_seq_cst) || gang_wants(type)) {
          // (not empty: a push is still writing its cell: look again)
          idle_[type].cancel();
          continue;
        } else {
          idle_[type].wait(key, 200000000);
          continue;
        }
      }
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
    if (ready_[t].pop(idx)) {
      execute(idx, t, static_cast<int>(n_workers_), nullptr);
      return true;
    }
  }
  return false;
}

// ---------------------------------------------------------------- gangs

// A sync_start gang wider than the workers of its type: host threads beyond the workers join
// it (started once, parked between gangs, joined by the destructor). Orchestrator thread.
void Engine::ensure_gang_threads(int type, uint32_t members) {
  while (n_type_[type] + n_helpers_[type] < members) {
    const uint32_t index = n_stats_.load(std::memory_order_relaxed);
    helper_type_[index - n_workers_ - 1] = type;
    n_stats_.store(index + 1, std::memory_order_release);
    ++n_helpers_[type];
    gang_helpers_.emplace_back([this, index, type] { gang_helper_main(static_cast<int>(index), type); });
  }
}

void Engine::gang_helper_main(int stats_index, int type) {
  for (;;) {
    if (gang_wants(type) && try_gang(stats_index, type, nullptr)) continue;
    if (shutdown_.load(std::memory_order_acquire)) return;
    const uint32_t key = gang_idle_.prepare();
    if (shutdown_.load(std::memory_order_seq_cst) || gang_wants(type)) {
      gang_idle_.cancel();
      continue;
    }
    gang_idle_.wait(key, 200000000);
  }
}

void Engine::activate_gang() {
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
    if (ring_.at(idx).need[t]) idle_[t].notify_all();
  gang_idle_.notify_all();
}

bool Engine::gang_wants(int type) {
  const int64_t g = gangs_.active.load(std::memory_order_acquire);
  if (g < 0) return gangs_.pending.load(std::memory_order_acquire) > 0;
  TaskSlot& s = ring_.at(static_cast<uint32_t>(g));
  return s.claimed[type].load(std::memory_order_relaxed) < s.need[type];
}

bool Engine::try_gang(int worker, int type, uint32_t* local_next) {
  int64_t g = gangs_.active.load(std::memory_order_acquire);
  if (g < 0) {
    activate_gang();
    g = gangs_.active.load(std::memory_order_acquire);
    if (g < 0) return false;
  }
  TaskSlot& s = ring_.at(static_cast<uint32_t>(g));
  if (s.claimed[type].load(std::memory_order_relaxed) >= s.need[type]) return false;
  const uint32_t member = s.claimed[type].fetch_add(1, std::memory_order_acq_rel);
  if (member >= s.need[type]) return false;
  const uint32_t total = s.need[0] + s.need[1];
  if (s.arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == total) {
    gangs_.active.store(-1, std::memory_order_seq_cst);
    s.go.store(true, std::memory_order_release);
    activate_gang();
  } else {
    uint32_t spins = 0;
    while (!s.go.load(std::memory_order_acquire)) {
      if (++spins < 4000) cpu_relax();
      else std::this_thread::yield();
    }
  }
  // Mixed: block i of the AIC kernel and block i of the AIV kernel; SPMD: block `member`.
  const uint32_t ktype = s.kind == TaskKind::MIXED ? static_cast<uint32_t>(type) : (s.kind == TaskKind::AIC ? 0u : 1u);
  run_block(worker, s, member, ktype, static_cast<int32_t>(member));
  finish_blocks(static_cast<uint32_t>(g), 1, type, local_next, worker);
  return true;
}

}  // namespace pto2::detail
