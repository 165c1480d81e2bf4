// dependencies.cpp — dependency tracking (DependencyLinker, dependency_linker.h): the
// tracker's record of tensor accesses (AUTO scopes), the edges that link a new task into its
// producers' fan-out lists; and the Engine's use of it at submission (allocate_and_track) and
// in the waits of get_tensor_data. All on the orchestrator thread, except the fan-out lists
// (lock-free, closed by the retiring producer).
#include <algorithm>

#include "engine.h"
#include "tensor_bytes.h"

namespace pto2::detail {

// Links node `link` (the consumer's; its next word is `*next`) into the producer's fan-out
// list (the consumer's fanin already counts this edge: link_edges). False: the producer
// already retired (or its slot holds a later task) — no edge, the node unused.
// The node's next word is written before the release CAS that publishes it; the retiring
// thread's acquire exchange of the list (Completion::retire) therefore reads it intact.
bool DependencyLinker::add_edge(TaskRing& ring, uint64_t producer, EdgeLink link, EdgeLink* next) {
  // Retired (or finished long ago): asked of the ring's compact arrays, not the producer's
  // slot, whose line the retiring worker has just written (a cross-core miss per edge).
  if (!ring.is_live(producer)) return false;
  TaskSlot& p = ring.slot_of(producer);
  EdgeLink head = p.fanout.load(std::memory_order_acquire);
  do {
    if (head == kClosed) return false;
    *next = head;
  } while (!p.fanout.compare_exchange_weak(head, link, std::memory_order_acq_rel, std::memory_order_acquire));
  return true;
}

namespace {
// Up to this many producers are deduplicated in place, in the order found (a task has a
// handful: comparing each with those kept is cheaper than sorting); more are sorted.
constexpr size_t kSmallDeps = 8;

// A 64-bit filter of task ids by their low 6 bits: an id whose bit is not yet set repeats no
// id seen before, so only possible repeats are compared (a task's producers are mostly
// distinct and close together: different bits).
inline uint64_t low_bit(uint64_t id) { return uint64_t{1} << (id & 63); }

// Deduplicates a task's producers (sorted when there are more than kSmallDeps), keeping the
// first of each in order. Most tasks have one to three producers (a chain, a tree, a stencil's
// neighbours): those are answered inline, by direct comparisons, without a call.
void dedup_producers_slow(std::vector<uint64_t>& v);
inline void dedup_producers(std::vector<uint64_t>& v) {
  const size_t n = v.size();
  if (n <= 1) return;
  uint64_t* a = v.data();
  if (n == 2) {
    if (a[1] == a[0]) v.pop_back();
  } else if (n == 3) {
    if (a[1] == a[0]) {  // [x, x, y] -> [x, y]; [x, x, x] -> [x]
      a[1] = a[2];
      v.pop_back();
      if (a[1] == a[0]) v.pop_back();
    } else if (a[2] == a[0] || a[2] == a[1]) {
      v.pop_back();
    }
  } else {
    dedup_producers_slow(v);
  }
}
__attribute__((noinline)) void dedup_producers_slow(std::vector<uint64_t>& v) {
  const size_t n = v.size();
  if (n > kSmallDeps) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return;
  }
  uint64_t* a = v.data();
  size_t kept = 1;
  uint64_t seen = low_bit(a[0]);
  for (size_t i = 1; i < n; ++i) {
    const uint64_t x = a[i];
    if (seen & low_bit(x)) {  // maybe a repeat: compare with those kept
      size_t j = 0;
      while (j < kept && a[j] != x) ++j;
      if (j < kept) continue;
    }
    seen |= low_bit(x);
    a[kept++] = x;
  }
  v.resize(kept);
}

// True if `x` is among the producers v[0..n) that dedup_producers left.
bool has_producer(const std::vector<uint64_t>& v, size_t n, uint64_t x) {
  const auto end = v.begin() + static_cast<std::ptrdiff_t>(n);
  return n > kSmallDeps ? std::binary_search(v.begin(), end, x) : std::find(v.begin(), end, x) != end;
}
}  // namespace

