// pto2/task.h — what one task submission carries: Arg (tensor slots, scalars, explicit
// dependencies, predicate, launch spec), task ids, kernels and submission results.
// Arg / TaskOutputTensors are plain values owned by the orchestration thread (not shared).
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <new>
#include <type_traits>
#include <vector>

#include "pto2/types.h"

namespace pto2 {
/// A vector of trivially copyable T with N elements inline (no allocation below N).
template <class T, uint32_t N>
class SmallVec {
 public:
  SmallVec() = default;
  SmallVec(const SmallVec& o) { assign(o.begin(), o.end()); }
  SmallVec& operator=(const SmallVec& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  /// Moves steal a heap buffer (no copy of the elements); inline elements are copied.
  SmallVec(SmallVec&& o) noexcept { take(o); }
  SmallVec& operator=(SmallVec&& o) noexcept {
    if (this != &o) {
      if (cap_ != N) ::operator delete(data_);
      data_ = inline_ptr();
      cap_ = N;
      take(o);
    }
    return *this;
  }
  ~SmallVec() {
    if (cap_ != N) ::operator delete(data_);  // a heap buffer always holds more than N
  }
  static_assert(std::is_trivially_copyable<T>::value, "SmallVec holds trivially copyable types");
  static_assert(N >= 1, "one element inline at least (assign copies one in place)");
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "heap buffers use plain operator new");
  void push_back(const T& v) {
    if (size_ == cap_) grow(cap_ * 2);
    std::memcpy(static_cast<void*>(data_ + size_), &v, sizeof(T));
    ++size_;
  }
  void assign(const T* b, const T* e) {
    const uint32_t n = static_cast<uint32_t>(e - b);
    if (sizeof(T) <= 16 && n <= N) {  // ids, scalars: within the inline capacity (cap_ >= N)
      assign_small(b, n);
    } else if (n == 1) {  // one element (a task's one tensor) inline, not by a call
      std::memcpy(static_cast<void*>(data_), b, sizeof(T));
      size_ = 1;
    } else {
      assign_many(b, n);
    }
  }
  void clear() { size_ = 0; }
  uint32_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T& operator[](uint32_t i) { return data_[i]; }
  const T& operator[](uint32_t i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }
  void pop_back() { --size_; }

 private:
  T* inline_ptr() { return reinterpret_cast<T*>(inline_); }
  void take(SmallVec& o) {
    if (o.cap_ != N) {
      data_ = o.data_;
      cap_ = o.cap_;
      o.data_ = o.inline_ptr();
      o.cap_ = N;
    } else if (o.size_) {
      std::memcpy(static_cast<void*>(data_), o.data_, o.size_ * sizeof(T));
    }
    size_ = o.size_;
    o.size_ = 0;
  }
  // Small words (ids, scalars) one by one, in a loop of constant bound: a memcpy of a variable
  // size that the compiler inlines becomes `rep movsq`, whose start-up costs more than copying
  // a few ids. The caller's array holds only `n`: once this is inlined next to it, g++ cannot
  // see that the iterations past it never run (-Warray-bounds, a failed -Werror build). The
  // empty asm hides which array `b` points into. (A `#pragma GCC diagnostic` is no help: GCC 12
  // drops it from the precompiled header that pypto's builds use.)
  void assign_small(const T* b, uint32_t n) {
    asm("" : "+r"(b));
#pragma GCC unroll 16
    for (uint32_t i = 0; i < N; ++i) {
      if (i == n) break;
      std::memcpy(static_cast<void*>(data_ + i), b + i, sizeof(T));
    }
    size_ = n;
  }
  // Out of line: a memcpy of n elements, inlined next to a caller's smaller array, is a
  // -Warray-bounds warning for the sizes that never come (and a call costs nothing here).
  __attribute__((noinline)) void assign_many(const T* b, uint32_t n) {
    size_ = 0;
    if (n > cap_) grow(n);
    if (n) std::memcpy(static_cast<void*>(data_), b, static_cast<size_t>(n) * sizeof(T));
    size_ = n;
  }
  void grow(uint32_t cap) {
    // Raw storage, like inline_: T need not be default-constructible (Tensor is not).
    T* d = static_cast<T*>(::operator new(cap * sizeof(T)));
    if (size_) std::memcpy(static_cast<void*>(d), data_, size_ * sizeof(T));
    if (cap_ != N) ::operator delete(data_);
    data_ = d;
    cap_ = cap;
  }
  alignas(T) unsigned char inline_[N * sizeof(T)];  // raw: no per-Arg construction cost
  T* data_ = inline_ptr();
  uint32_t size_ = 0;
  uint32_t cap_ = N;
};
}  // namespace pto2

