// engine.cpp — submission (orchestrator side) and run control of the PTO2 CPU runtime.
#include "engine.h"

#include "race_checker.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace pto2::detail {

namespace {
constexpr uint32_t kNone = UINT32_MAX;
const char* kind_api(TaskKind k) {
  switch (k) {
    case TaskKind::AIC: return "rt_submit_aic_task";
    case TaskKind::AIV: return "rt_submit_aiv_task";
    case TaskKind::MIXED: return "rt_submit_task";
    case TaskKind::DUMMY: return "rt_submit_dummy_task";
  }
  return "?";
}
}  // namespace

thread_local Engine* Engine::tl_current = nullptr;

Engine::Engine(const RuntimeOptions& opt) : opt_(opt) {
  n_type_[0] = opt.aic_workers_;
  n_type_[1] = opt.aiv_workers_;
  const uint32_t min_pair = std::min(n_type_[0], n_type_[1]);
  clusters_ = opt.clusters_ == 0 ? min_pair : std::min(opt.clusters_, min_pair);
  ring_size_ = 8;
  while (ring_size_ < std::max<uint32_t>(opt.task_ring_size_, 2)) ring_size_ <<= 1;
  ring_mask_ = ring_size_ - 1;
  slots_.reset(new TaskSlot[ring_size_]);
  issued_raw_.reset(new uint64_t[ring_size_]());
  retired_raw_.reset(new std::atomic<uint64_t>[ring_size_]);
  for (uint64_t i = 0; i < ring_size_; ++i) retired_raw_[i].store(0, std::memory_order_relaxed);
  for (int t = 0; t < 2; ++t) ready_[t].reset(ring_size_);
  n_workers_ = n_type_[0] + n_type_[1];
  for (int t = 0; t < 2; ++t) undeferred_on_[t] = opt.orchestrator_helps_ && !opt.trace_ && n_type_[t] > 0;
  help_threshold_ = opt.help_threshold_ ? opt.help_threshold_ : 16 * std::max<uint32_t>(1, n_workers_);
  wstats_.reset(new WorkerStats[n_workers_ + 1]);  // last: orchestrator thread
  trace_.resize(n_workers_ + 1);
  for (uint32_t w = 0; w < n_workers_; ++w) worker_type_.push_back(w < n_type_[0] ? 0 : 1);
  for (uint32_t w = 0; w < n_workers_; ++w) threads_.emplace_back([this, w] { worker_main(static_cast<int>(w)); });
}

Engine::~Engine() {
  shutdown_.store(true, std::memory_order_seq_cst);
  for (int t = 0; t < 2; ++t) idle_[t].notify_all();
  for (auto& th : threads_) th.join();
}

void Engine::register_kernel(int32_t id, const std::string& name, CoreType core, PTO2KernelFn fn) {
  if (id < 0 || id > 1000000) throw std::invalid_argument("register_kernel: kernel id out of range: " + std::to_string(id));
  if (!fn) throw std::invalid_argument("register_kernel: null function for kernel '" + name + "'");
  if (static_cast<size_t>(id) >= kernels_.size()) kernels_.resize(static_cast<size_t>(id) + 1);
  kernels_[static_cast<size_t>(id)] = KernelInfo{name, core, fn};
  if (kernels_.size() > kernel_ns_size_) {
    std::unique_ptr<KernelTiming[]> grown(new KernelTiming[kernels_.size()]);
    for (size_t k = 0; k < kernel_ns_size_; ++k) grown[k].copy_from(kernel_ns_[k]);
    kernel_ns_ = std::move(grown);
    kernel_ns_size_ = kernels_.size();
  }
  kernel_ns_[static_cast<size_t>(id)].reset();
}

// ---------------------------------------------------------------- failure

void Engine::fail(const std::string& msg) {
  {
    std::lock_guard<std::mutex> lk(fail_mu_);
    if (fail_msg_.empty()) fail_msg_ = msg;
  }
  failed_.store(true, std::memory_order_seq_cst);
  progress_.notify_all();
  for (int t = 0; t < 2; ++t) idle_[t].notify_all();
}

void Engine::abort_orchestration(const std::string& msg) {
  fail(msg);
  throw RunAborted{};
}

std::string Engine::describe_slot(const TaskSlot& s, uint64_t raw) { return describe_task(s.kind, s.kernel, raw); }

