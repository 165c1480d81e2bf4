// race_checker.h — finds missing dependencies: conflicting tensor accesses no edge orders.
//
// With RuntimeOptions::race_check on, the engine tells the checker about every submission
// (its tensor accesses, explicit dependencies, scope mode and DSL source line), every runtime
// allocation, every get_tensor_data wait, every task skipped by its predicate, and the boxes
// kernels load and store (pto2_note_access: compared instead of the whole argument). At the end
// of the run the checker reports each pair of accesses to overlapping regions of one storage,
// at least one a write, whose tasks the dependency graph does not order.
//
// The verdict is schedule-independent: it is decided on the logical happens-before graph,
// never on what ran when. Its edges are
//   - explicit edges (set_dependencies), also to tasks that had already finished;
//   - automatic edges: a shadow DepTracker that treats every task as live, i.e. the edges the
//     runtime's tracker would add if nothing had finished yet (the runtime drops an edge only
//     to a finished task, so every such edge holds in every schedule);
//   - get_tensor_data waits: a sync node after the element's tracked writers and every task
//     with an untracked write submitted so far, before every later task.
// Scopes add no order of their own in this runtime (a MANUAL scope only stops tracking), and
// undeferred execution, ring back-pressure and timing add none either: they depend on the
// schedule. Two accesses that are both automatically tracked are ordered by construction of
// the tracker, so only pairs with an untracked side (MANUAL scope, NO_DEP argument,
// manual_dep tensor) need a reachability query.
//
// Cost: recording is O(1) per access plus the shadow tracker (as the runtime's, O(log n +
// overlapping regions)). The end-of-run check keeps per storage an interval index of access
// histories; an access is compared with the histories it overlaps, and a write retires the
// accesses it covers and is ordered after. A query "does a reach b" is a backward search from
// b over predecessors in decreasing task order, resumed (not restarted) for every earlier a of
// the same b, so each b costs O(its ancestors newer than the oldest access it must be ordered
// after). Memory: O(tasks + edges + accesses).
#pragma once

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "dep_tracker.h"
#include "pto_orchestration_api.h"
#include "region.h"

namespace pto2::detail {

struct KernelInfo;

/// One run's access log and dependency graph, and the end-of-run check.
///
///     RaceChecker rc;
///     rc.begin_run(first_raw, args);
///     rc.on_submit(raw, kind, kernels, params, out, manual_scope);  // per submission
///     std::string report; uint64_t n = rc.finish(kernels, report);  // after the run
class RaceChecker {
 public:
  /// Starts a run whose first task id is `first_raw`; `args` names the external tensors.
  void begin_run(uint64_t first_raw, const ChipStorageTaskArgs& args);
  /// A runtime allocation at `data`: a new storage from now on (the pool reuses addresses
  /// only after every task of the previous owner retired, which orders them).
  void on_alloc(const void* data);
  /// alloc_tensors returned `out` (names the storages in reports).
  void on_alloc_tensors(const TaskOutputTensors& out);
  // The DSL names of an alloc_tensors result's tensors, in order (pto2_name_tensors).
  void on_tensor_names(const TaskOutputTensors& out, std::initializer_list<const char*> names);
  /// A submission that got task id `raw` (dummy and undeferred tasks too). `kind` is a
  /// TaskKind value; `kernels` = {AIC, AIV} ids (-1 none); `out` holds runtime-allocated outputs.
  void on_submit(uint64_t raw, int kind, const int32_t* kernels, const Arg& params, const TaskOutputTensors& out,
                 bool manual_scope);
  /// After on_submit(raw, ...): `deps` are the producers the runtime linked task `raw` after
  /// (its tracker's automatic ones plus explicit ones; empty if it ran undeferred). Every
  /// automatic edge of the shadow tracker whose producer is still live (`live(raw)`) must be
  /// among them, or the schedule-independent verdict above rests on an order the run does not
  /// have: such an edge is recorded and finish() reports it as a race (the runtime's tracker
  /// lost a dependency). A producer that already finished orders itself.
  ///     rc.on_runtime_edges(raw, engine.last_submit_deps(), [&](uint64_t r) { return engine.task_live(r); });
  template <class IsLive>
  void on_runtime_edges(uint64_t raw, const std::vector<uint64_t>& deps, IsLive&& live) {
    const uint32_t n = node_of_raw(raw);
    if (n == UINT32_MAX) return;
    for (uint32_t i = nodes_[n].pred_begin; i < nodes_[n].pred_end; ++i) {
      if (pred_kind_[i] != kAutoEdge) continue;
      const uint64_t p = nodes_[preds_[i]].raw;
      if (p == 0 || std::find(deps.begin(), deps.end(), p) != deps.end() || !live(p)) continue;
      missed_.emplace_back(preds_[i], n);
    }
  }
  /// get_tensor_data(t, idx) returned: the orchestrator waited for the element's writers and
  /// every untracked writer so far.
  void on_sync(const Tensor& t, const int64_t* idx);
  /// Task `raw` was retired without running (predicate false). Any thread.
  void on_skipped(uint64_t raw);
  /// The kernel of task `raw` touched region `r` of its argument `arg` (pto2_note_access).
  /// Any thread.
  void on_kernel_access(uint64_t raw, uint32_t arg, const Region& r, bool write, bool atomic = false);
  /// Checks the run; returns the number of unordered conflicting task pairs and writes their
  /// report (empty when none).
  uint64_t finish(const std::vector<KernelInfo>& kernels, std::string& report,
                  std::vector<std::pair<uint64_t, uint64_t>>* pairs = nullptr);
  /// The recorded task graph of the last run as Graphviz DOT (task_graph.cpp): one node per
  /// task (kernel, core type, task number, DSL line; barriers and predicate-skipped tasks
  /// drawn apart), edges styled by kind (automatic, explicit deps=, through a get_tensor_data
  /// wait). Call after finish().
  std::string dot(const std::vector<KernelInfo>& kernels) const;

