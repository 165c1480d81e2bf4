// pto2/orchestration.h — the free functions generated orchestration code calls.
//
// They act on the *current run*: the runtime sets it (thread-local) on the orchestrator
// thread that executes the entry. Calling them on any other thread, in a kernel, or outside
// pto2::Runtime::run(), throws std::logic_error (get/set_tensor_data outside any run only check
// the indices; a kernel the orchestrator thread runs itself is not checked: don't call them
// from kernels; docs/runtime.md, "Threads"). After the run failed, they throw an internal
// exception that unwinds the entry (the run then reports the first failure).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "pto2/float_python_ops.h"   // pto2_float_floordiv, pto2_float_mod (a float scalar //, %)
#include "pto2/float_to_int.h"   // pto2_float_to_int (a scalar pl.cast)
#include "pto2/task.h"
#include "pto2/types.h"

/// Submits a task to one AIC (cube) worker: `rt_submit_aic_task(0, params);`
TaskOutputTensors rt_submit_aic_task(int32_t kernel_id, Arg& params);
/// Submits a task to one AIV (vector) worker.
TaskOutputTensors rt_submit_aiv_task(int32_t kernel_id, Arg& params);
/// Submits a cluster task: the AIC and AIV kernels start together (gang) on one AIC and one
/// AIV worker per block, see the same tensors/scalars; the task completes when all finish.
TaskOutputTensors rt_submit_task(const MixedKernels& kernels, Arg& params);
/// A task without kernel that only waits for its dependencies (a compact fan-in point). As in
/// the real PTO2 runtime it returns TaskOutputTensors (no tensors); the id is `.task_id()`:
/// `PTO2TaskId barrier = rt_submit_dummy_task(params).task_id();`
TaskOutputTensors rt_submit_dummy_task(Arg& params);

/// Allocates runtime-owned tensors in the current scope, in order. They live until the scope
/// ended and every task using them finished; then the memory is reused.
TaskOutputTensors pto2_alloc_tensors_impl(const TensorCreateInfo* const* infos, uint32_t n);
template <class... Infos>
TaskOutputTensors alloc_tensors(const Infos&... infos) {
  const TensorCreateInfo* arr[sizeof...(Infos) + 1] = {&infos..., nullptr};
  return pto2_alloc_tensors_impl(arr, static_cast<uint32_t>(sizeof...(Infos)));
}

/// Names the tensors of an alloc_tensors result for the race checker's reports ("tensor 'acc'
/// (pl.create_tensor)" instead of "a tensor from alloc_tensors"); `names` in the result's order,
/// each a string literal. Nothing to do unless the run checks races. Generated code:
/// `PTO2_TENSOR_NAMES(alloc_0, "acc", "tmp");` (a no-op where the runtime header lacks it).
void pto2_name_tensors(const TaskOutputTensors& out, std::initializer_list<const char*> names);
#define PTO2_TENSOR_NAMES(out, ...) pto2_name_tensors(out, {__VA_ARGS__})

/// Waits until every task submitted so far that writes element `indices` of `t` finished.
/// Outside a run it only checks the indices. `file`/`line` (generated code passes them) name the
/// DSL line in the error for an index out of range (in a run the run fails with it; outside one
/// it is thrown as std::out_of_range).
void pto2_wait_for_element(const Tensor& t, uint32_t ndims, const int64_t* indices, const char* file = nullptr,
                           int32_t line = 0);

/// Names the DSL line of this thread's next get_tensor_data / set_tensor_data (its errors name
/// it), for callers that keep the spec's signature without the trailing file/line, as generated
/// code does: `PTO2_ELEMENT_SITE("prog.py", 12); float v = get_tensor_data<float>(t, 2, idx);`
/// The next call uses and clears it (an explicit file/line wins).
void pto2_set_element_site(const char* file, int32_t line);
#define PTO2_ELEMENT_SITE(file, line) pto2_set_element_site(file, line)

/// Waits for the element's producers, then reads it converted to T:
/// `float v = get_tensor_data<float>(t, 2, idx);` (generated code appends the DSL site: `, "prog.py", 12`)
template <class T>
T get_tensor_data(const Tensor& t, uint32_t ndims, const int64_t* indices, const char* file = nullptr, int32_t line = 0) {
  pto2_wait_for_element(t, ndims, indices, file, line);
  if (t.data == nullptr) return T{};
  const int64_t off = t.element_offset(indices);
  return pto2::load_as<T>(static_cast<const char*>(t.data) + off * static_cast<int64_t>(dtype_size(t.dtype)), t.dtype);
}

/// Waits until every task submitted so far that reads or writes element `indices` of `t`
/// finished. Outside a run it only checks the indices. `file`/`line` as for pto2_wait_for_element.
void pto2_wait_for_element_write(const Tensor& t, uint32_t ndims, const int64_t* indices, const char* file = nullptr,
                                 int32_t line = 0);