std::string Engine::describe_task(TaskKind kind, const int32_t* kernel, uint64_t raw) const {
  std::ostringstream os;
  os << "task #" << raw;
  auto kname = [&](int32_t k) -> std::string {
    if (k >= 0 && static_cast<size_t>(k) < kernels_.size() && kernels_[static_cast<size_t>(k)].fn)
      return "'" + kernels_[static_cast<size_t>(k)].name + "' (id " + std::to_string(k) + ")";
    return "id " + std::to_string(k);
  };
  switch (kind) {
    case TaskKind::AIC: os << " (AIC kernel " << kname(kernel[0]) << ")"; break;
    case TaskKind::AIV: os << " (AIV kernel " << kname(kernel[1]) << ")"; break;
    case TaskKind::MIXED: os << " (mixed kernels AIC " << kname(kernel[0]) << " + AIV " << kname(kernel[1]) << ")"; break;
    case TaskKind::DUMMY: os << " (dummy)"; break;
  }
  return os.str();
}

std::string Engine::describe(uint64_t raw) { return describe_slot(slot_of(raw), raw); }

// ---------------------------------------------------------------- orchestrator waits

template <class Pred>
void Engine::orchestrator_wait(Pred&& ready, const char* what) {
  for (int i = 0; i < 2000; ++i) {
    if (ready()) return;
    if (failed()) throw RunAborted{};
    if (help_one()) {  // blocked: run ready work instead of waiting for a worker to do it
      i = 0;
      continue;
    }
    cpu_relax();
  }
  auto progress = [&] {
    uint64_t n = 0;
    for (uint32_t w = 0; w <= n_workers_; ++w) n += wstats_[w].completed.load(std::memory_order_relaxed);
    return n;
  };
  uint64_t last = progress();
  int64_t last_t = now_ns();
  for (;;) {
    uint32_t key = progress_.prepare();
    if (ready()) {
      progress_.cancel();
      return;
    }
    if (failed()) {
      progress_.cancel();
      throw RunAborted{};
    }
    progress_.wait(key, 2000000);
    const uint64_t p = progress();
    const int64_t t = now_ns();
    if (p != last) {
      last = p;
      last_t = t;
    } else if (t - last_t > int64_t(opt_.deadlock_timeout_ms_) * 1000000) {
      bool busy = false;
      for (uint32_t w = 0; w < n_workers_; ++w) busy |= wstats_[w].busy.load();
      if (!busy && !ready()) {
        poisoned_ = true;
        abort_orchestration(std::string("deadlock: the orchestrator waits for ") + what +
                            " but no task made progress for " + std::to_string(opt_.deadlock_timeout_ms_) + " ms");
      }
      last_t = t;
    }
  }
}

// ---------------------------------------------------------------- memory and scopes

void Engine::drain_released() {
  pool_.drain([this](void* data) { tracker_.erase(data); });
}

PTO2Storage* Engine::alloc_storage(size_t bytes) {
  drain_released();
  if (bytes > opt_.memory_limit_)
    abort_orchestration("allocation of " + std::to_string(bytes) + " bytes exceeds the memory limit of " +
                        std::to_string(opt_.memory_limit_) + " bytes");
  PTO2Storage* s = pool_.try_alloc(bytes, opt_.memory_limit_);
  while (!s) {
    if (inflight() == 0 && !pool_.has_released())
      abort_orchestration("out of memory: " + std::to_string(pool_.live_bytes()) +
                          " bytes of runtime tensors are held by open scopes; the limit is " +
                          std::to_string(opt_.memory_limit_) + " bytes (allocating " + std::to_string(bytes) + ")");
    orchestrator_wait([&] { return pool_.has_released() || inflight() == 0; },
                      "memory (runtime tensors)");
    drain_released();
    s = pool_.try_alloc(bytes, opt_.memory_limit_);
  }
  s->run_scoped = scopes_.size() == 1;
  if (race_) race_->on_alloc(s->data);
  return s;
}

void Engine::scope_begin(PTO2ScopeMode mode) {
  if (failed()) throw RunAborted{};
  if (mode == PTO2ScopeMode::AUTO && !scopes_.empty() && scopes_.back().mode == PTO2ScopeMode::MANUAL)
    abort_orchestration(
        "misuse: PTO2_SCOPE() (AUTO) opened inside a PTO2_SCOPE(PTO2ScopeMode::MANUAL) scope; an AUTO scope cannot "
        "nest in a MANUAL one (next task would be #" + std::to_string(next_raw_) + ")");
  scopes_.push_back(Scope{mode, {}});
}

