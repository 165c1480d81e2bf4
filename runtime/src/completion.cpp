// completion.cpp — Completion (completion.h): retirement, which releases the consumers (a
// consumer whose last producer retired becomes ready), the task's storages and its slot.
// Dummy tasks, tasks whose predicate is false and (after a failure) all tasks are retired by
// the thread that readied them, without running. Instantiated for the Engine's parts.
#include "completion.h"

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

template <class Parts>
void Completion::on_ready(Parts p, uint32_t idx, int worker_type, uint32_t* local_next, uint32_t thread) {
  const int o = inline_outcome(p, p.ring().at(idx));
  if (o < 0) p.schedule(idx, worker_type, local_next);
  else retire(p, idx, o, worker_type, local_next, thread);
}

template <class Parts>
void Completion::retire(Parts p, uint32_t idx, int outcome, int worker_type, uint32_t* local_next, uint32_t thread) {
  Completion& self = p.completion();
  RetireCounts& st = self.counts_[thread];
  TaskRing& ring = p.ring();
  pto2::SmallVec<Retiring, 16> work;
  work.push_back(Retiring{idx, outcome});
  while (!work.empty()) {
    const Retiring r = work.back();
    work.pop_back();
    const uint32_t i = r.idx;
    const int o = r.outcome;
    TaskSlot& s = ring.at(i);
    const uint64_t raw = s.raw.load(std::memory_order_relaxed);  // before the slot is freed
    switch (o) {
      case kRun: ++st.executed; break;
      case kSkip:
        ++st.skipped;
        p.skipped(thread, s, raw);
        break;
      case kCancel: ++st.cancelled; break;
      default: ++st.dummy; break;
    }
    // Close the fan-out list and release every consumer on it. A node belongs to its
    // consumer: read it fully before the decrement that may let the consumer run and retire.
    // The exchange comes before the stores of done and retired_raw_: a locked instruction
    // waits for the stores before it, so storing first made it wait for retired_raw_'s line
    // (the orchestrator reads it) before even asking for this one; done (same line as the
    // list) now hits. Meanwhile is_live still says live: add_edge then finds the list closed
    // (no edge), get_tensor_data's wait waits a few instructions longer.
    EdgeLink n = s.fanout.exchange(kClosed, std::memory_order_acq_rel);
    s.done.store(true, std::memory_order_release);
    ring.mark_retired(i, raw);
    while (n != kEnd) {
      EdgeLink next;
      TaskSlot& cs = ring.consumer_of(n, next);
      if (cs.fanin.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        const uint32_t c = ring.index_of_slot(cs);
        const int co = inline_outcome(p, cs);
        if (co >= 0) {
          work.push_back(Retiring{c, co});
        } else if (local_next && *local_next == kNoTask && !cs.gang && cs.block_num == 1 &&
                   (cs.kind == TaskKind::AIC ? 0 : 1) == worker_type) {
          *local_next = c;  // schedule()'s common case, inline: this worker runs it next
        } else {
          p.schedule(c, worker_type, local_next);
        }
      }
      n = next;
    }
    if (s.has_storages) {  // its line is the orchestrator's: not even read when empty
      for (PTO2Storage* storage : s.storages) p.pool().task_release(storage);
      s.storages.clear();
      s.has_storages = false;
    }
    s.free.store(true, std::memory_order_release);
    // Own counter (no shared cache line); release: waiters that see it see the retirement.
    st.retired.store(st.retired.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    p.retired(raw);
  }
}

template <class Parts>
void Completion::finish_blocks(Parts p, uint32_t idx, uint32_t n, int worker_type, uint32_t* local_next,
                               uint32_t thread) {
  TaskSlot& s = p.ring().at(idx);
  if (s.blocks_left.fetch_sub(n, std::memory_order_acq_rel) == n)
    retire(p, idx, p.failed() ? kCancel : kRun, worker_type, local_next, thread);
}

// ---------------------------------------------------------------- the Engine's parts

void Engine::CompletionParts::skipped(uint32_t thread, const TaskSlot& s, uint64_t raw) const {
  if (e.race_) e.race_->on_skipped(raw);
  if (e.opt_.trace_)
    e.record_.skip(thread, SkipEvent{raw, s.kernel[1] >= 0 ? s.kernel[1] : s.kernel[0], now_ns(), s.pred.element,
                                     s.pred.target, s.pred.op});
}

template void Completion::on_ready(Engine::CompletionParts, uint32_t, int, uint32_t*, uint32_t);
template void Completion::retire(Engine::CompletionParts, uint32_t, int, int, uint32_t*, uint32_t);
template void Completion::finish_blocks(Engine::CompletionParts, uint32_t, uint32_t, int, uint32_t*, uint32_t);

}  // namespace pto2::detail