/// Waits for the element's earlier readers and writers, then stores `value` converted to the
/// tensor's dtype: `set_tensor_data<float>(t, 2, idx, 0.5f);` (later tasks see the value; generated
/// code appends the DSL site: `, "prog.py", 12`).
template <class T>
void set_tensor_data(const Tensor& t, uint32_t ndims, const int64_t* indices, T value, const char* file = nullptr,
                     int32_t line = 0) {
  pto2_wait_for_element_write(t, ndims, indices, file, line);
  if (t.data == nullptr) return;
  char* p = static_cast<char*>(t.data) + t.element_offset(indices) * static_cast<int64_t>(dtype_size(t.dtype));
  auto put = [p](auto v) { std::memcpy(p, &v, sizeof v); };
  switch (t.dtype) {
    case DataType::FLOAT32: put(static_cast<float>(value)); break;
    case DataType::FLOAT16: put(pto2::float_to_half(static_cast<float>(value))); break;
    case DataType::BFLOAT16: put(pto2::float_to_bfloat16(static_cast<float>(value))); break;
    case DataType::INT8: put(static_cast<int8_t>(value)); break;
    case DataType::INT16: put(static_cast<int16_t>(value)); break;
    case DataType::INT32: put(static_cast<int32_t>(value)); break;
    case DataType::INT64: put(static_cast<int64_t>(value)); break;
    case DataType::UINT8: put(static_cast<uint8_t>(value)); break;
    case DataType::UINT16: put(static_cast<uint16_t>(value)); break;
    case DataType::UINT32: put(static_cast<uint32_t>(value)); break;
    case DataType::UINT64: put(static_cast<uint64_t>(value)); break;
    case DataType::BOOL: put(static_cast<uint8_t>(value != T{} ? 1 : 0)); break;
  }
}

enum class PTO2ScopeMode { AUTO, MANUAL };

/// RAII scope (use the PTO2_SCOPE macro). MANUAL: tasks skip automatic tracking.
/// An AUTO scope inside a MANUAL one is misuse: the run fails.
class PTO2ScopeGuard {
 public:
  PTO2ScopeGuard();
  explicit PTO2ScopeGuard(PTO2ScopeMode mode);
  ~PTO2ScopeGuard();
  PTO2ScopeGuard(const PTO2ScopeGuard&) = delete;
  PTO2ScopeGuard& operator=(const PTO2ScopeGuard&) = delete;

 private:
  // The scope it opened: the run (a serial unique across runtimes) and the nesting depth. A guard
  // that outlives its run, or closes while a scope it encloses is open, must not pop another one.
  uint64_t run_ = 0;
  uint32_t depth_ = 0;
  bool active_ = false;
};

#define PTO2_SCOPE_CAT2(a, b) a##b
#define PTO2_SCOPE_CAT(a, b) PTO2_SCOPE_CAT2(a, b)
#define PTO2_SCOPE_IMPL(name, ...) if (PTO2ScopeGuard name{__VA_ARGS__}; true)
/// `PTO2_SCOPE() { ... }` or `PTO2_SCOPE(PTO2ScopeMode::MANUAL) { ... }`. The body is a plain
/// block (break/continue act on the enclosing loop).
#define PTO2_SCOPE(...) PTO2_SCOPE_IMPL(PTO2_SCOPE_CAT(pto2_scope_guard_, __COUNTER__), __VA_ARGS__)

// Spellings of the Chinese specification.
using ScopeMode = PTO2ScopeMode;
using TaskId = PTO2TaskId;
#define SIMPLER_SCOPE(...) PTO2_SCOPE(__VA_ARGS__)

// Run-time checks of the DSL the compiler cannot decide statically. Each throws (the run fails
// with the message) naming `file:line`, the DSL line; generated code calls them.

/// pl.tensor.slice with offsets / shapes checked at full width before they narrow to the view's
/// 32-bit entries: `int64_t sh[2] = {n, 8}, off[2] = {i, 0};`
/// `Tensor v = pto2_view_at(ext_x, 2, sh, off, "v", "prog.py", 12);`
Tensor pto2_view_at(const Tensor& src, uint32_t ndims, const int64_t* shapes, const int64_t* offsets, const char* what,
                    const char* file, int32_t line);
/// pl.tensor.reshape of a view whose size or layout is known only at run time (a clamped or
/// dynamic slice): checks what `src.reshape(shapes, ndims)` checks, naming the DSL line, before
/// the spec's `Tensor r = src.reshape(r_shapes, 2);` line makes the view:
/// `pto2_reshape_check(v, r_shapes, 2, "r", "prog.py", 12);`
void pto2_reshape_check(const Tensor& src, const uint32_t* shapes, uint32_t ndims, const char* what, const char* file,
                        int32_t line);
