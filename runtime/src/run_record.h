// run_record.h — what a run leaves behind for the trace and the timing slots: per thread, the
// blocks it ran and the tasks it skipped; on the orchestrator's track, the submissions and
// scopes; per timing slot, the span of its tasks.
//
//     rec.begin_run(/*trace=*/true);
//     rec.start(now_ns());
//     rec.block(worker, TraceEvent{raw, kernel, 0, t0, t1});   // that thread only
//     rec.time_slot(3, t0, t1, /*first_block=*/true);           // any thread
//     rec.slot_spans();                                         // RunResult::timing_slots
//
// The per-thread buffers are written only while tracing, each by its own thread; the timing
// slots by any thread running a task that has one (each slot is a cache line of its own).
// Read after the run (trace.cpp, Engine::run).
#pragma once

#include <atomic>
#include <climits>
#include <cstdint>
#include <utility>
#include <vector>

#include "pto_orchestration_api.h"

namespace pto2::detail {

/// One block of a task run by one thread (trace only).
struct TraceEvent {
  uint64_t raw;
  int32_t kernel;
  uint32_t block;
  int64_t start_ns, end_ns;
};

// A task retired without running because its predicate was false (trace only).
struct SkipEvent {
  uint64_t raw;
  int32_t kernel;
  int64_t ns;
  int64_t element, target;  // the predicate: operand element (absolute offset) <op> target
  PredicateOp op;
};

// A span on the orchestrator's track (trace only): one rt_submit_* call or one PTO2_SCOPE.
struct OrchSpan {
  enum Kind : uint8_t { kSubmit, kScope } kind;
  uint8_t mode;     // kScope: PTO2ScopeMode
  uint64_t raw;     // kSubmit: the task id
  int64_t start_ns, end_ns;
};

class RunRecord {
 public:
  static constexpr uint32_t kSlots = 16;  // timing slots 0..15
  struct alignas(64) SlotTiming {
    std::atomic<int64_t> start{INT64_MAX};
    std::atomic<int64_t> end{0};
    std::atomic<uint64_t> tasks{0};
  };

  /// Buffers for `threads` threads (workers, the orchestrator, gang helpers), by stats index.
  void init(uint32_t threads) {
    blocks_.resize(threads);
    skips_.resize(threads);
  }
  /// A run begins: forget the last one (`trace`: its per-thread buffers too).
  void begin_run(bool trace) {
    tasks_.clear();
    sites_.clear();
    orch_.clear();
    if (trace) {
      for (auto& v : blocks_) v.clear();
      for (auto& v : skips_) v.clear();
    }
    for (auto& ts : timing_) {
      ts.start.store(INT64_MAX, std::memory_order_relaxed);
      ts.end.store(0, std::memory_order_relaxed);
      ts.tasks.store(0, std::memory_order_relaxed);
    }
  }
  /// The run's entry starts now (`ns`): trace times and slot spans count from here.
  void start(int64_t ns) { start_ns_ = ns; }
  int64_t start_ns() const { return start_ns_; }

  // ---- per thread (trace only; thread `thread` only)
  void block(uint32_t thread, const TraceEvent& e) { blocks_[thread].push_back(e); }
  void skip(uint32_t thread, const SkipEvent& e) { skips_[thread].push_back(e); }

  // ---- orchestrator (trace only)
  /// Task `raw` of kernel `kernel` (-1: dummy) was submitted over [t0, t1), from DSL line
  /// `file`:`line` when known.
  void submission(uint64_t raw, int32_t kernel, const char* file, int32_t line, int64_t t0, int64_t t1) {
    tasks_.emplace_back(raw, kernel);
    if (file && line > 0) sites_.emplace_back(raw, std::make_pair(file, line));
    orch_.push_back(OrchSpan{OrchSpan::kSubmit, 0, raw, t0, t1});
  }
  /// A PTO2_SCOPE of `mode` spanned [t0, t1).
  void scope(PTO2ScopeMode mode, int64_t t0, int64_t t1) {
    orch_.push_back(OrchSpan{OrchSpan::kScope, static_cast<uint8_t>(mode), 0, t0, t1});
  }

  // ---- timing slots (any thread)
  /// A block of a task in timing slot `slot` ran over [t0, t1] (`first_block`: count the task).
  void time_slot(int slot, int64_t t0, int64_t t1, bool first_block) {
    SlotTiming& tm = timing_[slot];
    int64_t cur = tm.start.load(std::memory_order_relaxed);
    while (t0 < cur && !tm.start.compare_exchange_weak(cur, t0)) {}
    cur = tm.end.load(std::memory_order_relaxed);
    while (t1 > cur && !tm.end.compare_exchange_weak(cur, t1)) {}
    if (first_block) tm.tasks.fetch_add(1, std::memory_order_relaxed);
  }
  /// The slots that had tasks, in microseconds from the run's start.
  std::vector<TimingSlotSpan> slot_spans() const {
    std::vector<TimingSlotSpan> out;
    for (uint32_t k = 0; k < kSlots; ++k) {
      if (timing_[k].tasks.load() == 0) continue;
      out.push_back(TimingSlotSpan{k, timing_[k].tasks.load(),
                                   static_cast<double>(timing_[k].start.load() - start_ns_) * 1e-3,
                                   static_cast<double>(timing_[k].end.load() - start_ns_) * 1e-3});
    }
    return out;
  }

  // ---- reading (after the run)
  const std::vector<std::vector<TraceEvent>>& blocks() const { return blocks_; }
  const std::vector<std::vector<SkipEvent>>& skips() const { return skips_; }
  const std::vector<OrchSpan>& orchestrator() const { return orch_; }
  /// raw -> kernel id, for the names of submission spans.
  const std::vector<std::pair<uint64_t, int32_t>>& tasks() const { return tasks_; }
  /// raw -> the DSL line of its submission (PTO2_SOURCE_SITE; the file name is a literal of
  /// the generated orchestration), for the trace's "source" args.
  const std::vector<std::pair<uint64_t, std::pair<const char*, int32_t>>>& sites() const { return sites_; }
  const SlotTiming& slot(uint32_t k) const { return timing_[k]; }

 private:
  int64_t start_ns_ = 0;
  std::vector<std::vector<TraceEvent>> blocks_;  // per thread
  std::vector<std::vector<SkipEvent>> skips_;    // per thread, like blocks_
  std::vector<std::pair<uint64_t, int32_t>> tasks_;
  std::vector<std::pair<uint64_t, std::pair<const char*, int32_t>>> sites_;
  std::vector<OrchSpan> orch_;
  SlotTiming timing_[kSlots];
};

}  // namespace pto2::detail
