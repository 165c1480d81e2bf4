// submit.cpp — submission: the submission part's steps (SubmitState: validation, filling and
// publishing a slot), and the Engine's submit, which drives them: the undeferred path, waiting
// for a slot, dependencies (found and linked in dependencies.cpp) and queueing the ready task.
#include <algorithm>

#include "engine.h"

namespace pto2::detail {

// The full check (plain_valid answers the common case inline).
std::string SubmitState::check(TaskKind& kind, int32_t aic_kernel, int32_t aiv_kernel, const Arg& params, const char* api,
                               uint64_t raw, const KernelTable& kernels, const WorkerPool& workers, const uint32_t* cores,
                               uint32_t clusters, Launch& launch) const {
  auto who = [&] {  // errors only; the DSL line when generated code recorded it (PTO2_SOURCE_SITE)
    const char* f = params.source_file();
    const std::string site = f && params.source_line() > 0 ? std::string(f) + ":" + std::to_string(params.source_line()) + ": " : "";
    return site + api + " (task #" + std::to_string(number(raw)) + ")";
  };
  auto unknown = [&](int32_t id) {
    return who() + ": unknown kernel id " + std::to_string(id) +
           " (register it with Runtime::register_kernel or pto2_kernel_desc)";
  };
  if (kind == TaskKind::AIC && !kernels.registered(aic_kernel)) return unknown(aic_kernel);
  if (kind == TaskKind::AIV && !kernels.registered(aiv_kernel)) return unknown(aiv_kernel);
  if (kind == TaskKind::MIXED) {
    if (aic_kernel != INVALID_KERNEL_ID && !kernels.registered(aic_kernel)) return unknown(aic_kernel);
    if (aiv_kernel != INVALID_KERNEL_ID && !kernels.registered(aiv_kernel)) return unknown(aiv_kernel);
    if (aic_kernel == INVALID_KERNEL_ID && aiv_kernel == INVALID_KERNEL_ID)
      return who() + ": MixedKernels names no kernel (both ids are INVALID_KERNEL_ID)";
    if (aic_kernel == INVALID_KERNEL_ID) kind = TaskKind::AIV;
    else if (aiv_kernel == INVALID_KERNEL_ID) kind = TaskKind::AIC;
  }
  const uint32_t blocks = params.launch_spec.block_num;
  if (kind != TaskKind::DUMMY && blocks == 0)
    return who() + ": launch_spec block_num (core_num) is 0: it must be >= 1 (a grid such as (M + B - 1) // B is 0 "
                   "for M = 0: guard the submission with an if)";
  // A kernel sees block_num as int32: a larger count is a negative or too large core_num
  // (LaunchSpec::set_block_num stores those as UINT32_MAX).
  if (kind != TaskKind::DUMMY && blocks > static_cast<uint32_t>(INT32_MAX))
    return who() + ": launch_spec block_num (core_num) is out of range 1..2147483647 "
                   "(negative, or too large for the kernel's int32 block_num)";
  const bool sync = params.launch_spec.require_sync_start;
  if (kind == TaskKind::MIXED) {
    launch.gang = true;
    launch.need[0] = launch.need[1] = blocks;
    if (blocks > clusters)
      return who() + ": mixed task with block_num " + std::to_string(blocks) + " needs " + std::to_string(blocks) +
             " clusters (AIC+AIV pairs), the runtime has " + std::to_string(clusters);
  } else if (kind == TaskKind::AIC || kind == TaskKind::AIV) {
    const int t = kind == TaskKind::AIC ? 0 : 1;
    if (workers.of_type(t) == 0) return who() + ": the runtime has no " + (t == 0 ? "AIC" : "AIV") + " workers";
    if (sync && blocks > 1) {
      launch.gang = true;
      launch.need[t] = blocks;
      if (blocks > cores[t])
        return who() + ": sync_start with block_num " + std::to_string(blocks) + " needs " + std::to_string(blocks) + " " +
               (t == 0 ? "AIC" : "AIV") + " cores at once, the modelled chip has " + std::to_string(cores[t]) +
               " (RuntimeOptions::" + (t == 0 ? "aic_cores" : "aiv_cores") + ")";
      launch.helpers_type = t;
    }
  }
  for (const PTO2TaskId& d : params.dependencies()) {
    if (!d.is_valid())
      return who() + ": set_dependencies got PTO2TaskId::invalid(); guard optional ids with is_valid()";
    if (d.raw >= raw)
      return who() + ": set_dependencies got task id " + std::to_string(d.raw) + ", which was never submitted";
  }
  if (params.timing_slot() >= 16)
    return who() + ": timing slot " + std::to_string(params.timing_slot()) + " is out of range 0..15";
  return std::string();
}

// Out of line: only a submission tensors_fields_ok refused gets here.
std::string tensor_fields_error(const Arg& params, const std::string& who) {
  const auto& ts = params.tensors();
  for (uint32_t i = 0; i < ts.size(); ++i) {
    const Tensor& t = ts[i];
    if (tensor_fields_ok(t)) continue;
    const std::string slot = who + ": tensor slot " + std::to_string(i) + ": ";
    if (t.ndims > PTO2_MAX_DIMS)
      return slot + "rank (ndims) " + std::to_string(t.ndims) + " is above PTO2_MAX_DIMS (" + std::to_string(PTO2_MAX_DIMS) +
             "); Tensor's fields may be written by hand, but ndims must stay in 0..8";
    return slot + invalid_dtype_text(t.dtype);
  }
  return who + ": invalid tensor";
}

// What the task runs (a dummy runs nothing: no tensors or scalars).
inline void SubmitState::fill(TaskSlot& s, TaskKind kind, int32_t aic_kernel, int32_t aiv_kernel, uint32_t blocks,
                       const Arg& params) {
  s.kind = kind;
  s.kernel[0] = kind == TaskKind::AIC || kind == TaskKind::MIXED ? aic_kernel : -1;
  s.kernel[1] = kind == TaskKind::AIV || kind == TaskKind::MIXED ? aiv_kernel : -1;
  s.block_num = kind == TaskKind::DUMMY ? 1 : blocks;
  s.site_file = params.source_file();
  s.site_line = params.source_line();
  if (kind == TaskKind::DUMMY) {
    s.has_tensors = false;
    s.line0_count = 0;
    return;
  }
  // Line 9 (the vectors' headers) is written only when used: the worker that ran the slot's
  // previous task read it, so each write there is a cross-core transfer.
  s.has_tensors = params.tensor_count() != 0;
  if (s.has_tensors) s.tensors.assign(params.tensors().begin(), params.tensors().end());
  const uint32_t n_scalars = params.scalars().size();
  if (n_scalars <= TaskSlot::kLine0Scalars) {
    for (uint32_t i = 0; i < n_scalars; ++i) s.line0_scalars[i] = params.scalars()[i];
    s.line0_count = static_cast<uint8_t>(n_scalars);
  } else {
    s.scalars.assign(params.scalars().begin(), params.scalars().end());
    s.line0_count = TaskSlot::kScalarsInVector;
  }
}

inline void SubmitState::publish(TaskSlot& s, TaskRing& ring, uint64_t raw, const Arg& params, const Launch& launch,
                          uint32_t blocks) {
  count_in_ring();  // published with the run's count by count_submitted(), once the edges are linked
  // The flag bits together (one byte: the compiler merges the stores).
  const bool has_pred = params.has_predicate();
  s.sync_start = params.launch_spec.require_sync_start;
  s.gang = launch.gang;
  s.has_pred = has_pred;
  if (has_pred) s.pred = params.predicate();
  s.timing_slot = static_cast<int8_t>(params.timing_slot());
  // s.storages is empty: only retire frees a slot, and it empties them first (keep_storage
  // fills them after this). Not even asked: a load from line 0 would wait for the line,
  // on its way from the core that ran the slot's previous task (fill's stores asked for it).
  s.fanout.store(kEnd, std::memory_order_relaxed);
  if (launch.gang || s.block_num > 1) {  // a single-block task never reads its block or gang state
    s.need[0].store(launch.need[0], std::memory_order_relaxed);
    s.need[1].store(launch.need[1], std::memory_order_relaxed);
    s.next_block.store(0, std::memory_order_relaxed);
    s.blocks_left.store(launch.gang ? launch.need[0] + launch.need[1] : s.block_num, std::memory_order_relaxed);
    s.claimed[0].store(0, std::memory_order_relaxed);
    s.claimed[1].store(0, std::memory_order_relaxed);
    s.arrived.store(0, std::memory_order_relaxed);
    s.go.store(false, std::memory_order_relaxed);
  }
  if (s.kind == TaskKind::MIXED) {
    if (s.gflags_cap < blocks) {
      s.gflags.reset(new std::atomic<uint32_t>[blocks]);
      s.gflags_cap = blocks;
    }
    for (uint32_t b = 0; b < blocks; ++b) s.gflags[b].store(0, std::memory_order_relaxed);
  }
  s.fanin.store(1, std::memory_order_relaxed);
  s.free.store(false, std::memory_order_relaxed);
  s.done.store(false, std::memory_order_relaxed);
  ring.mark_issued(raw);
  s.raw.store(raw, std::memory_order_release);
}

void Engine::submit(TaskKind kind, int32_t aic_kernel, int32_t aiv_kernel, Arg& params, const char* api,
                    TaskOutputTensors& out, bool undeferred_checked) {
  if (failed()) throw RunAborted{};
  const int64_t trace_t0 = opt_.trace_ ? now_ns() : 0;  // the submission's span on the orchestrator track
  const uint64_t raw = sub_.next_id();
  SubmitState::Launch launch;
  if (!SubmitState::plain_valid(kind, aic_kernel, aiv_kernel, params, raw, kernels_, workers_)) {
    const std::string err =
        sub_.check(kind, aic_kernel, aiv_kernel, params, api, raw, kernels_, workers_, n_cores_, clusters_, launch);
    if (!err.empty()) abort_orchestration(err);
    if (launch.helpers_type >= 0) ensure_gang_threads(launch.helpers_type, params.launch_spec.block_num);
  }
  if (__builtin_expect(!tensors_fields_ok(params), 0))
    abort_orchestration(tensor_fields_error(params, std::string(api) + " (task #" + std::to_string(sub_.number(raw)) + ")"));
  const bool gang = launch.gang;
  const uint32_t blocks = params.launch_spec.block_num;
  const auto& edeps = params.dependencies();

  const int type = kind == TaskKind::AIC ? 0 : 1;
  const bool manual_scope = scopes_.in_manual();
  out.id_.raw = raw;
  linker_.begin_task();

  // A single-block task that has nothing to wait for runs right here, undeferred, when the
  // workers have plenty queued already (as OpenMP runtimes do past their task throttle) or
  // when its kernel is shorter than shipping it to a worker would take. It never takes a slot,
  // and it has finished before the next submission consults the tracker.
  const int32_t kernel = type == 0 ? aic_kernel : aiv_kernel;
  // Asked once per submission (the queue's head is written by the workers: reading it is a
  // cache miss, which queued_at_least avoids while the queue is short).
  const bool helps = opt_.orchestrator_helps_ && kind != TaskKind::DUMMY;
  const bool queue_full = helps && queued_at_least(type, help_threshold_);
  const bool queue_over = queue_full && queued_at_least(type, help_threshold_ + 1);  // no second miss
  // The condition that is usually false (neither throttled nor tiny) early: the rest is not
  // asked. (The kind first: only a single-kernel task's `kernel` is a registered id.)
  const bool may_run_undeferred =
      (kind == TaskKind::AIC || kind == TaskKind::AIV) && (queue_full || kernels_.is_tiny(kernel)) &&
      !undeferred_checked && opt_.orchestrator_helps_ && !gang && blocks == 1 && !params.has_predicate() &&
      params.timing_slot() < 0 && !opt_.trace_ && !params.has_new_output();
  // With no task in flight at all there is nothing to wait for (the common case when every
  // task runs undeferred): the tracker need not even be asked. A full queue means tasks in
  // flight, so quiet() (a read of every thread's retired count) is not asked then.
  if (may_run_undeferred && ((!queue_full && quiet()) || (!linker_.tensors_must_wait(ring_, params, manual_scope) && !DependencyLinker::any_live(ring_, edeps)))) {
    // Nothing recorded in the tracker: the task has finished before anyone looks again.
    sub_.take_id();
    sub_.count_submitted();
    run_undeferred(kind, kernel, params, raw, type);
    return;
  }

  // Claim the slot (back-pressure when the ring is full). It is published (raw id) once the
  // task's dependencies are known; its fan-in is set when they are linked.
  TaskSlot* free = SubmitState::free_slot(ring_, raw);
  TaskSlot& s = free ? *free : acquire_slot(raw);
  const uint32_t idx = ring_.index_of(raw);
  sub_.take_id();
  SubmitState::fill(s, kind, aic_kernel, aiv_kernel, blocks, params);
  bool untracked_write = false;
  // A task without tensors or predicate (MANUAL chains of task ids) has nothing to allocate or track.
  const Tensor* pred_element = params.tensor_count() || params.has_predicate()
                                   ? allocate_and_track(s, params, raw, manual_scope, out, untracked_write)
                                   : nullptr;
  sub_.publish(s, ring_, raw, params, launch, blocks);
  if (untracked_write) untracked_.add(raw, [this](uint64_t r) { return ring_.is_live(r); });
  // Read from the Arg, hot in this core's cache, unless runtime-allocated outputs are only in
  // the slot: the slot's copy was just stored, its lines perhaps still on their way from the
  // core that ran the slot's previous task.
  const Tensor* kept = params.has_new_output() ? s.tensors.data() : params.tensors().data();
  for (uint32_t i = 0, n = s.tensor_count(); i < n; ++i)
    if (PTO2Storage* st = kept[i].storage; st && !st->run_scoped) keep_storage(s, st);
  if (pred_element) keep_storage(s, pred_element->storage);

  // No guard on fanin: link_edges sets it to the producers to link before linking any (see
  // there), so it reaches 0 only once every linked producer retired and the ones not linked
  // (already retired) are subtracted. A task whose producers were all linked is thus made
  // ready by its last producer's retirement — possibly before link_edges returns — and this
  // thread does not touch its fan-in again (no read-modify-write per task on a line a
  // releasing worker may just have taken). Nothing below writes the slot.
  uint32_t unlinked = 0;
  const bool has_candidates = !linker_.producers().empty() || !edeps.empty();
  const uint32_t edges_added = has_candidates ? linker_.link_edges(ring_, s, raw, edeps, unlinked) : 0;
  sub_.count_submitted();
  if (kind == TaskKind::DUMMY) sub_.count_dummy();

  // A plain task (no gang, predicate or dummy) that is ready now goes straight to its queue:
  // what on_ready -> schedule -> push_ready decide for it, inline.
  const auto ready = [&] {
    if ((kind == TaskKind::AIC || kind == TaskKind::AIV) && !gang && !s.has_pred && !failed()) workers_.push(type, idx);
    else on_ready(idx, -1, nullptr, workers_.workers());
  };
  if (edges_added == 0) {  // no producer can touch fanin
    s.fanin.store(0, std::memory_order_relaxed);
    ready();
  } else if (unlinked != 0 && s.fanin.fetch_sub(static_cast<int32_t>(unlinked), std::memory_order_acq_rel) ==
                                  static_cast<int32_t>(unlinked)) {
    ready();  // its linked producers all retired meanwhile
  }
  // A task with tensors two submissions ahead: one submission's code between the prefetch and
  // fill() (~100 ns in AUTO) hid less than the transfers of its lines from the worker's core
  // (interleaved, AUTO chain 0.94x with 2 ahead; 3 ahead slowed MANUAL trivial 3-5 %, 8 ahead
  // everything). One without (MANUAL: three lines) one ahead, as before: two ahead measured
  // MANUAL tree 3-5 % slower on a loaded machine.
  SubmitState::prefetch_slot(ring_.slot_of(raw + (params.tensor_count() ? SubmitState::kPrefetchAhead : 1)),
                             params.tensor_count());
  if (opt_.trace_)
    record_.submission(raw, kind == TaskKind::AIC ? s.kernel[0] : s.kernel[1], params.source_file(),
                       params.source_line(), trace_t0, now_ns());
  // Throttle (as OpenMP runtimes do): with plenty of ready work queued, run one task here
  // rather than let the queue grow while the workers cannot keep up.
  if (queue_over) help_one(false);
}

TaskSlot& Engine::acquire_slot(uint64_t raw) {
  TaskSlot& s = ring_.slot_of(raw);
  if (s.free.load(std::memory_order_acquire)) return s;
  // Ring full: wait until a batch of slots is free, so that the orchestrator and the workers
  // do not take turns one task (and one futex wake) at a time. Only the retirement of this
  // slot's or the batch's last slot's occupant wakes the orchestrator.
  const uint64_t batch = std::min<uint64_t>(ring_.size() / 8, 64);
  TaskSlot& last = ring_.slot_of(raw + batch - 1);
  Watchdog::WakeOnlyOn wake_on(watchdog_, s.raw.load(std::memory_order_relaxed), last.raw.load(std::memory_order_relaxed));
  orchestrator_wait([&] { return s.free.load(std::memory_order_acquire) && last.free.load(std::memory_order_acquire); },
                    "a free task slot (task ring full)");
  return s;
}

// The task holds a reference on a runtime-allocated storage until it retires.
void Engine::keep_storage(TaskSlot& s, PTO2Storage* storage) {
  if (!storage || storage->run_scoped || std::find(s.storages.begin(), s.storages.end(), storage) != s.storages.end()) return;
  MemoryPool::acquire(storage);
  s.storages.push_back(storage);
  s.has_storages = true;
}

// Out of line for submit()'s undeferred path (the throttle, or a task with dependencies that
// have all finished); try_submit_undeferred inlines it.
void Engine::run_undeferred(TaskKind kind, int32_t kernel, const Arg& params, uint64_t raw, int type) {
  run_undeferred_inline(kind, kernel, params, raw, type);
}

// The sampled run (one in kSampleEvery): timed, to keep the kernel's average current.
void Engine::run_undeferred_timed(TaskKind kind, int32_t kernel, const Arg& params, uint64_t raw, int type) {
  WorkerStats& ws = workers_.orchestrator_stats();
  const int64_t t0 = now_ns();
  as_kernel([&] {
    call_kernel(kernels_.fn(kernel), params.tensors().data(), params.tensor_count(), params.scalars().data(),
                params.scalars().size(), 0, 1, nullptr, static_cast<uint32_t>(type), sub_.undeferred_err(), raw);
  });
  kernels_.record_ns(kernel, now_ns() - t0);
  if (!sub_.undeferred_err().empty()) undeferred_failed(kind, kernel, raw, type, params);
  ++ws.undeferred;
}

void Engine::undeferred_failed(TaskKind kind, int32_t kernel, uint64_t raw, int type, const Arg& params) {
  const int32_t ids[2] = {type == 0 ? kernel : -1, type == 1 ? kernel : -1};
  const std::string msg = describe_task(kind, ids, raw) + submitted_at(params.source_file(), params.source_line()) +
                          " block 0/1 on the orchestrator thread (undeferred) failed: " + sub_.undeferred_err();
  sub_.undeferred_err().clear();
  fail(msg);
}

}  // namespace pto2::detail