/// Identifies a submitted task. Cheap POD; `PTO2TaskId{}` == `PTO2TaskId::invalid()`.
struct PTO2TaskId {
  uint64_t raw = 0;  ///< 0 = invalid; otherwise the runtime's sequence number + 1
  static PTO2TaskId invalid() { return PTO2TaskId{}; }
  bool is_valid() const { return raw != 0; }
  uint64_t value() const { return raw; }
  bool operator==(const PTO2TaskId& o) const { return raw == o.raw; }
  bool operator!=(const PTO2TaskId& o) const { return raw != o.raw; }
};

constexpr int32_t INVALID_KERNEL_ID = -1;

/// The kernels one cluster runs together (gang-started): `MixedKernels m = {0, 1, INVALID_KERNEL_ID};`
/// The CPU runtime runs one AIC and one AIV kernel per cluster: `third_kernel_id` must be
/// INVALID_KERNEL_ID (anything else fails the run with a message saying so).
struct MixedKernels {
  int32_t aic_kernel_id;
  int32_t aiv_kernel_id;
  int32_t third_kernel_id;
};

enum class PredicateOp { EQ, NE, GT, LT, GE, LE };

/// `operand[indices] <op> target`, evaluated by the scheduler when the task's dependencies are
/// satisfied. False: the task retires without running its kernel (consumers are still released).
struct CoreTaskPredicate {
  CoreTaskPredicate(const Tensor& operand, std::initializer_list<int64_t> indices, PredicateOp op, int64_t target);
  CoreTaskPredicate() = default;
  Tensor operand;
  int64_t element = 0;  ///< absolute element offset of the operand element
  PredicateOp op = PredicateOp::NE;
  int64_t target = 0;
  /// Reads the element (as int64; floats truncate) and compares. Thread-safe.
  bool evaluate() const;
};

/// SPMD launch: `params.launch_spec.set_block_num(4); params.launch_spec.set_require_sync_start(true);`
struct LaunchSpec {
  uint32_t block_num = 1;
  bool require_sync_start = false;
  /// Any integer type, checked at full width: a count outside 0..2^31-1 (a negative or too
  /// large core_num) is stored as UINT32_MAX, which submission refuses with an error.
  template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
  void set_block_num(T n) {
    // (a negative n converts to a huge unsigned value: one comparison covers both ends)
    block_num = static_cast<uint64_t>(n) > 0x7fffffffULL ? 0xffffffffu : static_cast<uint32_t>(n);
  }
  void set_require_sync_start(bool v) { require_sync_start = v; }
  uint32_t get_block_num() const { return block_num; }
  bool get_require_sync_start() const { return require_sync_start; }
};

/// How a tensor slot is used by the kernel.
enum class PTO2ArgDir : uint8_t {
  INPUT,       ///< read
  OUTPUT,      ///< written (existing storage)
  INOUT,       ///< read and written
  NO_DEP,      ///< may be read and written; automatic tracking ignores the slot
  OUTPUT_NEW,  ///< written; storage allocated by the runtime at submit
};

/// The parameters of one task submission. Tensors take tensor slots in the order added
/// (inputs, outputs, inouts and no_dep all count); scalars take scalar slots in add order.
///
///     Arg p; p.add_input(a); p.add_output(c); p.add_scalar(to_u64(1.5f));
///     rt_submit_aiv_task(0, p);
///
/// Not thread-safe (an Arg belongs to the thread that builds it).
class Arg {
 public:
  Arg() = default;
  void add_input(const Tensor& t) { add(t, PTO2ArgDir::INPUT); }
  void add_output(const Tensor& t) { add(t, PTO2ArgDir::OUTPUT); }
  /// Runtime-allocated output; returned by the submit in TaskOutputTensors (in order).
  void add_output(const TensorCreateInfo& info);
  void add_inout(const Tensor& t) { add(t, PTO2ArgDir::INOUT); }
  void add_no_dep(const Tensor& t) { add(t, PTO2ArgDir::NO_DEP); }
  void add_scalar(uint64_t v) { scalars_.push_back(v); }
  /// Explicit dependencies (added to automatic ones). Any count; ids are copied.
  /// Every id must be valid (an id of a finished task is fine).
  void set_dependencies(const PTO2TaskId* ids, uint32_t count) { deps_.assign(ids, ids + count); }
  /// Adds one explicit dependency (same rules as set_dependencies).
  void add_dependency(PTO2TaskId id) { deps_.push_back(id); }
  void set_predicate(const CoreTaskPredicate& p) {
    new (predicate_) CoreTaskPredicate(p);
    has_predicate_ = true;
  }
  /// Accepted; see docs/runtime.md (consumers are always released as soon as this task retires).
  void set_allow_early_resolve(bool v) { allow_early_resolve_ = v; }
  /// Tasks sharing slot K (0..15) report one span: earliest dispatch .. latest finish.
  void set_task_timing_slot(uint32_t slot) { timing_slot_ = static_cast<int32_t>(slot); }
  /// The DSL line that submits this task (race reports, run-time errors): see PTO2_SOURCE_SITE.
  void set_source_site(const char* file, int32_t line) {
    source_file_ = file;
    source_line_ = line;
  }
  /// Marks tensor arguments already added for the device's partial dump (pl.dump_tag /
  /// `dumps=`). The CPU runtime records which tensor slots are marked and writes nothing.
  ///
  ///     p.add_input(a); p.add_output(c); p.dump(a, c);   // dump_slots() == {0, 1}
  template <class... Ts>
  void dump(const Ts&... tensors) {
    (mark_dump(tensors), ...);
  }
  /// Tensor slots marked by dump(), in mark order, each once.
  const pto2::SmallVec<uint32_t, 8>& dump_slots() const { return dump_slots_; }
  const char* source_file() const { return source_file_; }
  int32_t source_line() const { return source_line_; }
  void reset();