/// A non-literal offset or shape entry of pl.tensor.slice (`kind` "offset" / "shape"), checked
/// at full width before it narrows to the view's 32 bits; the generated code then clamps the
/// shape to the source (spec anchor_features §18):
/// `uint32_t v_offsets[2] = {pto2_slice_u32(r, "offset", ext_x, 0, "v", "prog.py", 12), 0};`
uint32_t pto2_slice_u32(int64_t v, const char* kind, const Tensor& src, uint32_t axis, const char* what,
                        const char* file, int32_t line);
/// A slice's extent on one axis clamped to its source (spec anchor_features §18): `want`, trimmed
/// to what is left of `extent` past `offset`, 0 when `offset` is at or past the end. The
/// reference form's `(o >= e ? 0u : std::min<uint32_t>(want, e - o))` as one call, which long
/// orchestration functions print (compiled unoptimised, the expression was a third of their
/// build): `uint32_t v_shapes[2] = {pto2_slice_extent(16, ext_x.shapes[0], v_offsets[0]), 8};`
inline uint32_t pto2_slice_extent(uint32_t want, uint32_t extent, uint32_t offset) {
  return offset >= extent ? 0u : (want < extent - offset ? want : extent - offset);
}
/// A call argument whose extent on `axis` is dynamic, passed for a parameter that declares
/// `expected`: `pto2_check_arg_extent(a, 0, 16, "kernel_add", "x", "prog.py", 20);`. A smaller
/// extent is accepted (a clamped slice; the kernel clips its accesses, §18), a larger one fails.
void pto2_check_arg_extent(const Tensor& t, uint32_t axis, int64_t expected, const char* callee, const char* param,
                           const char* file, int32_t line);
