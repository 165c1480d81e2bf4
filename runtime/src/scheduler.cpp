// scheduler.cpp — dispatch, workers, gang starts and completion of the PTO2 CPU runtime.
//
// A task whose producers all finished is *ready*. Dummy tasks, tasks whose predicate is false
// and (after a failure) all tasks are retired inline by the thread that readied them. Others
// go to the ready queue of their core type — or, when the completing worker can run it, into
// that worker's private "next" slot (no queue round trip along chains). Gang tasks (mixed
// kernels, sync_start SPMD) are assembled one at a time: idle workers of the needed types
// join the active gang and all members start together.
#include <cstdio>
#include <string>

#include "engine.h"
#include "race_checker.h"

void PTO2KernelContext::fail(const char* message) const {
  auto* in = static_cast<pto2::detail::KernelCtxInternal*>(internal_);
  std::string* err = in ? in->err : nullptr;
  if (err && err->empty()) *err = (message && *message) ? message : "kernel reported failure";
}

// ---------------------------------------------------------------- group flags (mixed tasks)

static const char* side_name(uint32_t side) { return side == 0 ? "AIC" : "AIV"; }

void pto2_group_signal(const PTO2KernelContext* ctx, uint32_t flag) {
  auto* in = ctx ? static_cast<pto2::detail::KernelCtxInternal*>(ctx->internal_) : nullptr;
  if (!in || !in->gflags) return;
  if (flag >= pto2::detail::kGroupFlags) {
    ctx->fail(("pto2_group_signal: flag " + std::to_string(flag) + " is out of range 0..7").c_str());
    return;
  }
  in->gflags->fetch_or(1u << (in->side * pto2::detail::kGroupFlags + flag), std::memory_order_acq_rel);
}

