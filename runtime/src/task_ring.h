// task_ring.h — the task slots of a Runtime: a power-of-two ring indexed by task id.
//
// Task ids ("raw") count from 1 over the Runtime's life; task `raw` lives in slot
// (raw - 1) & mask. A slot is claimed by the orchestrator (submission), filled, published
// (raw id stored with release), executed by workers and freed at retirement.
//
//     TaskRing ring(512);
//     TaskSlot& s = ring.slot_of(raw);              // the slot task `raw` occupies (or will)
//     bool live = ring.is_live(raw);                // submitted and not yet retired (orchestrator)
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "memory_pool.h"
#include "pto_orchestration_api.h"
#include "util.h"

namespace pto2::detail {

enum class TaskKind : uint8_t { AIC = 0, AIV = 1, MIXED = 2, DUMMY = 3 };

// A fan-out list links nodes owned by the consumers. A consumer's first kInlineEdges nodes are
// one word each on its line 0 (TaskSlot::edge_inline), the others EdgeNodes in its in_edges.
// Why inline: the thread that releases a consumer reads its node, then decrements its fan-in,
// and later reads line 0 again to run it; with the node on line 0 that is one cross-core
// transfer, not two (the node array's line and line 0), and the orchestrator, which fills
// line 0 anyway, does not touch line 10 (the vector's header) or the array for a task with
// that few producers. An inline node's consumer is the slot the word lies in (slots are
// 64-byte aligned: TaskRing::consumer_of), so it is one word; an EdgeNode carries its consumer.
// A link is a tagged word: kEnd, kClosed, an inline node's address, or an EdgeNode's address
// plus kOverflowTag (both are 8-byte aligned: bits 0-2 are free).
using EdgeLink = uintptr_t;
constexpr EdgeLink kEnd = 0;
/// Marks a fan-out list closed: its producer retired, nothing more may be linked.
constexpr EdgeLink kClosed = 1;
constexpr EdgeLink kOverflowTag = 2;
/// A consumer's node beyond its inline ones (in its in_edges).
struct EdgeNode {
  EdgeLink next;
  uint32_t consumer;
};

// Layout of a mixed task's group flag word: bit side*8+f = flag f signalled by side (0 AIC,
// 1 AIV); bit kGroupDoneBit+side = that side's kernel returned; the 4 bits at
// kGroupWaitShift+side*4 = that side waits (8) for flag (0..7) of the other side, so that two
// kernels waiting for each other see it (pto2_group_wait).
constexpr uint32_t kGroupFlags = 8;
constexpr uint32_t kGroupDoneBit = 16;
constexpr uint32_t kGroupWaitShift = 18;

// The fields are grouped by cache line (the slot is 64-byte aligned) so that a single-block
// task touches few lines, and none it does not need. Every line a worker reads to run a task
// was written by the orchestrator when it filled the slot: each is a cross-core transfer per
// task, so what a worker reads is packed into as few lines as the fields allow:
//   line 0      the cross-thread state and everything else a worker reads to run the task,
//               up to kLine0Scalars scalars among it: a task with no tensor and that few
//               scalars is one line, for the worker and for the submitter; then the task's
//               first kInlineEdges fan-out nodes (EdgeLink)
//   lines 1-8   tensors (inline, 64-byte aligned: two lines per Tensor, not three)
//   line 9      the tensors' header, then the scalars of a task with more than kLine0Scalars
//               (up to kInlineScalars inline) and their header; a task with no tensor or
//               few scalars never touches the vectors (has_tensors / line0_count say so)
//   line 10     orchestrator-only bookkeeping (in_edges beyond the inline nodes, storages,
//               the submission site)
//   line 11     multi-block and gang state (only tasks that have them touch it)
//   then        the predicate and the group flags (only tasks that have them touch these)
// Fields of multi-block, gang and predicated tasks are written only for such tasks.
struct alignas(64) TaskSlot {
  // Scalars kept inline: the count that, with the header of each vector, fills line 9.
  static constexpr uint32_t kInlineScalars = 4;
  // Scalars kept on line 0 (a task with more keeps them all in `scalars`). One, so that two
  // edge nodes fit there: a task with tensors reads line 9 anyway (their header), so only a
  // task with no tensor and two scalars pays a line more.
  static constexpr uint32_t kLine0Scalars = 1;
  // Fan-out nodes kept on line 0 (see EdgeLink): a chain's or a tree's one producer, an
  // FFT's two; a task with more links the rest from in_edges.
  static constexpr uint32_t kInlineEdges = 2;
  static constexpr uint8_t kScalarsInVector = 0xFF;

