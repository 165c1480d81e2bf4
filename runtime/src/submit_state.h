// submit_state.h — the submission part: the orchestrator's submission counters (the next
// task id, the tasks of the run and of the Runtime's life in the ring, published for
// Runtime::progress, what the throttle remembers between submissions), and the steps of a
// submission that need no other part's waiting or failing: validation, claiming a free slot,
// filling it and publishing it.
//
//     SubmitState::Launch launch;
//     if (!SubmitState::plain_valid(kind, aic, aiv, params, raw, kernels, workers))
//       if (std::string err = st.check(kind, aic, aiv, params, api, raw, kernels, workers, cores, clusters, launch);
//           !err.empty()) abort(err);
//     TaskSlot* s = SubmitState::free_slot(ring, raw);   // nullptr: the ring is full (the caller waits)
//     const uint64_t raw = st.take_id();   // task ids count from 1 over the Runtime's life
//     SubmitState::fill(*s, kind, aic, aiv, blocks, params);
//     st.publish(*s, ring, raw, params, launch, blocks); // in flight until it retires
//     st.count_submitted();                // one more task of this run (published, relaxed)
//
// Written on every submission (orchestrator thread): a cache line of its own, never shared
// with what the workers read per task. The Engine drives a submission (submit.cpp,
// short_path.h): it waits when the ring is full, aborts on a check's error, tracks
// dependencies and queues the ready task.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "kernel_table.h"
#include "task_ring.h"
#include "worker_pool.h"

namespace pto2::detail {

class alignas(64) SubmitState {
 public:
  // ---- the steps of a submission (submit.cpp)
  /// What validation found out about how a task launches.
  struct Launch {
    bool gang = false;        // all blocks start together (mixed, or sync_start with block_num > 1)
    uint32_t need[2] = {0, 0};  // a gang's members per core type
    int helpers_type = -1;    // a sync_start gang of this core type: start its helper threads first
  };
  /// The common submission — a single-block task of a registered kernel on a core type that
  /// has workers, with valid explicit dependencies and timing slot — checked inline (no
  /// Launch to fill: it is no gang); false: ask check(), which also finds the errors.
  static bool plain_valid(TaskKind kind, int32_t aic_kernel, int32_t aiv_kernel, const Arg& params, uint64_t raw,
                          const KernelTable& kernels, const WorkerPool& workers) {
    if ((kind != TaskKind::AIC && kind != TaskKind::AIV) || params.launch_spec.block_num != 1 || params.timing_slot() >= 16)
      return false;
    const int t = kind == TaskKind::AIC ? 0 : 1;
    if (!kernels.registered(t == 0 ? aic_kernel : aiv_kernel) || workers.of_type(t) == 0) return false;
    // Valid (raw != 0) and submitted before (raw < this one's): one unsigned comparison,
    // as 0 wraps around to the largest value.
    for (const PTO2TaskId& d : params.dependencies())
      if (d.raw - 1 >= raw - 1) return false;
    return true;
  }
  /// Checks kernels, block counts, dependencies and the timing slot of submission `raw` by
  /// `api`; resolves a mixed task naming one kernel to a single-kernel one and fills `launch`.
  /// Returns the error ("prog.py:12: rt_submit_task (task #7): ...", what to do), or "".
  std::string check(TaskKind& kind, int32_t aic_kernel, int32_t aiv_kernel, const Arg& params, const char* api,
                    uint64_t raw, const KernelTable& kernels, const WorkerPool& workers, const uint32_t* cores,
                    uint32_t clusters, Launch& launch) const;
  /// The slot task `raw` will occupy if it is free; nullptr while its previous occupant lives
  /// (the ring is full: the caller waits).
  static TaskSlot* free_slot(TaskRing& ring, uint64_t raw) {
    TaskSlot& s = ring.slot_of(raw);
    return s.free.load(std::memory_order_acquire) ? &s : nullptr;
  }
  /// Asks for the lines of slot `s` that the next submission writes and a worker shared (line
  /// 0: the previous occupant's state; line 9: its tensors' and scalars' headers; lines 1-8:
  /// the `tensors` inline Tensors, two lines each), so that their transfer from the core that
  /// ran the previous occupant overlaps the orchestration code between two submissions
  /// instead of stalling fill() and publish(). Line 10 too (the submission site, which every
  /// fill() writes; storages and edge nodes): no worker writes it, but it was last written a
  /// ring lap ago (by default 512 slots of 15 lines: ~480 KB since), so it has often left this
  /// core's cache, or been read along with line 9 by the worker (the L2's adjacent-line
  /// prefetch pairs lines 9 and 10 in every other slot): its store missed as the others did.
  /// The next task's tensor count is guessed from the task just submitted (`tensors`: a
  /// program mostly repeats its submissions). Without these, fill()'s stores wait in the
  /// store buffer for their lines, and every later load that must wait for a store to reach
  /// the cache (a 16-byte load of a view built with 4-byte stores, in the orchestration's own
  /// code) waits for them too. The slot's previous occupant retired long ago (a ring apart),
  /// so no worker is using these lines. Engine::submit asks for the slot kPrefetchAhead
  /// submissions ahead.
  static void prefetch_slot(const TaskSlot& s, uint32_t tensors) {
    const char* p = reinterpret_cast<const char*>(&s);
    prefetch_for_write(p);
    prefetch_for_write(p + 9 * 64);
    prefetch_for_write(p + 10 * 64);
    const uint32_t lines = 2 * (tensors < kInlineTensors ? tensors : kInlineTensors);
    for (uint32_t l = 1; l <= lines; ++l) prefetch_for_write(p + l * 64);
  }
  static constexpr uint64_t kPrefetchAhead = 2;
  static constexpr uint32_t kInlineTensors = 4;  // TaskSlot::tensors' inline count (lines 1-8)
  static_assert(std::is_same_v<decltype(TaskSlot::tensors), pto2::SmallVec<Tensor, kInlineTensors>>,
                "prefetch_slot's lines are the inline tensors'");
  static_assert(offsetof(TaskSlot, site_file) / 64 == 10, "prefetch_slot's line 10 is the submission site's");
  /// Fills a claimed slot with what the task runs: kernel ids, block count, site, tensors, scalars.
  static void fill(TaskSlot& s, TaskKind kind, int32_t aic_kernel, int32_t aiv_kernel, uint32_t blocks,
                   const Arg& params);
  /// Makes the filled slot task `raw`: everything a worker reads once the task is ready, the
  /// fan-in at 1 (no producer can reach it before link_edges sets the real count), then the id
  /// (release).
  void publish(TaskSlot& s, TaskRing& ring, uint64_t raw, const Arg& params, const Launch& launch, uint32_t blocks);