// Automatic edges (dep_scratch_, deduplicated), then explicit ones not already present.
// The nodes: the first TaskSlot::kInlineEdges on the slot's line 0 (edge_inline), then the
// slot's in_edges, which only grows. A node is reused once the slot's previous occupant was
// ready (its producers, the only readers of its nodes, read them before the decrements that
// made it so) and then retired.
uint32_t DependencyLinker::link_edges(TaskRing& ring, TaskSlot& s, uint64_t raw, const pto2::SmallVec<PTO2TaskId, 8>& edeps,
                                      uint32_t& unlinked) {
  const uint32_t idx = ring.index_of(raw);
  const size_t n_auto = dep_scratch_.size();
  // The explicit ids join the producers first, without a repeat (no atomics in this loop, so
  // nothing is reloaded per id): an id repeating an earlier one is skipped, compared with the
  // earlier ids in place (an earlier one that was automatic makes this one automatic too).
  const PTO2TaskId* ex = edeps.data();
  uint64_t seen = 0;  // low_bit filter of the explicit ids so far: most need no comparison
  for (uint32_t k = 0, n_ex = edeps.size(); k < n_ex; ++k) {
    const uint64_t d = ex[k].raw;
    if (n_auto && has_producer(dep_scratch_, n_auto, d)) continue;
    if (seen & low_bit(d)) {
      uint32_t j = 0;
      while (j < k && ex[j].raw != d) ++j;
      if (j < k) continue;
    }
    seen |= low_bit(d);
    dep_scratch_.push_back(d);
  }
  const size_t n_all = dep_scratch_.size();
  const uint64_t* producers = dep_scratch_.data();
  // Fan-in: every producer, before any is linked (so none can make the task ready early: a
  // linked producer's retirement decrements it once; the caller subtracts `unlinked`). Relaxed:
  // the releasing CAS of each edge publishes it, with every other write to the slot, to the
  // thread that retires that producer (acquire exchange of its list); the decrements are
  // read-modify-writes of one variable, so the one reaching 0 has seen them all. When every
  // producer is linked, the last CAS is therefore this thread's last write the consumer needs.
  s.fanin.store(static_cast<int32_t>(n_all), std::memory_order_relaxed);
  // Line 10 (the vector's header) only for a task with more producers than inline nodes.
  constexpr uint32_t kInline = TaskSlot::kInlineEdges;
  EdgeNode* more = nullptr;
  if (n_all > kInline) {
    if (s.in_edges.size() < n_all - kInline) s.in_edges.resize(n_all - kInline);  // nodes never move while linked
    more = s.in_edges.data();
  }
  // The trace records every dependency found, also one whose producer already retired (no
  // edge is linked then): its flow arrows and critical path must not depend on the schedule.
  if (trace_)
    for (size_t i = 0; i < n_all; ++i) trace_edges_.emplace_back(producers[i], raw);
  // Node `k` (the k-th edge added): its link and where its next word is.
  const auto add = [&](uint64_t producer, uint32_t k) {
    if (k < kInline) return add_edge(ring, producer, reinterpret_cast<EdgeLink>(&s.edge_inline[k]), &s.edge_inline[k]);
    EdgeNode& n = more[k - kInline];
    n.consumer = idx;
    return add_edge(ring, producer, reinterpret_cast<EdgeLink>(&n) + kOverflowTag, &n.next);
  };
  uint32_t edges_added = 0;
  for (size_t i = 0; i < n_auto; ++i) edges_added += add(producers[i], edges_added);
  const uint32_t auto_added = edges_added;
  for (size_t i = n_auto; i < n_all; ++i) edges_added += add(producers[i], edges_added);
  auto_edges_ += auto_added;
  explicit_edges_ += edges_added - auto_added;
  unlinked = static_cast<uint32_t>(n_all) - edges_added;
  return edges_added;
}

// Records the accesses of tensors ts[0..n) in the tracker and appends the live-or-not tasks
// they must follow to dep_scratch_ (deduplicated). True if a write goes untracked.
// Inlined into allocate_and_track, its only caller: one call (and its saving and restoring of
// registers) less per submission.
__attribute__((always_inline)) inline bool DependencyLinker::track_tensors(const TaskRing& ring, const Tensor* ts, const PTO2ArgDir* dirs, uint32_t n,
                                     uint64_t raw, bool manual_scope) {
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
    tracker_.access(t, read, write, raw, dep_scratch_, recording_live(ring));
  }
  dedup_producers(dep_scratch_);
  return untracked_write;
}

