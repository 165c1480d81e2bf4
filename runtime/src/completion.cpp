// completion.cpp — running a task's block and what follows its last block: retirement, which
// releases the consumers (a consumer whose last producer retired becomes ready), the task's
// storages and its slot. Dummy tasks, tasks whose predicate is false and (after a failure)
// all tasks are retired by the thread that readied them, without running.
#include <string>

#include "engine.h"
#include "race_checker.h"

namespace pto2::detail {

namespace {
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

void Engine::on_ready(uint32_t idx, int worker_type, uint32_t* local_next, uint32_t stats) {
  const int o = inline_outcome(ring_.at(idx));
  if (o < 0) schedule(idx, worker_type, local_next);
  else retire(idx, o, worker_type, local_next, stats);
}

void Engine::retire(uint32_t idx, int outcome, int worker_type, uint32_t* local_next, uint32_t stats) {
  WorkerStats& st = workers_.stats(stats);
  pto2::SmallVec<Retiring, 16> work;
  work.push_back(Retiring{idx, outcome});
  while (!work.empty()) {
    const Retiring r = work.back();
    work.pop_back();
    const uint32_t i = r.idx;
    const int o = r.outcome;
    TaskSlot& s = ring_.at(i);
    const uint64_t raw = s.raw.load(std::memory_order_relaxed);  // before the slot is freed
    switch (o) {
      case kRun: ++st.executed; break;
      case kSkip:
        ++st.skipped;
        if (race_) race_->on_skipped(raw);
        if (opt_.trace_)
          record_.skip(stats, SkipEvent{raw, s.kernel[1] >= 0 ? s.kernel[1] : s.kernel[0], now_ns(), s.pred.element,
                                        s.pred.target, s.pred.op});
        break;
      case kCancel: ++st.cancelled; break;
      default: ++st.dummy; break;
    }
    s.done.store(true, std::memory_order_release);
    ring_.mark_retired(i, raw);
    // Close the fan-out list and release every consumer on it. A node belongs to its
    // consumer: read it fully before the decrement that may let the consumer run and retire.
    for (EdgeNode* n = s.fanout.exchange(kClosed, std::memory_order_acq_rel); n;) {
      EdgeNode* next = n->next;
      const uint32_t c = n->consumer;
      TaskSlot& cs = ring_.at(c);
      if (cs.fanin.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        const int co = inline_outcome(cs);
        if (co >= 0) {
          work.push_back(Retiring{c, co});
        } else if (local_next && *local_next == UINT32_MAX && !cs.gang && cs.block_num == 1 &&
                   (cs.kind == TaskKind::AIC ? 0 : 1) == worker_type) {
          *local_next = c;  // schedule()'s common case, inline: this worker runs it next
        } else {
          schedule(c, worker_type, local_next);
        }
      }
      n = next;
    }
    if (s.has_storages) {  // its line is the orchestrator's: not even read when empty
      for (PTO2Storage* p : s.storages) scopes_.pool().task_release(p);
      s.storages.clear();
      s.has_storages = false;
    }
    if (s.untracked_write) untracked_live_.fetch_sub(1, std::memory_order_acq_rel);
    s.free.store(true, std::memory_order_release);
    // Own counter (no shared cache line); release: waiters that see it see the retirement.
    st.completed.store(st.completed.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    watchdog_.on_retired(raw);
  }
}

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
  WorkerStats& ws = workers_.stats(static_cast<uint32_t>(worker));
  // Timed: one run in kSampleEvery, and every run until the kernel has been measured once.
  const bool sampled = ++ws.runs % kSampleEvery == 0 || !kernels_.is_measured(s.kernel[kernel_type]);
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
         workers_.where(worker) + " failed: " + err);
  if (timed) {
    const int64_t t1 = now_ns();
    if (sampled) kernels_.record_ns(s.kernel[kernel_type], t1 - t0);
    if (s.timing_slot >= 0) record_.time_slot(s.timing_slot, t0, t1, block == 0);
    if (opt_.trace_)
      record_.block(static_cast<uint32_t>(worker), TraceEvent{raw, s.kernel[kernel_type], static_cast<uint32_t>(block_idx), t0, t1});
  }
}

// `n` blocks of the task in slot `idx` are over (run or cancelled); the last one retires it.
void Engine::finish_blocks(uint32_t idx, uint32_t n, int worker_type, uint32_t* local_next, int worker) {
  TaskSlot& s = ring_.at(idx);
  if (s.blocks_left.fetch_sub(n, std::memory_order_acq_rel) == n)
    retire(idx, failed() ? kCancel : kRun, worker_type, local_next, static_cast<uint32_t>(worker));
}

}  // namespace pto2::detail