bool pto2_group_wait(const PTO2KernelContext* ctx, uint32_t flag) {
  auto* in = ctx ? static_cast<pto2::detail::KernelCtxInternal*>(ctx->internal_) : nullptr;
  if (!in || !in->gflags) return true;
  if (flag >= pto2::detail::kGroupFlags) {
    ctx->fail(("pto2_group_wait: flag " + std::to_string(flag) + " is out of range 0..7").c_str());
    return false;
  }
  const uint32_t other = 1 - in->side;
  const uint32_t want = 1u << (other * pto2::detail::kGroupFlags + flag);
  const uint32_t gone = 1u << (pto2::detail::kGroupDoneBit + other);
  for (uint32_t spins = 0;; ++spins) {
    const uint32_t v = in->gflags->load(std::memory_order_acquire);
    if (v & want) return true;
    if (v & gone) {
      ctx->fail((std::string("pto2_group_wait: the ") + side_name(other) + " kernel of this mixed task returned without signalling flag " +
                 std::to_string(flag)).c_str());
      return false;
    }
    if (in->engine->failed()) {
      ctx->fail((std::string("pto2_group_wait: the run failed while waiting for flag ") + std::to_string(flag) + " of the " +
                 side_name(other) + " kernel").c_str());
      return false;
    }
    if (spins < 4000) pto2::detail::cpu_relax();
    else if (spins < 20000) std::this_thread::yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

namespace pto2::detail {

namespace {
constexpr uint32_t kNone = UINT32_MAX;
// " submitted at prog.py:42" for a task whose submission named its DSL line, else "".
std::string submitted_at(const char* file, int32_t line) {
  return file && line > 0 ? std::string(" submitted at ") + file + ":" + std::to_string(line) : std::string();
}
// A task retired without running (dummy, predicate false, cancelled) in the middle of a
// release cascade: handled iteratively from a stack, never by recursion.
struct Retiring {
  uint32_t idx;
  int outcome;
};
}  // namespace

int Engine::inline_outcome(TaskSlot& s) {
  if (failed()) return kCancel;
  if (s.kind == TaskKind::DUMMY) return kDummy;
  if (s.has_pred && !s.pred.evaluate()) return kSkip;
  return -1;
}

void Engine::push_ready(uint32_t idx) {
  const int t = slots_[idx].kind == TaskKind::AIC ? 0 : 1;
  while (!ready_[t].push(idx)) cpu_relax();
  // Wake a parked worker unless a spinning one will find it (Dekker pairing with the
  // worker's spinning_ decrement + prepare() + re-check). The parked count is read first: it
  // changes only when a worker parks or wakes, so while every worker is awake this costs no
  // cache miss (spinning_ changes with every task a worker picks up).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (idle_[t].has_waiters() && spinning_[t].load(std::memory_order_seq_cst) == 0) idle_[t].notify_one();
}

void Engine::schedule(uint32_t idx, int worker_type, uint32_t* local_next) {
  TaskSlot& s = slots_[idx];
  if (s.gang) {
    {
      std::lock_guard<std::mutex> lk(gang_mu_);
      gang_queue_.push_back(idx);
      gang_pending_.fetch_add(1, std::memory_order_seq_cst);
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

void Engine::on_ready(uint32_t idx, int worker_type, uint32_t* local_next, uint32_t stats) {
  const int o = inline_outcome(slots_[idx]);
  if (o < 0) schedule(idx, worker_type, local_next);
  else retire(idx, o, worker_type, local_next, stats);
}

void Engine::retire(uint32_t idx, int outcome, int worker_type, uint32_t* local_next, uint32_t stats) {
  WorkerStats& st = wstats_[stats];
  pto2::SmallVec<Retiring, 16> work;
  work.push_back(Retiring{idx, outcome});
  while (!work.empty()) {
    const Retiring r = work.back();
    work.pop_back();
    const uint32_t i = r.idx;
    const int o = r.outcome;
    TaskSlot& s = slots_[i];
    const uint64_t raw = s.raw.load(std::memory_order_relaxed);  // before the slot is freed
    switch (o) {
      case kRun: ++st.executed; break;
      case kSkip:
        ++st.skipped;
        if (race_) race_->on_skipped(raw);
        break;
      case kCancel: ++st.cancelled; break;
      default: ++st.dummy; break;
    }
    s.done.store(true, std::memory_order_release);
    retired_raw_[i].store(raw, std::memory_order_release);
    // Close the fan-out list and release every consumer on it. A node belongs to its
    // consumer: read it fully before the decrement that may let the consumer run and retire.
    for (EdgeNode* n = s.fanout.exchange(kClosed, std::memory_order_acq_rel); n;) {
      EdgeNode* next = n->next;
      const uint32_t c = n->consumer;
      if (slots_[c].fanin.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        const int co = inline_outcome(slots_[c]);
        if (co < 0) schedule(c, worker_type, local_next);
        else work.push_back(Retiring{c, co});
      }
      n = next;
    }
    for (PTO2Storage* p : s.storages) pool_.task_release(p);
    s.storages.clear();
    if (s.untracked_write) untracked_live_.fetch_sub(1, std::memory_order_acq_rel);
    s.free.store(true, std::memory_order_release);
    // Own counter (no shared cache line); release: waiters that see it see the retirement.
    st.completed.store(st.completed.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    if (progress_.has_waiters()) {
      const uint64_t a = wake_on_[0].load(std::memory_order_relaxed);
      if (a == 0 || raw == a || raw == wake_on_[1].load(std::memory_order_relaxed)) progress_.notify_all();
    }
  }
}

// ---------------------------------------------------------------- execution

void Engine::run_block(int worker, TaskSlot& s, uint32_t block, uint32_t kernel_type, int32_t block_idx) {
  const PTO2KernelFn fn = s.fn[kernel_type];
  // Mixed task: this block pair's group flags; the done bit (set once the kernel's outcome is
  // recorded) lets a sibling waiting for a flag this kernel never signals stop waiting.
  std::atomic<uint32_t>* gflags = s.kind == TaskKind::MIXED && s.gflags ? &s.gflags[block] : nullptr;
  struct DoneBit {
    std::atomic<uint32_t>* f;
    uint32_t side;
    ~DoneBit() { if (f) f->fetch_or(1u << (kGroupDoneBit + side), std::memory_order_acq_rel); }
  } done_bit{gflags, kernel_type};
  if (failed() || !fn) return;
  WorkerStats& ws = wstats_[worker];
  // Timed: one run in kSampleEvery, and every run until the kernel has been measured once.
  const bool sampled = ++ws.runs % kSampleEvery == 0 || !is_measured(s.kernel[kernel_type]);
  const bool timed = sampled || s.timing_slot >= 0 || opt_.trace_;
  int64_t t0 = timed ? now_ns() : 0;
  ws.busy.store(true, std::memory_order_relaxed);
  std::string err;
  const uint64_t raw = s.raw.load(std::memory_order_relaxed);
  call_kernel(fn, s.tensors.data(), s.tensors.size(), s.scalars.data(), s.scalars.size(), block_idx,
              static_cast<int32_t>(s.block_num), gflags, kernel_type, err, raw);
  ws.busy.store(false, std::memory_order_relaxed);
  if (!err.empty())
    fail(describe_slot(s, raw) + submitted_at(s.site_file, s.site_line) + " block " + std::to_string(block_idx) + "/" + std::to_string(s.block_num) + " on " +
         where(worker) + " failed: " + err);
  if (timed) {
    const int64_t t1 = now_ns();
    if (sampled) record_kernel_ns(s.kernel[kernel_type], t1 - t0);
    if (s.timing_slot >= 0) {
      SlotTiming& tm = timing_[s.timing_slot];
      int64_t cur = tm.start.load(std::memory_order_relaxed);
      while (t0 < cur && !tm.start.compare_exchange_weak(cur, t0)) {}
      cur = tm.end.load(std::memory_order_relaxed);
      while (t1 > cur && !tm.end.compare_exchange_weak(cur, t1)) {}
      if (block == 0) tm.tasks.fetch_add(1, std::memory_order_relaxed);
    }
    if (opt_.trace_)
      trace_[static_cast<size_t>(worker)].push_back(TraceEvent{raw, s.kernel[kernel_type], static_cast<uint32_t>(block_idx), t0, t1});
  }
}

std::string Engine::where(int worker) const {
  if (static_cast<uint32_t>(worker) == n_workers_) return "the orchestrator thread (helping)";
  return worker_type_[static_cast<size_t>(worker)] == 0 ? "AIC worker" : "AIV worker";
}

// Out of line for submit()'s undeferred path (the throttle, or a task with dependencies that
// have all finished); try_submit_undeferred inlines it.
void Engine::run_undeferred(TaskKind kind, int32_t kernel, const Arg& params, uint64_t raw, int type) {
  run_undeferred_inline(kind, kernel, params, raw, type);
}

// The sampled run (one in kSampleEvery): timed, to keep the kernel's average current.
void Engine::run_undeferred_timed(TaskKind kind, int32_t kernel, const Arg& params, uint64_t raw, int type) {
  WorkerStats& ws = wstats_[n_workers_];
  const int64_t t0 = now_ns();
  call_kernel(kernels_[static_cast<size_t>(kernel)].fn, params.tensors().data(), params.tensor_count(),
              params.scalars().data(), params.scalars().size(), 0, 1, nullptr, static_cast<uint32_t>(type),
              undeferred_err_, raw);
  record_kernel_ns(kernel, now_ns() - t0);
  if (!undeferred_err_.empty()) undeferred_failed(kind, kernel, raw, type, params);
  ++ws.undeferred;
}

void Engine::undeferred_failed(TaskKind kind, int32_t kernel, uint64_t raw, int type, const Arg& params) {
  const int32_t ids[2] = {type == 0 ? kernel : -1, type == 1 ? kernel : -1};
  const std::string msg = describe_task(kind, ids, raw) + submitted_at(params.source_file(), params.source_line()) +
                          " block 0/1 on the orchestrator thread (undeferred) failed: " + undeferred_err_;
  undeferred_err_.clear();
  fail(msg);
}

void Engine::finish_block(uint32_t idx, int worker_type, uint32_t* local_next, int worker) {
  TaskSlot& s = slots_[idx];
  if (s.blocks_left.fetch_sub(1, std::memory_order_acq_rel) == 1)
    retire(idx, failed() ? kCancel : kRun, worker_type, local_next, static_cast<uint32_t>(worker));
}

// ---------------------------------------------------------------- gangs

void Engine::activate_gang() {
  int64_t none = -1;
  if (active_gang_.load(std::memory_order_acquire) >= 0) return;
  uint32_t idx;
  {
    std::lock_guard<std::mutex> lk(gang_mu_);
    if (gang_queue_.empty() || active_gang_.load(std::memory_order_acquire) >= 0) return;
    idx = gang_queue_.front();
    gang_queue_.pop_front();
    gang_pending_.fetch_sub(1, std::memory_order_seq_cst);
    active_gang_.compare_exchange_strong(none, static_cast<int64_t>(idx), std::memory_order_seq_cst);
  }
  for (int t = 0; t < 2; ++t)
    if (slots_[idx].need[t]) idle_[t].notify_all();
}

bool Engine::gang_wants(int type) {
  const int64_t g = active_gang_.load(std::memory_order_acquire);
  if (g < 0) return gang_pending_.load(std::memory_order_acquire) > 0;
  TaskSlot& s = slots_[g];
  return s.claimed[type].load(std::memory_order_relaxed) < s.need[type];
}

bool Engine::try_gang(int worker, int type, uint32_t* local_next) {
  int64_t g = active_gang_.load(std::memory_order_acquire);
  if (g < 0) {
    activate_gang();
    g = active_gang_.load(std::memory_order_acquire);
    if (g < 0) return false;
  }
  TaskSlot& s = slots_[g];
  if (s.claimed[type].load(std::memory_order_relaxed) >= s.need[type]) return false;
  const uint32_t member = s.claimed[type].fetch_add(1, std::memory_order_acq_rel);
  if (member >= s.need[type]) return false;
  const uint32_t total = s.need[0] + s.need[1];
  if (s.arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == total) {
    active_gang_.store(-1, std::memory_order_seq_cst);
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
  finish_block(static_cast<uint32_t>(g), type, local_next, worker);
  return true;
}

// ---------------------------------------------------------------- worker loop

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
        } else if (shutdown_.load(std::memory_order_seq_cst) || gang_wants(type)) {
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

void Engine::execute(uint32_t idx, int type, int worker, uint32_t* local_next) {
  TaskSlot& s = slots_[idx];
  const uint32_t block = s.next_block.fetch_add(1, std::memory_order_acq_rel);
  if (block + 1 < s.block_num) push_ready(idx);  // the other blocks go to other workers
  run_block(worker, s, block, static_cast<uint32_t>(type), static_cast<int32_t>(block));
  finish_block(idx, type, local_next, worker);
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

}  // namespace pto2::detail