  // (C++17: the flag bit-fields below cannot have default member initializers.)
  TaskSlot()
      : sync_start(false), gang(false), has_pred(false), has_storages(false) {}

  // ---- line 0
  std::atomic<uint64_t> raw{0};      // id of the occupant (written by the orchestrator only)
  // Consumers waiting for this task: a lock-free list of nodes owned by the consumers (see
  // EdgeLink), closed (kClosed) by the retiring thread, which then releases everyone on it.
  std::atomic<EdgeLink> fanout{kEnd};
  std::atomic<int32_t> fanin{0};     // unfinished producers (set before any is linked: link_edges)
  std::atomic<bool> done{true};      // occupant finished (its consumers are/being released)
  std::atomic<bool> free{true};      // slot may be reused
  TaskKind kind = TaskKind::AIV;
  // Flags in one byte (room for edge_inline). Written by the orchestrator before the task is
  // ready and by its retirement (has_storages), never by two threads at once.
  bool sync_start : 1;
  bool gang : 1;
  bool has_pred : 1;
  bool has_storages : 1;             // storages is not empty (retire skips it otherwise)
  int8_t timing_slot = -1;
  bool has_tensors = false;          // false: `tensors` is stale and not read
  uint8_t line0_count = 0;           // scalars in line0_scalars, or kScalarsInVector
  uint32_t block_num = 1;
  int32_t kernel[2] = {-1, -1};      // [AIC, AIV]; the function is the KernelTable's
  uint64_t line0_scalars[kLine0Scalars];
  // This task's first fan-out nodes (see EdgeLink): written by the orchestrator when it links
  // the task, read by the thread retiring each producer.
  EdgeLink edge_inline[kInlineEdges];

  // ---- lines 1-9
  alignas(64) pto2::SmallVec<Tensor, 4> tensors;
  pto2::SmallVec<uint64_t, kInlineScalars> scalars;

  // ---- line 10 (orchestrator; storages also read by retirement when has_storages)
  alignas(64) std::vector<EdgeNode> in_edges;  // nodes beyond edge_inline this task links into its producers' lists (only grows)
  std::vector<PTO2Storage*> storages;
  const char* site_file = nullptr;   // DSL submission site (PTO2_SOURCE_SITE): named in errors
  int32_t site_line = 0;

  // ---- line 11: multi-block tasks and gang assembly (set by publish only for such tasks)
  alignas(64) std::atomic<uint32_t> next_block{0};
  std::atomic<uint32_t> blocks_left{0};
  std::atomic<uint32_t> claimed[2];
  std::atomic<uint32_t> arrived{0};
  std::atomic<bool> go{false};
  // Atomic: a worker asks gang_wants of the slot it last saw active, which may have retired
  // and been reused by a new submission meanwhile (a stale answer is harmless: join_gang
  // checks again; a plain read would be a data race with publish's write).
  std::atomic<uint32_t> need[2] = {0, 0};

  // ---- cold
  CoreTaskPredicate pred;            // valid while has_pred
  // group flags of a mixed task, one word per block pair (see kGroupFlags); reset at submit
  std::unique_ptr<std::atomic<uint32_t>[]> gflags;
  uint32_t gflags_cap = 0;