  // ---- the counters
  /// The id the next submission takes.
  uint64_t next_id() const { return next_raw_; }
  uint64_t take_id() { return next_raw_++; }
  /// The number of task `raw` within its run, from 1: what messages, traces and graphs call it
  /// ("task #3"). Ids count on across the runs of a runtime (the ring tells a slot's occupants
  /// apart by them), so the 700th run of a 3-task program would otherwise speak of task #2098.
  uint64_t number(uint64_t raw) const { return raw - run_first_raw_ + 1; }

  /// A run starts: no task submitted in it yet.
  void begin_run() {
    run_first_raw_ = next_raw_;
    submitted_ = dummy_ = 0;
    publish();
  }
  /// One more task of this run (ring or undeferred), published for progress().
  void count_submitted() {
    ++submitted_;
    publish();
  }
  void count_dummy() { ++dummy_; }
  /// A task was published to the ring (published with the next count_submitted()).
  void count_in_ring() { ++total_submitted_; }
  uint64_t submitted() const { return submitted_; }
  uint64_t dummy() const { return dummy_; }

  /// Ring tasks not yet retired, given the tasks `retired` so far.
  int64_t inflight(uint64_t retired) const { return static_cast<int64_t>(total_submitted_ - retired); }
  /// Nothing is in flight; remembered while nothing is submitted to the ring, so that
  /// `retired()` (a sum over the threads) is asked only when a ring task was published since.
  template <class Retired>
  bool quiet(Retired&& retired) {
    if (quiet_at_ == total_submitted_) return true;
    if (inflight(retired()) != 0) return false;
    quiet_at_ = total_submitted_;
    return true;
  }
  /// Any thread (Runtime::progress): the run's tasks submitted and completed; `retired()`
  /// counts the ring tasks retired so far.
  template <class Retired>
  void progress(Retired&& retired, uint64_t* submitted, uint64_t* completed) const noexcept {
    // Completed = submitted - in flight (undeferred tasks finish within their submission, so
    // only ring tasks are ever in flight); both read relaxed, clamped so a lagging read stays
    // sensible.
    const uint64_t sub = pub_submitted_.load(std::memory_order_relaxed);
    const uint64_t ring = pub_total_submitted_.load(std::memory_order_relaxed);
    const uint64_t done = retired();
    const uint64_t inflight = ring > done ? ring - done : 0;
    if (submitted) *submitted = sub;
    if (completed) *completed = sub > inflight ? sub - inflight : 0;
  }

  /// The throttle's cache of the head of the ready queue of type `t` (MpmcQueue::size_at_least).
  size_t& head_seen(int t) { return ready_head_seen_[t]; }
  /// A failing undeferred kernel's message (empty between failures; reused, so no string is
  /// made per task).
  std::string& undeferred_err() { return undeferred_err_; }

 private:
  void publish() {
    pub_submitted_.store(submitted_, std::memory_order_relaxed);
    pub_total_submitted_.store(total_submitted_, std::memory_order_relaxed);
  }

  uint64_t next_raw_ = 1;         // next task id
  uint64_t run_first_raw_ = 1;    // the id of the current run's first task (number())
  uint64_t total_submitted_ = 0;  // tasks published to the ring (never undeferred ones)
  // Published for progress (relaxed stores by the orchestrator, one per submission):
  // submitted_ of this run, and total_submitted_.
  std::atomic<uint64_t> pub_submitted_{0};
  std::atomic<uint64_t> pub_total_submitted_{0};
  uint64_t quiet_at_ = ~uint64_t(0);  // total_submitted_ when inflight() was last seen 0
  // The head of each ready queue as last read by the orchestrator: the throttle asks about
  // the queue's length on every submission.
  size_t ready_head_seen_[2] = {0, 0};
  std::string undeferred_err_;
  uint64_t submitted_ = 0, dummy_ = 0;  // this run
};

}  // namespace pto2::detail