  LaunchSpec launch_spec;

  // Read access (used by the runtime).
  uint32_t tensor_count() const { return static_cast<uint32_t>(tensors_.size()); }
  const pto2::SmallVec<Tensor, 8>& tensors() const { return tensors_; }
  const pto2::SmallVec<PTO2ArgDir, 8>& dirs() const { return dirs_; }
  const pto2::SmallVec<uint64_t, 8>& scalars() const { return scalars_; }
  const pto2::SmallVec<PTO2TaskId, 8>& dependencies() const { return deps_; }
  bool has_predicate() const { return has_predicate_; }
  /// Only meaningful when has_predicate().
  const CoreTaskPredicate& predicate() const {
    return *std::launder(reinterpret_cast<const CoreTaskPredicate*>(predicate_));
  }
  /// True if an add_output(TensorCreateInfo) slot is present.
  bool has_new_output() const { return has_new_output_; }
  bool allow_early_resolve() const { return allow_early_resolve_; }
  /// One block and no predicate, timing slot or runtime-allocated output.
  bool is_plain() const {
    return launch_spec.block_num == 1 && !has_predicate_ && !has_new_output_ && timing_slot_ < 0;
  }
  int32_t timing_slot() const { return timing_slot_; }

 private:
  void add(const Tensor& t, PTO2ArgDir d) {
    tensors_.push_back(t);
    dirs_.push_back(d);
  }
  pto2::SmallVec<Tensor, 8> tensors_;
  pto2::SmallVec<PTO2ArgDir, 8> dirs_;
  pto2::SmallVec<uint64_t, 8> scalars_;
  pto2::SmallVec<PTO2TaskId, 8> deps_;
  pto2::SmallVec<uint32_t, 8> dump_slots_;
  // The first slot viewing the same storage as `t`; an unknown tensor is ignored (nothing to dump).
  void mark_dump(const Tensor& t) {
    for (uint32_t i = 0; i < tensors_.size(); ++i) {
      if (tensors_[i].data != t.data || tensors_[i].offset != t.offset) continue;
      for (uint32_t k = 0; k < dump_slots_.size(); ++k) {
        if (dump_slots_[k] == i) return;
      }
      dump_slots_.push_back(i);
      return;
    }
  }
  static_assert(std::is_trivially_copyable<CoreTaskPredicate>::value &&
                    std::is_trivially_destructible<CoreTaskPredicate>::value,
                "Arg copies its predicate bytewise");
  // Raw storage, written by set_predicate only: most tasks have no predicate, and a
  // default-constructed one (a zeroed Tensor) would cost every Arg.
  alignas(CoreTaskPredicate) unsigned char predicate_[sizeof(CoreTaskPredicate)];
  bool has_predicate_ = false;
  bool has_new_output_ = false;
  bool allow_early_resolve_ = false;
  int32_t timing_slot_ = -1;
  const char* source_file_ = nullptr;  // a string literal of the generated code
  int32_t source_line_ = 0;
};

/// `PTO2_SOURCE_SITE(params_t3, "prog.py", 42);` — generated code names the DSL line of a
/// submission. Generated files define it as a no-op when the runtime header does not.
#define PTO2_SOURCE_SITE(params, file, line) (params).set_source_site(file, line)

/// Result of a submission or of alloc_tensors: the runtime-allocated tensors, in order, and
/// the task id (invalid for alloc_tensors and for a dummy task that was elided).
class TaskOutputTensors {
 public:
  TaskOutputTensors() = default;
  const Tensor& get_ref(uint32_t i) const;  ///< throws std::out_of_range
  PTO2TaskId task_id() const { return id_; }
  uint32_t size() const { return static_cast<uint32_t>(tensors_.size()); }

  // Used by the runtime.
  std::vector<Tensor> tensors_;
  PTO2TaskId id_;
};
