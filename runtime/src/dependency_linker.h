// dependency_linker.h — dependency tracking for submission: the tracker's record of tensor
// accesses in AUTO scopes (dep_tracker.h), the producers a new task must follow, and the
// edges that link it into their fan-out lists.
//
//     linker.begin_task();
//     bool untracked = linker.track_tensors(ring, ts, dirs, n, raw, /*manual_scope=*/false);
//     // linker.producers(): the live-or-not tasks `raw` must follow (deduplicated)
//     uint32_t unlinked;
//     uint32_t added = linker.link_edges(ring, slot, raw, explicit_deps, unlinked);
//
// Orchestrator thread only, except the fan-out lists it links into (lock-free, closed by the
// retiring producer). "Live" is asked of the ring (TaskRing::is_live): the ring is passed in,
// not held, so no call reaches it through an extra pointer.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "dep_tracker.h"
#include "task_ring.h"

namespace pto2::detail {

class DependencyLinker {
 public:
  /// A new submission: no producers yet.
  void begin_task() { dep_scratch_.clear(); }
  /// The producers the current task was linked after: automatic (deduplicated), then the
  /// explicit ones link_edges added. The race checker verifies them.
  const std::vector<uint64_t>& producers() const { return dep_scratch_; }
  /// Links task `raw` (in slot `s`) after producers() (automatic) and `edeps` (explicit);
  /// returns the number of edges added, and in `unlinked` the producers not linked (already
  /// retired). Sets the fan-in to all the producers first: the caller subtracts `unlinked`
  /// (when not 0); with every producer linked, the task may be ready — even running — by the
  /// time this returns. While tracing (begin_run), every dependency found is recorded in
  /// trace_edges().
  uint32_t link_edges(TaskRing& ring, TaskSlot& s, uint64_t raw, const pto2::SmallVec<PTO2TaskId, 8>& edeps,
                      uint32_t& unlinked);
  /// Records the accesses of tensors ts[0..n) and appends the tasks they must follow to
  /// producers(). True if a write goes untracked (MANUAL scope, NO_DEP, manual_dep tensor).
  /// Defined (inline) in dependencies.cpp, for Engine::allocate_and_track.
  bool track_tensors(const TaskRing& ring, const Tensor* ts, const PTO2ArgDir* dirs, uint32_t n, uint64_t raw,
                     bool manual_scope);
  /// The element a predicate reads, as a one-element tensor (valid until the next call),
  /// recorded as a read in AUTO scopes; nullptr when `params` has no predicate operand.
  /// Most tasks have none: answered inline, without a call.
  const Tensor* track_predicate(const TaskRing& ring, const Arg& params, uint64_t raw, bool manual_scope) {
    if (!params.has_predicate() || !params.predicate().operand.data) return nullptr;
    return track_predicate_element(ring, params, raw, manual_scope);
  }
  /// A tracked tensor of `params` has a live conflicting access (see DepTracker::must_wait).
  /// Nothing is tracked in a MANUAL scope: answered inline, without a call (the short path
  /// asks on every submission).
  bool tensors_must_wait(const TaskRing& ring, const Arg& params, bool manual_scope) {
    return !manual_scope && tracked_tensors_must_wait(ring, params);
  }
  /// One of `ids` is live.
  static bool any_live(const TaskRing& ring, const pto2::SmallVec<PTO2TaskId, 8>& ids);
  /// The live tasks get_tensor_data must wait for before reading element `idx` of `t` (its
  /// writers), or before writing it (`for_write`: its readers too).
  void element_producers(const TaskRing& ring, const Tensor& t, const int64_t* idx, bool for_write,
                         std::vector<uint64_t>& out);
  /// Runtime storage at `data` was freed: forget its accesses.
  void forget(const void* data) { tracker_.erase(data); }
  /// The run is over: forget every access.
  void end_run() { tracker_.clear(); }

  // ---- counts of the current run
  /// A run starts (`trace`: record the dependencies found).
  void begin_run(bool trace) {
    auto_edges_ = explicit_edges_ = 0;
    trace_edges_.clear();
    trace_ = trace;
  }
  uint64_t auto_edges() const { return auto_edges_; }
  uint64_t explicit_edges() const { return explicit_edges_; }
  /// producer -> consumer, every dependency found, linked or not (trace only).
  const std::vector<std::pair<uint64_t, uint64_t>>& trace_edges() const { return trace_edges_; }

 private:
  static bool add_edge(TaskRing& ring, uint64_t producer, EdgeLink link, EdgeLink* next);
  /// What the tracker counts as live while recording accesses: the live tasks; while tracing,
  /// every task recorded (nothing is pruned), so the dependencies found — the trace's arrows,
  /// its critical path — are the program's, not the schedule's (a producer that finished
  /// before its consumer was submitted is still found; link_edges links no edge to it).
  auto recording_live(const TaskRing& ring) const {
    return [&ring, tracing = trace_](uint64_t r) { return tracing || ring.is_live(r); };
  }
  bool tracked_tensors_must_wait(const TaskRing& ring, const Arg& params);
  const Tensor* track_predicate_element(const TaskRing& ring, const Arg& params, uint64_t raw, bool manual_scope);

  DepTracker tracker_;
  std::vector<uint64_t> dep_scratch_;  // the producers of the task being submitted
  Tensor pred_scratch_ = pto2::TensorFactory::blank();  // the element a predicate reads
  uint64_t auto_edges_ = 0, explicit_edges_ = 0;
  std::vector<std::pair<uint64_t, uint64_t>> trace_edges_;
  bool trace_ = false;
};

}  // namespace pto2::detail