  /// The task's tensors and scalars, as its kernel sees them.
  const Tensor* tensor_data() const { return has_tensors ? tensors.data() : nullptr; }
  uint32_t tensor_count() const { return has_tensors ? tensors.size() : 0; }
  const uint64_t* scalar_data() const { return line0_count == kScalarsInVector ? scalars.data() : line0_scalars; }
  uint32_t scalar_count() const { return line0_count == kScalarsInVector ? scalars.size() : line0_count; }
};

// The layout above, checked: what a plain task's worker reads is on line 0 (and 9 for tensors
// or more than kLine0Scalars scalars).
static_assert(offsetof(TaskSlot, edge_inline) + sizeof(TaskSlot::edge_inline) <= 64, "line 0 overflows");
static_assert(offsetof(TaskSlot, scalars) / 64 == 9 &&
                  (offsetof(TaskSlot, scalars) + sizeof(TaskSlot::scalars) - 1) / 64 == 9,
              "the tensors' header and the scalars share line 9");
static_assert(offsetof(TaskSlot, site_line) / 64 == 10, "orchestrator bookkeeping fits line 10");

class TaskRing {
 public:
  /// A ring of at least `min_size` slots (rounded up to a power of two, at least 8).
  explicit TaskRing(uint32_t min_size) {
    size_ = 8;
    while (size_ < std::max<uint32_t>(min_size, 2)) size_ <<= 1;
    mask_ = size_ - 1;
    slots_.reset(new TaskSlot[size_]);
    issued_raw_.reset(new uint64_t[size_]());
    retired_raw_.reset(new std::atomic<uint64_t>[size_]);
    for (uint64_t i = 0; i < size_; ++i) retired_raw_[i].store(0, std::memory_order_relaxed);
  }
  uint32_t size() const { return size_; }
  TaskSlot& at(uint32_t idx) { return slots_[idx]; }
  const TaskSlot& at(uint32_t idx) const { return slots_[idx]; }
  TaskSlot& slot_of(uint64_t raw) { return slots_[(raw - 1) & mask_]; }
  uint32_t index_of(uint64_t raw) const { return static_cast<uint32_t>((raw - 1) & mask_); }
  /// The slot of the consumer owning fan-out node `link` (neither kEnd nor kClosed), and in
  /// `next` the link after it. Read before the consumer's fan-in is decremented: the node is
  /// the consumer's, reused once it is ready and has run.
  TaskSlot& consumer_of(EdgeLink link, EdgeLink& next) {
    if (link & kOverflowTag) {
      const EdgeNode* n = reinterpret_cast<const EdgeNode*>(link - kOverflowTag);
      next = n->next;
      return slots_[n->consumer];
    }
    next = *reinterpret_cast<const EdgeLink*>(link);
    return *reinterpret_cast<TaskSlot*>(link & ~uintptr_t{63});  // edge_inline is on the slot's first line
  }
  /// Worker pipelining: asks for the line of the first consumer on `s`'s fan-out list, for
  /// writing, before the task runs, so that the miss its retirement would take there (the
  /// node read, then the fan-in decrement, on the consumer's line 0, which the orchestrator
  /// wrote when it linked the consumer) overlaps running the task instead of stalling the
  /// retirement. A hint: a stale link is harmless (a prefetch never faults).
  static void prefetch_first_consumer(const TaskSlot& s) {
    const EdgeLink l = s.fanout.load(std::memory_order_relaxed);
    if (l > kClosed) prefetch_for_write(reinterpret_cast<const void*>(l & ~kOverflowTag));
  }
  /// The index of slot `s` (a division: asked once per task made ready, not per edge).
  uint32_t index_of_slot(const TaskSlot& s) const { return static_cast<uint32_t>(&s - slots_.get()); }
  /// Orchestrator thread. Reads two compact arrays, not the slot: its cache line is the
  /// retiring worker's, and the tracker asks about many finished tasks.
  bool is_live(uint64_t raw) const {
    const uint64_t i = (raw - 1) & mask_;
    return issued_raw_[i] == raw && retired_raw_[i].load(std::memory_order_acquire) != raw;
  }
  /// Orchestrator: task `raw` now occupies its slot.
  void mark_issued(uint64_t raw) { issued_raw_[(raw - 1) & mask_] = raw; }
  /// Retiring thread: the occupant of slot `idx`, `raw`, has retired.
  void mark_retired(uint32_t idx, uint64_t raw) { retired_raw_[idx].store(raw, std::memory_order_release); }

 private:
  std::unique_ptr<TaskSlot[]> slots_;
  std::unique_ptr<uint64_t[]> issued_raw_;                // per slot: its occupant (orchestrator only)
  std::unique_ptr<std::atomic<uint64_t>[]> retired_raw_;  // per slot: the last occupant retired
  uint64_t mask_ = 0;
  uint32_t size_ = 0;
};

}  // namespace pto2::detail