void Engine::scope_end() noexcept {
  if (scopes_.empty()) return;
  for (PTO2Storage* s : scopes_.back().allocs) pool_.scope_release(s);
  scopes_.pop_back();
}

TaskOutputTensors Engine::alloc_tensors(const TensorCreateInfo* const* infos, uint32_t n) {
  if (failed()) throw RunAborted{};
  TaskOutputTensors out;
  out.tensors_.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    const TensorCreateInfo& ci = *infos[i];
    Tensor t;
    t.ndims = ci.ndims;
    for (uint32_t d = 0; d < ci.ndims; ++d) t.shapes[d] = ci.shapes[d];
    pto2_row_major_strides(t.shapes, t.ndims, t.strides);
    t.dtype = ci.dtype;
    t.manual_dep = ci.manual_dep;
    PTO2Storage* s = alloc_storage(t.nbytes());
    t.data = s->data;
    t.storage = s;
    scopes_.back().allocs.push_back(s);
    out.tensors_.push_back(t);
  }
  return out;
}

// ---------------------------------------------------------------- submission

TaskSlot& Engine::acquire_slot(uint64_t raw) {
  TaskSlot& s = slot_of(raw);
  if (s.free.load(std::memory_order_acquire)) return s;
  // Ring full: wait until a batch of slots is free, so that the orchestrator and the workers
  // do not take turns one task (and one futex wake) at a time. Only the retirement of this
  // slot's or the batch's last slot's occupant wakes the orchestrator.
  const uint64_t batch = std::min<uint64_t>(ring_size_ / 8, 64);
  TaskSlot& last = slot_of(raw + batch - 1);
  wake_on_[1].store(last.raw.load(std::memory_order_relaxed), std::memory_order_relaxed);
  wake_on_[0].store(s.raw.load(std::memory_order_relaxed), std::memory_order_relaxed);
  struct WakeOnAny {  // also when the wait throws (the run failed)
    std::atomic<uint64_t>& a;
    ~WakeOnAny() { a.store(0, std::memory_order_relaxed); }
  } reset{wake_on_[0]};
  orchestrator_wait([&] { return s.free.load(std::memory_order_acquire) && last.free.load(std::memory_order_acquire); },
                    "a free task slot (task ring full)");
  return s;
}

// Links `consumer` into the producer's fan-out list. The caller has reserved in_edges and
// holds a guard on the consumer's fanin covering every candidate edge. False: the producer
// already retired (or its slot holds a later task) — no edge.
bool Engine::add_edge(uint64_t producer, TaskSlot& consumer, uint32_t consumer_index) {
  TaskSlot& p = slot_of(producer);
  if (p.raw.load(std::memory_order_relaxed) != producer) return false;  // finished long ago
  consumer.in_edges.push_back(EdgeNode{nullptr, consumer_index});
  EdgeNode* n = &consumer.in_edges.back();
  EdgeNode* head = p.fanout.load(std::memory_order_acquire);
  do {
    if (head == kClosed) {
      consumer.in_edges.pop_back();
      return false;
    }
    n->next = head;
  } while (!p.fanout.compare_exchange_weak(head, n, std::memory_order_acq_rel, std::memory_order_acquire));
  return true;
}