 private:
  struct Node {
    uint64_t raw = 0;  // 0: a get_tensor_data sync node
    int32_t kernel[2] = {-1, -1};
    int kind = 0;
    const char* file = nullptr;
    int32_t line = 0;
    uint32_t pred_begin = 0, pred_end = 0;  // range in preds_
    bool skipped = false;
  };
  struct Access {
    uint32_t node;
    uint32_t storage;
    uint32_t arg;     // argument slot (UINT32_MAX: the predicate's element)
    bool write;
    bool tracked;     // automatically tracked (AUTO scope, not NO_DEP, not manual_dep)
    bool no_dep;      // a NO_DEP argument (pl.no_dep)
    bool from_kernel; // the box the kernel reported (pto2_note_access), not the whole argument
    Region region;
    bool atomic = false;  // an atomic add (pto2_note_atomic_add): commutes with another one
  };
  struct KernelNote {  // one pto2_note_access / pto2_note_atomic_add
    uint64_t raw;
    uint32_t arg;
    bool write;
    Region region;
    bool atomic = false;
  };
  struct StorageInfo {
    const void* data = nullptr;
    int32_t ext_arg = -1;           // orch_args.tensor(i), or -1
    uint64_t created_by = 0;        // task whose runtime output it is, or 0
    bool from_alloc_tensors = false;
    const char* name = nullptr;     // its DSL name (a string literal of the generated code), or null
    DataType dtype = DataType::FLOAT32;
  };

  uint32_t storage_of(const Tensor& t);
  uint32_t node_of_raw(uint64_t raw) const;
  uint32_t add_node(uint64_t raw);
  // Edge kinds, for the task graph (write_dot): automatic (the tracker), explicit (deps=),
  // and orders through a get_tensor_data wait.
  enum EdgeKind : uint8_t { kAutoEdge = 0, kExplicitEdge = 1, kSyncEdge = 2 };
  void add_pred(uint32_t pred, uint8_t kind = kAutoEdge) {
    preds_.push_back(pred);
    pred_kind_.push_back(kind);
  }
  std::string describe_node(uint32_t n, const std::vector<KernelInfo>& kernels) const;
  std::string describe_access(const Access& a) const;
  std::string site(uint32_t n) const;

  uint64_t first_raw_ = 1;
  /// Task `raw`'s number within the run, from 1 (what reports and graphs call it; Engine's
  /// messages and traces count the same way, SubmitState::number).
  uint64_t number(uint64_t raw) const { return raw - first_raw_ + 1; }
  std::vector<Node> nodes_;
  std::vector<uint32_t> preds_;
  std::vector<uint8_t> pred_kind_;     // EdgeKind of each preds_ entry
  std::vector<uint32_t> node_by_raw_;  // raw - first_raw_ -> node (UINT32_MAX: none)
  std::vector<Access> accesses_;
  std::vector<StorageInfo> storages_;
  std::unordered_map<const void*, uint32_t> storage_by_data_;
  std::vector<const void*> ext_data_;
  DepTracker shadow_;                 // keys: storage index + 1; task ids: node index + 1
  std::vector<uint64_t> scratch_;
  std::vector<uint32_t> untracked_writers_;  // since the last sync node
  uint32_t last_sync_ = UINT32_MAX;
  std::mutex skipped_mu_;  // (also guards notes_)
  std::vector<uint64_t> skipped_;
  std::vector<KernelNote> notes_;
  // Shadow edges (producer node, consumer node) the runtime did not link while the producer
  // was live (on_runtime_edges): reported by finish().
  std::vector<std::pair<uint32_t, uint32_t>> missed_;
  bool counted_ = false;  // this run is in pto2::race_checking_runs
  std::vector<Access> effective_accesses();
};

}  // namespace pto2::detail