// Deferred path, before publishing: allocates the runtime outputs (into `out`) and records
// every access in the tracker, leaving the tasks to follow in linker_.producers() (unique).
// Returns the predicate's element (kept alive like a tensor), or nullptr. An abort here (out
// of memory) leaves the slot unpublished: the id is simply never used.
const Tensor* Engine::allocate_and_track(TaskSlot& s, const Arg& params, uint64_t raw, bool manual_scope,
                                         TaskOutputTensors& out, bool& untracked_write) {
  for (uint32_t i = 0; params.has_new_output() && i < s.tensor_count(); ++i) {
    if (params.dirs()[i] != PTO2ArgDir::OUTPUT_NEW) continue;
    Tensor& t = s.tensors[i];
    size_t bytes = 0;  // Arg::add_output(TensorCreateInfo) does not check the shape's size
    if (!checked_tensor_bytes(t.shapes, t.ndims, t.dtype, &bytes))
      abort_orchestration(too_large_tensor(t.shapes, t.ndims, t.dtype, opt_.memory_limit_));
    PTO2Storage* st = alloc_storage(bytes);
    t.data = st->data;
    t.storage = st;
    scopes_.adopt(st);
    out.tensors_.push_back(t);
  }
  // The Arg's copy is hot in this core's cache; the slot's may still be on the core that ran
  // the slot's previous task. Runtime-allocated outputs exist only in the slot.
  const Tensor* ts = params.has_new_output() ? s.tensors.data() : params.tensors().data();
  untracked_write = linker_.track_tensors(ring_, ts, params.dirs().data(), s.tensor_count(), raw, manual_scope);
  return linker_.track_predicate(ring_, params, raw, manual_scope);
}

// (A predicate with an operand: track_predicate answers the others inline.)
const Tensor* DependencyLinker::track_predicate_element(const TaskRing& ring, const Arg& params, uint64_t raw,
                                                        bool manual_scope) {
  // The predicate reads one element at dispatch: in AUTO scopes, order the task after that
  // element's writer like any other read.
  Tensor& e = pred_scratch_;
  e = params.predicate().operand;
  e.offset = params.predicate().element;
  for (uint32_t d = 0; d < e.ndims; ++d) e.shapes[d] = 1;
  if (!manual_scope && !e.manual_dep) {
    tracker_.access(e, true, false, raw, dep_scratch_, recording_live(ring));
    dedup_producers(dep_scratch_);
  }
  return &e;
}

// True if a tracked tensor of `params` has a live conflicting access (see DepTracker::must_wait).
// (AUTO scope: tensors_must_wait answers MANUAL ones inline.)
bool DependencyLinker::tracked_tensors_must_wait(const TaskRing& ring, const Arg& params) {
  const auto live = [&ring](uint64_t r) { return ring.is_live(r); };
  for (uint32_t i = 0; i < params.tensor_count(); ++i) {
    const Tensor& t = params.tensors()[i];
    const PTO2ArgDir d = params.dirs()[i];
    if (d == PTO2ArgDir::NO_DEP || t.manual_dep || t.data == nullptr) continue;
    if (tracker_.must_wait(t.data, Region::of(t), d != PTO2ArgDir::INPUT, live)) return true;
  }
  return false;
}

bool DependencyLinker::any_live(const TaskRing& ring, const pto2::SmallVec<PTO2TaskId, 8>& ids) {
  for (const PTO2TaskId& d : ids)
    if (ring.is_live(d.raw)) return true;
  return false;
}

void DependencyLinker::element_producers(const TaskRing& ring, const Tensor& t, const int64_t* idx, bool for_write,
                                         std::vector<uint64_t>& out) {
  const auto live = [&ring](uint64_t r) { return ring.is_live(r); };
  if (for_write) tracker_.accessors_of(t.data, Region::element(t, idx), out, live);
  else tracker_.writers_of(t.data, Region::element(t, idx), out, live);
}