TaskOutputTensors Engine::submit(TaskKind kind, int32_t aic_kernel, int32_t aiv_kernel, Arg& params, const char* api,
                                 bool undeferred_checked) {
  if (failed()) throw RunAborted{};
  const uint64_t raw = next_raw_;
  auto who = [&] { return std::string(api) + " (task #" + std::to_string(raw) + ")"; };  // errors only
  auto check_kernel = [&](int32_t id) {
    if (id < 0 || static_cast<size_t>(id) >= kernels_.size() || !kernels_[static_cast<size_t>(id)].fn)
      abort_orchestration(who() + ": unknown kernel id " + std::to_string(id) +
                          " (register it with Runtime::register_kernel or pto2_kernel_desc)");
  };
  if (kind == TaskKind::AIC) check_kernel(aic_kernel);
  if (kind == TaskKind::AIV) check_kernel(aiv_kernel);
  if (kind == TaskKind::MIXED) {
    if (aic_kernel != INVALID_KERNEL_ID) check_kernel(aic_kernel);
    if (aiv_kernel != INVALID_KERNEL_ID) check_kernel(aiv_kernel);
    if (aic_kernel == INVALID_KERNEL_ID && aiv_kernel == INVALID_KERNEL_ID)
      abort_orchestration(who() + ": MixedKernels names no kernel (both ids are INVALID_KERNEL_ID)");
    if (aic_kernel == INVALID_KERNEL_ID) kind = TaskKind::AIV;
    else if (aiv_kernel == INVALID_KERNEL_ID) kind = TaskKind::AIC;
  }
  const uint32_t blocks = params.launch_spec.block_num;
  if (kind != TaskKind::DUMMY && blocks == 0) abort_orchestration(who() + ": launch_spec block_num must be >= 1");
  const bool sync = params.launch_spec.require_sync_start;
  bool gang = false;
  uint32_t need[2] = {0, 0};
  if (kind == TaskKind::MIXED) {
    gang = true;
    need[0] = need[1] = blocks;
    if (blocks > clusters_)
      abort_orchestration(who() + ": mixed task with block_num " + std::to_string(blocks) + " needs " +
                          std::to_string(blocks) + " clusters (AIC+AIV pairs), the runtime has " + std::to_string(clusters_));
  } else if (kind == TaskKind::AIC || kind == TaskKind::AIV) {
    const int t = kind == TaskKind::AIC ? 0 : 1;
    if (n_type_[t] == 0)
      abort_orchestration(who() + ": the runtime has no " + (t == 0 ? "AIC" : "AIV") + " workers");
    if (sync && blocks > 1) {
      gang = true;
      need[t] = blocks;
      if (blocks > n_type_[t])
        abort_orchestration(who() + ": sync_start with block_num " + std::to_string(blocks) + " needs " +
                            std::to_string(blocks) + " " + (t == 0 ? "AIC" : "AIV") + " workers at once, the runtime has " +
                            std::to_string(n_type_[t]));
    }
  }
  const auto& edeps = params.dependencies();
  for (const PTO2TaskId& d : edeps) {
    if (!d.is_valid())
      abort_orchestration(who() + ": set_dependencies got PTO2TaskId::invalid(); guard optional ids with is_valid()");
    if (d.raw >= raw)
      abort_orchestration(who() + ": set_dependencies got task id " + std::to_string(d.raw) + ", which was never submitted");
  }
  if (params.timing_slot() >= 16) abort_orchestration(who() + ": timing slot " + std::to_string(params.timing_slot()) + " is out of range 0..15");

  const int type = kind == TaskKind::AIC ? 0 : 1;
  const bool manual_scope = scopes_.back().mode == PTO2ScopeMode::MANUAL;
  TaskOutputTensors out;
  out.id_.raw = raw;
  dep_scratch_.clear();

  // A single-block task that has nothing to wait for runs right here, undeferred, when the
  // workers have plenty queued already (as OpenMP runtimes do past their task throttle) or
  // when its kernel is shorter than shipping it to a worker would take. It never takes a slot,
  // and it has finished before the next submission consults the tracker.
  const int32_t kernel = type == 0 ? aic_kernel : aiv_kernel;
  // Read once per submission (the queue's head is written by the workers: a cache miss).
  const size_t queued = opt_.orchestrator_helps_ && kind != TaskKind::DUMMY ? ready_[type].size_hint() : 0;
  const bool may_run_undeferred =
      !undeferred_checked && opt_.orchestrator_helps_ && (kind == TaskKind::AIC || kind == TaskKind::AIV) && !gang &&
      blocks == 1 && !params.has_predicate() && params.timing_slot() < 0 && !opt_.trace_ &&
      !params.has_new_output() && (queued >= help_threshold_ || is_tiny(kernel));
  // With no task in flight at all there is nothing to wait for (the common case when every
  // task runs undeferred): the tracker need not even be asked.
  if (may_run_undeferred && (quiet() || (!tensors_must_wait(params, manual_scope) && !any_live(edeps)))) {
    // Nothing recorded in the tracker: the task has finished before anyone looks again.
    next_raw_++;
    ++n_submitted_;
    run_undeferred(kind, kernel, params, raw, type);
    return out;
  }

  // Claim the slot (back-pressure when the ring is full). It is published (raw id, fan-in
  // guard) once the task's dependencies are known.
  TaskSlot& s = acquire_slot(raw);
  const uint32_t idx = slot_index(raw);
  next_raw_++;
  s.kind = kind;
  s.kernel[0] = kind == TaskKind::AIC || kind == TaskKind::MIXED ? aic_kernel : -1;
  s.kernel[1] = kind == TaskKind::AIV || kind == TaskKind::MIXED ? aiv_kernel : -1;
  s.fn[0] = s.kernel[0] >= 0 ? kernels_[static_cast<size_t>(s.kernel[0])].fn : nullptr;
  s.fn[1] = s.kernel[1] >= 0 ? kernels_[static_cast<size_t>(s.kernel[1])].fn : nullptr;
  s.block_num = kind == TaskKind::DUMMY ? 1 : blocks;
  s.site_file = params.source_file();
  s.site_line = params.source_line();
  s.tensors.clear();
  s.scalars.clear();
  if (kind != TaskKind::DUMMY) {
    s.tensors.assign(params.tensors().begin(), params.tensors().end());
    s.scalars.assign(params.scalars().begin(), params.scalars().end());
  }
  bool untracked_write = false;
  const Tensor* pred_element = allocate_and_track(s, params, raw, manual_scope, out, untracked_write);
  publish(s, raw, params, gang, need, blocks);
  s.untracked_write = untracked_write;
  if (untracked_write) untracked_live_.fetch_add(1, std::memory_order_relaxed);
  for (const Tensor& t : s.tensors) keep_storage(s, t.storage);
  if (pred_element) keep_storage(s, pred_element->storage);

  // Edges: automatic ones (deduplicated), then explicit ones not already present. The guard
  // on fanin covers every candidate, so a producer retiring meanwhile cannot make this task
  // ready early; unused guard units are returned at the end.
  const size_t n_auto = dep_scratch_.size();
  const uint32_t candidates = static_cast<uint32_t>(n_auto + edeps.size());
  uint32_t edges_added = 0;
  if (candidates) {
    s.fanin.store(static_cast<int32_t>(1 + candidates), std::memory_order_relaxed);
    if (s.in_edges.capacity() < candidates) s.in_edges.reserve(candidates);  // nodes never move
  }
  for (size_t i = 0; i < n_auto; ++i) {
    if (add_edge(dep_scratch_[i], s, idx)) {
      ++auto_edges_;
      ++edges_added;
      if (opt_.trace_) trace_edges_.emplace_back(dep_scratch_[i], raw);
    }
  }
  for (const PTO2TaskId& d : edeps) {
    if (std::binary_search(dep_scratch_.begin(), dep_scratch_.begin() + static_cast<std::ptrdiff_t>(n_auto), d.raw)) continue;
    bool dup = false;
    for (size_t j = n_auto; j < dep_scratch_.size(); ++j) dup |= dep_scratch_[j] == d.raw;
    if (dup) continue;
    dep_scratch_.push_back(d.raw);
    if (add_edge(d.raw, s, idx)) {
      ++explicit_edges_;
      ++edges_added;
      if (opt_.trace_) trace_edges_.emplace_back(d.raw, raw);
    }
  }
  ++n_submitted_;
  if (kind == TaskKind::DUMMY) ++n_dummy_submitted_;
  if (opt_.trace_) trace_tasks_.emplace_back(raw, kind == TaskKind::AIC ? s.kernel[0] : s.kernel[1]);

  // Release the guard: 1 + the candidate edges that were not added.
  if (edges_added == 0) {  // no producer can touch fanin
    s.fanin.store(0, std::memory_order_relaxed);
    on_ready(idx, -1, nullptr, n_workers_);
  } else {
    const int32_t unused = static_cast<int32_t>(1 + candidates - edges_added);
    if (s.fanin.fetch_sub(unused, std::memory_order_acq_rel) == unused) on_ready(idx, -1, nullptr, n_workers_);
  }
  // Throttle (as OpenMP runtimes do): with plenty of ready work queued, run one task here
  // rather than let the queue grow while the workers cannot keep up.
  if (queued > help_threshold_) help_one();
  return out;
}