/// A runtime tensor extent computed at run time, checked before it narrows to the runtime's 32
/// bits: `uint32_t sh[2] = {pto2_extent_u32(n, "prog.py", 7), 8};`
uint32_t pto2_extent_u32(int64_t v, const char* file, int32_t line);
/// Iterations of Python's `range(start, stop, step)` for a step known only at run time (negative
/// counts down); a zero step throws. `uint64_t n = pto2_range_count(0, m, s, "prog.py", 9);`
uint64_t pto2_range_count(int64_t start, int64_t stop, int64_t step, const char* file, int32_t line);
/// The slot index of a DSL `pl.array` of `n` slots, not known to lie in 0..n-1 (a C array
/// indexed out of range reads or writes the orchestration's stack); outside that range throws
/// naming the DSL line. Negative indices are out of range (they do not count from the end).
/// `w[pto2_array_slot(i, 4, "prog.py", 9)] = i;`
/// Any integer type: an unsigned index above INT64_MAX is reported as the number it is.
[[noreturn]] void pto2_array_slot_out_of_range(int64_t k, int64_t n, const char* file, int32_t line);
[[noreturn]] void pto2_array_slot_out_of_range_unsigned(uint64_t k, int64_t n, const char* file, int32_t line);
template <typename T>
inline int64_t pto2_array_slot(T k, int64_t n, const char* file, int32_t line) {
  static_assert(std::is_integral_v<T>, "a pl.array slot index is an integer");
  if constexpr (std::is_unsigned_v<T>) {
    if (static_cast<uint64_t>(k) >= static_cast<uint64_t>(n)) pto2_array_slot_out_of_range_unsigned(k, n, file, line);
  } else if (static_cast<uint64_t>(static_cast<int64_t>(k)) >= static_cast<uint64_t>(n)) {
    pto2_array_slot_out_of_range(k, n, file, line);
  }
  return static_cast<int64_t>(k);
}
/// A DSL `assert cond, "message"` whose condition is false: throws "prog.py:9: assertion failed:
/// message" (Python's AssertionError). `pto2_assert(n > 0, "n must be positive", "prog.py", 9);`
[[noreturn]] void pto2_assertion_failed(const char* message, const char* file, int32_t line);
inline void pto2_assert(bool ok, const char* message, const char* file, int32_t line) {
  if (!ok) pto2_assertion_failed(message, file, line);
}
/// The divisor of a DSL `//` or `%` not known to be non-zero, of its own type; 0 throws (a C++
/// division by 0 is undefined: SIGFPE). `int64_t q = m / pto2_divisor(n, "prog.py", 9);`
[[noreturn]] void pto2_division_by_zero(const char* file, int32_t line);
template <typename T>
inline T pto2_divisor(T d, const char* file, int32_t line) {
  if (d == 0) pto2_division_by_zero(file, line);
  return d;
}
/// Python's `a // d` (rounds toward -inf) on integers that may be negative, wrapped to T as every
/// DSL integer result is: a 0 divisor throws naming the DSL line, and `MIN // -1` is MIN (Python's
/// 2^63 wrapped to int64, as a kernel computes it; the C++ division would trap with SIGFPE).
/// `int64_t q = pto2_floordiv<int64_t>(m, n, "prog.py", 9);`
template <typename T>
inline T pto2_floordiv(T a, T d, const char* file, int32_t line) {
  if (d == 0) pto2_division_by_zero(file, line);
  if constexpr (std::is_signed<T>::value) {
    if (d == T(-1)) {  // a / -1 would trap for MIN: -a, negated in the unsigned type (MIN stays MIN)
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(U(0) - static_cast<U>(a)));
    }
  }
  T q = static_cast<T>(a / d);
  if constexpr (std::is_signed<T>::value) {  // unsigned: truncation is the floor (no `< 0` tests to warn on)
    if ((a % d != 0) && ((a < 0) != (d < 0))) --q;
  }
  return q;
}
/// Python's `a % d` (the sign of the divisor) on integers that may be negative: a 0 divisor
/// throws; never overflows (the correction adds d to a remainder of the other sign) and `% -1`
/// is 0 without the trapping C++ `MIN % -1`. `int64_t r = pto2_mod<int64_t>(m, n, "prog.py", 9);`
template <typename T>
inline T pto2_mod(T a, T d, const char* file, int32_t line) {
  if (d == 0) pto2_division_by_zero(file, line);
  if constexpr (std::is_signed<T>::value) {
    if (d == T(-1)) return 0;
  }
  T r = static_cast<T>(a % d);
  if constexpr (std::is_signed<T>::value) {
    if (r != 0 && ((r < 0) != (d < 0))) r = static_cast<T>(r + d);
  }
  return r;
}
/// A negative count of `<<` / `>>` (Python raises ValueError for it).
[[noreturn]] void pto2_negative_shift(const char* file, int32_t line);
/// Python's `a << n` on integers, wrapped to T: a negative count throws naming the DSL line, a
/// count of T's width or more gives 0; never the undefined C++ shift of a negative value or by
/// the width. `int32_t r = pto2_shl<int32_t>(m, k, "prog.py", 9);`
template <typename C>
inline void pto2_shift_count(C n, const char* file, int32_t line) {
  if constexpr (std::is_signed<C>::value) {
    if (n < 0) pto2_negative_shift(file, line);
  }
}
template <typename T, typename C>
inline T pto2_shl(T a, C n, const char* file, int32_t line) {
  pto2_shift_count(n, file, line);
  using U = typename std::make_unsigned<T>::type;
  if (static_cast<uint64_t>(n) >= sizeof(T) * 8) return T(0);
  return static_cast<T>(static_cast<U>(static_cast<U>(a) << static_cast<unsigned>(n)));
}
/// Python's `a >> n` (floor of a / 2^n): arithmetic for signed T, logical for unsigned; a count of
/// the width or more leaves 0, or -1 for a negative signed value; a negative count throws.
template <typename T, typename C>
inline T pto2_shr(T a, C n, const char* file, int32_t line) {
  pto2_shift_count(n, file, line);
  const unsigned width = sizeof(T) * 8;
  const unsigned count = static_cast<uint64_t>(n) >= width ? width - 1 : static_cast<unsigned>(n);
  if constexpr (std::is_signed<T>::value) {
    return static_cast<T>(a >> count);   // g++ shifts signed values arithmetically (the sign fills)
  } else {
    return static_cast<uint64_t>(n) >= width ? T(0) : static_cast<T>(a >> count);
  }
}
/// A scalar argument passed to an integer parameter of dtype `to` (INT8..UINT64) whose value
/// `to` may not hold: an integer that does not fit, and a float that is NaN, +-inf or whose
/// truncation toward zero (Python's int()) does not fit, throws naming the DSL line, the
/// argument and the value (passed as its low bits, or converted with the undefined C++ cast,
/// the callee would compute with another number). Returns the value's scalar slot:
/// `params.add_scalar(pto2_int_arg((int64_t)(n), DataType::INT32, "kernel_addk", "k", "prog.py", 13));`
/// The source is given as one of the three types (cast it: an int32_t would be ambiguous).
uint64_t pto2_int_arg(int64_t v, DataType to, const char* callee, const char* param, const char* file, int32_t line);
uint64_t pto2_int_arg(uint64_t v, DataType to, const char* callee, const char* param, const char* file, int32_t line);
uint64_t pto2_int_arg(double v, DataType to, const char* callee, const char* param, const char* file, int32_t line);
/// The stride `step * chunk` of a pl.auto_chunk loop whose step is known only at run time; an
/// int64 overflow throws naming the DSL line. `const int64_t s4 = pto2_chunk_stride(s, 4, "prog.py", 9);`
int64_t pto2_chunk_stride(int64_t step, int64_t chunk, const char* file, int32_t line);