namespace {
// The element's first and one-past-last byte from `data`, exactly; false when they do not fit int64
// (strides or an offset written by hand: Tensor's fields are public).
bool element_bytes(const Tensor& t, const int64_t* idx, __int128* first, __int128* end) {
  __int128 off = t.offset;
  for (uint32_t i = 0; i < t.ndims; ++i) off += static_cast<__int128>(idx[i]) * t.strides[i];
  const __int128 es = static_cast<__int128>(dtype_size(t.dtype));
  *first = off * es;
  *end = *first + es;
  return *first >= INT64_MIN && *end <= INT64_MAX;
}
}  // namespace

bool element_index_in_range(const Tensor& t, uint32_t ndims, const int64_t* idx, bool in_run) {
  if (ndims != t.ndims || t.ndims > PTO2_MAX_DIMS || !valid_dtype(t.dtype)) return false;
  for (uint32_t i = 0; i < ndims; ++i)
    if (idx[i] < 0 || idx[i] >= static_cast<int64_t>(t.shapes[i])) return false;
  __int128 first = 0, end = 0;
  if (!element_bytes(t, idx, &first, &end)) return false;
  // A runtime-allocated tensor's storage knows its size (external memory's is the caller's to know).
  if (in_run && t.storage && (first < 0 || end > static_cast<__int128>(t.storage->bytes))) return false;
  return true;
}

std::string element_index_error(const Tensor& t, uint32_t ndims, const int64_t* idx, bool for_write, const char* file,
                                int32_t line) {
  // The DSL line (when generated code passes it) and the caller's name.
  const std::string site = file && line > 0 ? std::string(file) + ":" + std::to_string(line) + ": " : std::string();
  const std::string api = site + (for_write ? "set_tensor_data" : "get_tensor_data");
  if (t.ndims > PTO2_MAX_DIMS)
    return api + ": the tensor's rank (ndims) is " + std::to_string(t.ndims) + ", above PTO2_MAX_DIMS (" +
           std::to_string(PTO2_MAX_DIMS) + "; a field written by hand?)";
  if (ndims != t.ndims) return api + ": " + std::to_string(ndims) + " indices for a tensor of rank " + std::to_string(t.ndims);
  if (!valid_dtype(t.dtype)) return api + ": the tensor's " + invalid_dtype_text(t.dtype);
  for (uint32_t i = 0; i < ndims; ++i)
    if (idx[i] < 0 || idx[i] >= static_cast<int64_t>(t.shapes[i]))
      return api + ": index " + std::to_string(idx[i]) + " out of range on axis " + std::to_string(i) + " (extent " +
             std::to_string(t.shapes[i]) + ")";
  __int128 first = 0, end = 0;
  if (!element_bytes(t, idx, &first, &end))
    return api + ": the element's byte offset overflows int64 (tensor offset " + std::to_string(t.offset) +
           " and strides written by hand?)";
  if (t.storage)
    return api + ": the element lies at bytes [" + std::to_string(static_cast<int64_t>(first)) + ", " +
           std::to_string(static_cast<int64_t>(end)) + ") of a runtime-allocated tensor whose storage has " +
           std::to_string(t.storage->bytes) + " bytes (offset or strides written by hand?)";
  return api + ": invalid element";
}

void Engine::wait_for_element(const Tensor& t, uint32_t ndims, const int64_t* idx, bool for_write, const char* file,
                              int32_t line) {
  if (failed()) throw RunAborted{};
  if (t.data == nullptr) return;
  if (!element_index_in_range(t, ndims, idx, /*in_run=*/true)) abort_orchestration(element_index_error(t, ndims, idx, for_write, file, line));
  std::vector<uint64_t> writers;   // set_tensor_data also waits for the element's readers
  linker_.element_producers(ring_, t, idx, for_write, writers);
  for (uint64_t w : writers)
    orchestrator_wait([&] { return !is_live(w); }, "the producer of a get_tensor_data element");
  untracked_.wait_all([this](uint64_t r) { return is_live(r); }, [&](uint64_t r) {
    orchestrator_wait([&] { return !is_live(r); }, "untracked (manual) writers before get_tensor_data");
  });
}

}  // namespace pto2::detail