// Deferred path, before publishing: allocates the runtime outputs (into `out`) and records
// every access in the tracker, leaving the tasks to follow in dep_scratch_ (sorted, unique).
// Returns the predicate's element (kept alive like a tensor), or nullptr. An abort here (out
// of memory) leaves the slot unpublished: the id is simply never used.
const Tensor* Engine::allocate_and_track(TaskSlot& s, const Arg& params, uint64_t raw, bool manual_scope,
                                         TaskOutputTensors& out, bool& untracked_write) {
  for (uint32_t i = 0; i < s.tensors.size(); ++i) {
    if (params.dirs()[i] != PTO2ArgDir::OUTPUT_NEW) continue;
    Tensor& t = s.tensors[i];
    PTO2Storage* st = alloc_storage(t.nbytes());
    t.data = st->data;
    t.storage = st;
    scopes_.back().allocs.push_back(st);
    out.tensors_.push_back(t);
  }
  // The Arg's copy is hot in this core's cache; the slot's may still be on the core that ran
  // the slot's previous task. Runtime-allocated outputs exist only in the slot.
  const Tensor* ts = params.has_new_output() ? s.tensors.data() : params.tensors().data();
  untracked_write = track_tensors(ts, params.dirs().data(), s.tensors.size(), raw, manual_scope);
  if (!params.has_predicate() || !params.predicate().operand.data) return nullptr;
  // The predicate reads one element at dispatch: in AUTO scopes, order the task after that
  // element's writer like any other read.
  Tensor& e = pred_scratch_;
  e = params.predicate().operand;
  e.offset = params.predicate().element;
  for (uint32_t d = 0; d < e.ndims; ++d) e.shapes[d] = 1;
  if (!manual_scope && !e.manual_dep) {
    tracker_.access(e.data, Region::of(e), true, false, raw, dep_scratch_, [this](uint64_t r) { return is_live(r); });
    std::sort(dep_scratch_.begin(), dep_scratch_.end());
    dep_scratch_.erase(std::unique(dep_scratch_.begin(), dep_scratch_.end()), dep_scratch_.end());
  }
  return &e;
}

// Records the accesses of tensors ts[0..n) in the tracker and appends the live-or-not tasks
// they must follow to dep_scratch_ (sorted, deduplicated). True if a write goes untracked.
bool Engine::track_tensors(const Tensor* ts, const PTO2ArgDir* dirs, uint32_t n, uint64_t raw, bool manual_scope) {
  bool untracked_write = false;
  if (manual_scope) {  // nothing is tracked in a MANUAL scope
    for (uint32_t i = 0; i < n; ++i) untracked_write |= dirs[i] != PTO2ArgDir::INPUT;
    return untracked_write;
  }
  for (uint32_t i = 0; i < n; ++i) {
    const Tensor& t = ts[i];
    const PTO2ArgDir d = dirs[i];
    const bool read = d == PTO2ArgDir::INPUT || d == PTO2ArgDir::INOUT;
    const bool write = d != PTO2ArgDir::INPUT;
    if (d == PTO2ArgDir::NO_DEP || t.manual_dep || t.data == nullptr) {
      untracked_write |= write;
      continue;
    }
    tracker_.access(t.data, Region::of(t), read, write, raw, dep_scratch_, [this](uint64_t r) { return is_live(r); });
  }
  if (dep_scratch_.size() > 1) {
    std::sort(dep_scratch_.begin(), dep_scratch_.end());
    dep_scratch_.erase(std::unique(dep_scratch_.begin(), dep_scratch_.end()), dep_scratch_.end());
  }
  return untracked_write;
}

// True if a tracked tensor of `params` has a live conflicting access (see DepTracker::must_wait).
bool Engine::tensors_must_wait(const Arg& params, bool manual_scope) {
  if (manual_scope) return false;
  const auto live = [this](uint64_t r) { return is_live(r); };
  for (uint32_t i = 0; i < params.tensor_count(); ++i) {
    const Tensor& t = params.tensors()[i];
    const PTO2ArgDir d = params.dirs()[i];
    if (d == PTO2ArgDir::NO_DEP || t.manual_dep || t.data == nullptr) continue;
    if (tracker_.must_wait(t.data, Region::of(t), d != PTO2ArgDir::INPUT, live)) return true;
  }
  return false;
}

bool Engine::any_live(const pto2::SmallVec<PTO2TaskId, 8>& ids) {
  for (const PTO2TaskId& d : ids)
    if (is_live(d.raw)) return true;
  return false;
}

// Makes the claimed slot a live task: everything a worker reads once the task is ready, the
// fan-in guard (1: released by submit once the edges are in), then the id (release).
void Engine::publish(TaskSlot& s, uint64_t raw, const Arg& params, bool gang, const uint32_t* need, uint32_t blocks) {
  ++total_submitted_;
  s.sync_start = params.launch_spec.require_sync_start;
  s.gang = gang;
  s.need[0] = need[0];
  s.need[1] = need[1];
  s.has_pred = params.has_predicate();
  if (s.has_pred) s.pred = params.predicate();
  s.timing_slot = static_cast<int8_t>(params.timing_slot());
  s.untracked_write = false;
  s.storages.clear();
  s.fanout.store(nullptr, std::memory_order_relaxed);
  s.in_edges.clear();
  s.next_block.store(0, std::memory_order_relaxed);
  s.blocks_left.store(gang ? need[0] + need[1] : s.block_num, std::memory_order_relaxed);
  s.claimed[0].store(0, std::memory_order_relaxed);
  s.claimed[1].store(0, std::memory_order_relaxed);
  s.arrived.store(0, std::memory_order_relaxed);
  s.go.store(false, std::memory_order_relaxed);
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
  issued_raw_[(raw - 1) & ring_mask_] = raw;
  s.raw.store(raw, std::memory_order_release);
}

// The task holds a reference on a runtime-allocated storage until it retires.
void Engine::keep_storage(TaskSlot& s, PTO2Storage* storage) {
  if (!storage || storage->run_scoped || std::find(s.storages.begin(), s.storages.end(), storage) != s.storages.end()) return;
  MemoryPool::acquire(storage);
  s.storages.push_back(storage);
}

void Engine::wait_for_element(const Tensor& t, uint32_t ndims, const int64_t* idx) {
  if (failed()) throw RunAborted{};
  if (t.data == nullptr) return;
  if (ndims != t.ndims)
    abort_orchestration("get_tensor_data: " + std::to_string(ndims) + " indices for a tensor of rank " + std::to_string(t.ndims));
  for (uint32_t i = 0; i < ndims; ++i)
    if (idx[i] < 0 || idx[i] >= static_cast<int64_t>(t.shapes[i]))
      abort_orchestration("get_tensor_data: index " + std::to_string(idx[i]) + " out of range on axis " +
                          std::to_string(i) + " (extent " + std::to_string(t.shapes[i]) + ")");
  std::vector<uint64_t> writers;
  tracker_.writers_of(t.data, Region::element(t, idx), writers, [this](uint64_t r) { return is_live(r); });
  for (uint64_t w : writers)
    orchestrator_wait([&] { return !is_live(w); }, "the producer of a get_tensor_data element");
  if (untracked_live_.load(std::memory_order_acquire) > 0)
    orchestrator_wait([&] { return untracked_live_.load(std::memory_order_acquire) == 0; },
                      "untracked (manual) writers before get_tensor_data");
}

// ---------------------------------------------------------------- run

RunResult Engine::run(const OrchestrationEntry& entry, const ChipStorageTaskArgs& args) {
  std::lock_guard<std::mutex> run_lock(run_mu_);
  RunResult res;
  if (poisoned_) {
    res.message = "runtime unusable: a previous run deadlocked";
    return res;
  }
  failed_.store(false);
  fail_msg_.clear();
  n_submitted_ = n_dummy_submitted_ = auto_edges_ = explicit_edges_ = 0;
  trace_edges_.clear();
  trace_tasks_.clear();
  for (auto& v : trace_) v.clear();
  for (auto& ts : timing_) {
    ts.start.store(INT64_MAX);
    ts.end.store(0);
    ts.tasks.store(0);
  }
  std::vector<uint64_t> base(n_workers_ + 1);
  for (uint32_t w = 0; w <= n_workers_; ++w) {
    wstats_[w].executed = wstats_[w].skipped = wstats_[w].cancelled = wstats_[w].dummy = wstats_[w].undeferred = 0;
  }
  run_first_raw_ = next_raw_;
  if (opt_.race_check_ == RaceCheck::Off) race_.reset();
  else if (!race_) race_.reset(new RaceChecker);
  if (race_) race_->begin_run(next_raw_, args);
  untracked_live_.store(0);
  pool_.reset_peak();
  run_start_ns_ = now_ns();

  std::thread orch([&] {
    tl_current = this;
    scopes_.push_back(Scope{PTO2ScopeMode::AUTO, {}});
    try {
      entry(args);
    } catch (RunAborted&) {
    } catch (std::exception& e) {
      fail(std::string("orchestration entry threw: ") + e.what());
    } catch (...) {
      fail("orchestration entry threw an unknown exception");
    }
    while (scopes_.size() > 1) scope_end();
    // The outermost scope's tensors are released once the run's tasks have all finished.
    run_allocs_ = std::move(scopes_.back().allocs);
    scopes_.clear();
    tl_current = nullptr;
  });
  orch.join();

  // Wait for the tail, running ready tasks meanwhile (as an OpenMP master thread does at a
  // taskwait: the orchestrator's core is free now); detect lack of progress.
  uint64_t last = 0;
  int64_t last_t = now_ns();
  for (;;) {
    if (inflight() != 0 && help_one()) continue;
    uint32_t key = progress_.prepare();
    if (inflight() == 0) {
      progress_.cancel();
      break;
    }
    progress_.wait(key, 20000000);
    uint64_t p = 0;
    for (uint32_t w = 0; w <= n_workers_; ++w) p += wstats_[w].completed.load(std::memory_order_relaxed);
    const int64_t t = now_ns();
    if (p != last) {
      last = p;
      last_t = t;
    } else if (t - last_t > int64_t(opt_.deadlock_timeout_ms_) * 1000000) {
      bool busy = false;
      for (uint32_t w = 0; w < n_workers_; ++w) busy |= wstats_[w].busy.load();
      if (!busy && inflight() != 0) {
        std::string pending;
        int listed = 0;
        for (uint32_t i = 0; i < ring_size_ && listed < 8; ++i) {
          if (!slots_[i].free.load() && !slots_[i].done.load()) {
            pending += (listed ? ", " : "") + describe_slot(slots_[i], slots_[i].raw.load()) + " fanin=" +
                       std::to_string(slots_[i].fanin.load());
            ++listed;
          }
        }
        fail("deadlock: " + std::to_string(inflight()) + " task(s) can never run: " + pending);
        poisoned_ = true;
        break;
      }
      last_t = t;
    }
  }
  if (inflight() == 0) {  // (after a deadlock, stuck tasks may still reference them)
    for (PTO2Storage* st : run_allocs_) pool_.scope_release(st);
    run_allocs_.clear();
  }
  drain_released();
  tracker_.clear();

  res.wall_seconds = static_cast<double>(now_ns() - run_start_ns_) * 1e-9;
  res.tasks_submitted = n_submitted_;
  res.tasks_dummy = n_dummy_submitted_;
  res.auto_edges = auto_edges_;
  res.explicit_edges = explicit_edges_;
  for (uint32_t w = 0; w <= n_workers_; ++w) {
    res.tasks_executed += wstats_[w].executed + wstats_[w].undeferred;  // undeferred ones ran too
    res.tasks_skipped += wstats_[w].skipped;
    res.tasks_undeferred += wstats_[w].undeferred;
  }
  res.peak_bytes = pool_.peak_bytes();
  res.pool_bytes = pool_.pool_bytes();
  for (uint32_t k = 0; k < 16; ++k) {
    if (timing_[k].tasks.load() == 0) continue;
    res.timing_slots.push_back(TimingSlotSpan{k, timing_[k].tasks.load(),
                                              static_cast<double>(timing_[k].start.load() - run_start_ns_) * 1e-3,
                                              static_cast<double>(timing_[k].end.load() - run_start_ns_) * 1e-3});
  }
  {
    std::lock_guard<std::mutex> lk(fail_mu_);
    res.message = fail_msg_;
  }
  if (race_) {  // the run has finished: decide its races on the recorded graph
    res.races = race_->finish(kernels_, res.race_report, &res.race_pairs);
    if (res.races && opt_.race_check_ == RaceCheck::Error)
      res.message = res.message.empty() ? res.race_report : res.message + "\n\n" + res.race_report;
  }
  if (!res.ok() && res.message.empty()) res.message = "unknown failure";
  (void)kind_api;
  (void)kNone;
  return res;
}

}  // namespace pto2::detail
