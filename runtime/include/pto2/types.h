// pto2/types.h — data types, tensors and orchestration arguments of the PTO2 runtime.
//
// A Tensor is a *view* of storage: a base pointer (`data`), an element offset, and per-axis
// shapes and strides (in elements). Views of the same storage share `data`; automatic
// dependency tracking keys on it, so a view made with Tensor::view() is seen as overlapping
// its source. All functions here are pure value operations and are thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <type_traits>
#include <vector>

#include "pto2/half_float.h"   // half_to_float, float_to_half, ... (inline: kernels share them)

/// Element types. Values are stable (the C API passes them as int32).
enum class DataType : uint8_t {
  FLOAT32, FLOAT16, BFLOAT16, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64, BOOL
};

/// Size in bytes of one element of `dt`.  `dtype_size(DataType::FLOAT16) == 2`.
inline size_t dtype_size(DataType dt) {
  switch (dt) {
    case DataType::FLOAT32: case DataType::INT32: case DataType::UINT32: return 4;
    case DataType::FLOAT16: case DataType::BFLOAT16: case DataType::INT16: case DataType::UINT16: return 2;
    case DataType::INT8: case DataType::UINT8: case DataType::BOOL: return 1;
    case DataType::INT64: case DataType::UINT64: return 8;
  }
  return 1;
}
/// Printable name ("float32", ...).
const char* dtype_name(DataType dt);

constexpr uint32_t PTO2_MAX_DIMS = 8;

/// Runtime-owned allocation record (opaque). nullptr for external memory.
struct PTO2Storage;

namespace pto2 {
struct TensorFactory;
}
struct CoreTaskPredicate;

/// A strided N-d view of storage. Trivially copyable; copying never copies data.
/// 128 bytes, laid out without padding. Like the real PTO2 runtime's Tensor it has no public
/// default constructor: a Tensor always comes from an entry argument, a submission, an
/// allocation or a view (`Tensor t = from_tensor_arg(orch_args.tensor(0));`).
struct Tensor {
  uint32_t shapes[PTO2_MAX_DIMS] = {};
  void* data = nullptr;                  ///< storage base (identity for dependency tracking)
  int64_t offset = 0;                    ///< in elements, from `data`
  PTO2Storage* storage = nullptr;        ///< internal: runtime allocation (lifetime), or nullptr
  uint32_t ndims = 0;
  DataType dtype = DataType::FLOAT32;
  bool manual_dep = false;               ///< true: tasks touching it skip automatic tracking
  int64_t strides[PTO2_MAX_DIMS] = {};   ///< in elements

  /// Sub-box of the same rank: `shapes[i]` elements starting at `offsets[i]` on axis i.
  /// `Tensor tile = t.view(sh, off);`  Throws std::out_of_range if it leaves the source. A zero
  /// extent is accepted at any offset (a clamped slice past the end, spec anchor_features §18):
  /// the view is empty, touches no element and adds no dependency.
  Tensor view(const uint32_t* view_shapes, const uint32_t* view_offsets) const {
    // Ranks up to 4 (nearly every tensor) straight-line: one case per rank, falling through
    // the axes at constant positions (no per-axis loop, branch or variable shift). Anything
    // unusual — a rank above 4 or past the arrays, an axis outside the source (an error, or an
    // empty view clamped past the end) — is redone out of line by view_wide, axis by axis in
    // order, as the loop always did.
    if (__builtin_expect(ndims > 4, 0)) return view_wide(view_shapes, view_offsets);
    Tensor v = *this;
    static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "shapes[2k] is the low half of pair k");
    uint64_t pair[2];  // shapes[0..3] as two words: shapes[2k] | shapes[2k+1] << 32
    std::memcpy(pair, shapes, sizeof pair);
    uint64_t offset_add = 0;
    bool outside = false;
    // The caller's arrays hold `ndims` entries: the cases above the rank are never run, but g++
    // cannot see that once the view is inlined next to a shorter array (-Warray-bounds, a failed
    // -Werror build). The empty asm hides which arrays these point into. (A `#pragma GCC
    // diagnostic` is no help: GCC 12 drops it from the precompiled header pypto's builds use.)
    asm("" : "+r"(view_shapes), "+r"(view_offsets));
    const auto axis = [&](uint32_t i) __attribute__((always_inline)) {
      const uint32_t off = view_offsets[i];
      outside |= static_cast<uint64_t>(off) + view_shapes[i] > shapes[i];
      offset_add += static_cast<uint64_t>(off) * static_cast<uint64_t>(strides[i]);
      const uint32_t half = 32 * (i & 1);
      pair[i / 2] = (pair[i / 2] & ~(uint64_t{0xffffffffu} << half)) | (static_cast<uint64_t>(view_shapes[i]) << half);
    };
    switch (ndims) {
      case 4: axis(3); [[fallthrough]];
      case 3: axis(2); [[fallthrough]];
      case 2: axis(1); [[fallthrough]];
      case 1: axis(0); [[fallthrough]];
      default: break;
    }
    if (__builtin_expect(outside, 0)) return view_wide(view_shapes, view_offsets);
    typedef uint64_t Word __attribute__((vector_size(16)));
    const Word lo = {pair[0], pair[1]};
    std::memcpy(v.shapes, &lo, sizeof lo);
    offset_add += static_cast<uint64_t>(offset);
    if constexpr (sizeof(void*) == sizeof(uint64_t)) {  // data and offset share one word
      const Word where = {static_cast<uint64_t>(reinterpret_cast<uintptr_t>(data)), offset_add};
      std::memcpy(reinterpret_cast<char*>(&v) + offsetof(Tensor, data), &where, sizeof where);
    } else {
      v.offset = static_cast<int64_t>(offset_add);
    }
    return v;
  }
  /// view() axis by axis (out of line): ranks above 4, and views reaching outside the source.
  Tensor view_wide(const uint32_t* view_shapes, const uint32_t* view_offsets) const;
  /// Swap axes `a` and `b` (shapes and strides), zero copy. Throws std::out_of_range for an axis
  /// not below ndims, std::invalid_argument for a rank above PTO2_MAX_DIMS (a field written by hand).
  Tensor transpose(uint32_t a, uint32_t b) const;
  /// The same elements, row-major, under a new shape: a zero-copy view of the same storage
  /// (so automatic tracking sees it overlapping its source). Throws std::invalid_argument when
  /// the view is not contiguous or the element counts differ.
  /// `uint32_t r_shapes[2] = {1, 256}; Tensor r = src.reshape(r_shapes, 2);`
  Tensor reshape(const uint32_t* new_shapes, uint32_t new_ndims) const;
  /// Pointer to the first element of the view (data + offset).
  template <class T>
  T* ptr() const {
    return reinterpret_cast<T*>(static_cast<char*>(data) + offset * static_cast<int64_t>(dtype_size(dtype)));
  }
  /// Pointer to element `idx[0..ndims)`.
  template <class T>
  T* ptr_at(const int64_t* idx) const {
    return reinterpret_cast<T*>(static_cast<char*>(data) + element_offset(idx) * static_cast<int64_t>(dtype_size(dtype)));
  }
  /// Absolute element offset (from `data`) of index `idx[0..ndims)`. Throws std::invalid_argument
  /// for a rank above PTO2_MAX_DIMS and std::out_of_range when the offset overflows int64
  /// (strides or an offset written by hand); the indices themselves are the caller's to bound.
  int64_t element_offset(const int64_t* idx) const;
  /// Elements of the view; throws std::invalid_argument for a rank above PTO2_MAX_DIMS or a
  /// count past int64 (extents written by hand).
  int64_t numel() const;
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype); }
  /// Row-major without gaps; throws std::invalid_argument for a rank above PTO2_MAX_DIMS.
  bool is_contiguous() const;

 private:
  friend struct pto2::TensorFactory;
  friend struct CoreTaskPredicate;
  Tensor() = default;
  [[noreturn]] void view_out_of_range(uint32_t axis, uint32_t view_shape, uint32_t view_offset) const;
  /// view() of a tensor whose fields were written by hand: `what` 0 = a rank above
  /// PTO2_MAX_DIMS (the only case view() refuses; 1..ndims + 1 name an offset past int64).
  [[noreturn]] void view_invalid(uint32_t rank, uint32_t what) const;
};

namespace pto2 {
/// Runtime-internal: the one place that makes an empty Tensor (rank 0, no data) to fill in.
/// `Tensor t = pto2::TensorFactory::blank();`
struct TensorFactory {
  static Tensor blank() { return Tensor(); }
};
}  // namespace pto2

static_assert(sizeof(void*) != 8 || sizeof(Tensor) == 128, "Tensor is 128 bytes without padding on 64-bit targets");
static_assert(sizeof(void*) != 8 || offsetof(Tensor, offset) == offsetof(Tensor, data) + 8,
              "Tensor::view stores data and offset as one 16-byte word");

/// Contiguous row-major strides for `shapes` into `strides`.
void pto2_row_major_strides(const uint32_t* shapes, uint32_t ndims, int64_t* strides);

/// Wraps caller-owned memory as a contiguous row-major tensor (the runtime never frees it).
/// Throws std::invalid_argument for a rank above PTO2_MAX_DIMS or a shape of more than 2^63 - 1
/// bytes, an empty axis counted as 1 (no memory holds it; its views' offsets would overflow), or a
/// dtype that is not a DataType enumerator (an int cast to DataType), and a NULL `data` for a
/// tensor with elements.
/// `float buf[16*16]; uint32_t sh[2] = {16, 16}; Tensor t = make_tensor_external(buf, sh, 2, DataType::FLOAT32);`
Tensor make_tensor_external(void* data, const uint32_t* shapes, uint32_t ndims, DataType dtype);

/// One tensor argument of an orchestration entry.
struct ChipTensorArg {
  Tensor tensor;
  const Tensor& ref() const { return tensor; }
};

/// The arguments of an orchestration entry: tensors and 64-bit scalars, by slot.
struct ChipStorageTaskArgs {
  std::vector<ChipTensorArg> tensors;
  std::vector<uint64_t> scalars;

  const ChipTensorArg& tensor(uint32_t i) const;  ///< throws std::out_of_range
  uint64_t scalar(uint32_t i) const;               ///< throws std::out_of_range
  uint32_t tensor_count() const { return static_cast<uint32_t>(tensors.size()); }
  uint32_t scalar_count() const { return static_cast<uint32_t>(scalars.size()); }
  void add_tensor(const Tensor& t) { tensors.push_back(ChipTensorArg{t}); }
  void add_scalar(uint64_t v) { scalars.push_back(v); }
};

/// The Tensor of an entry argument (a copy of the view).
Tensor from_tensor_arg(const ChipTensorArg& arg);

/// What the generated `aicpu_orchestration_config` returns.
struct PTO2OrchestrationConfig {
  uint32_t expected_arg_count;
};

/// Description of a runtime-allocated tensor (shapes are copied). The constructor throws
/// std::invalid_argument for a rank above PTO2_MAX_DIMS or a dtype that is not a DataType.
struct TensorCreateInfo {
  TensorCreateInfo(const uint32_t* shapes, uint32_t ndims, DataType dtype, bool manual_dep = false);
  /// alloc_tensors fills the new tensor with `v` converted to `dtype` before any task can
  /// touch it (`pl.create_tensor(..., init_value=v)`). Only alloc_tensors honours it; an
  /// `Arg::add_output(info)` slot is never filled.  `c_ci.set_initial_value(static_cast<float>(0.25));`
  template <class T>
  void set_initial_value(T v) {
    has_initial_value = true;
    initial_value = static_cast<double>(v);
  }
  uint32_t shapes[PTO2_MAX_DIMS] = {};
  uint32_t ndims = 0;
  DataType dtype = DataType::FLOAT32;
  bool manual_dep = false;
  bool has_initial_value = false;
  double initial_value = 0.0;
};

/// Bit-casts a scalar into a 64-bit scalar slot. A float lands in the low 32 bits.
inline uint64_t to_u64(float v) {
  uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  return u;
}
inline uint64_t to_u64(double v) {
  uint64_t u;
  std::memcpy(&u, &v, sizeof u);
  return u;
}
template <class T, typename std::enable_if<std::is_integral<T>::value || std::is_enum<T>::value, int>::type = 0>
inline uint64_t to_u64(T v) {
  return static_cast<uint64_t>(v);
}

namespace pto2 {

/// Fills the `numel` contiguous elements at `data` (of type `dt`) with `v` converted to `dt`
/// (floats truncate toward zero for integer types).  `pto2::fill_elements(p, 256, DataType::INT32, 7.0);`
void fill_elements(void* data, size_t numel, DataType dt, double v);

/// Loads the element at `p` (of type `dt`) converted to T (floats truncate toward zero for integer T).
template <class T>
T load_as(const void* p, DataType dt) {
  switch (dt) {
    case DataType::FLOAT32: { float v; std::memcpy(&v, p, 4); return static_cast<T>(v); }
    case DataType::FLOAT16: { uint16_t v; std::memcpy(&v, p, 2); return static_cast<T>(half_to_float(v)); }
    case DataType::BFLOAT16: { uint16_t v; std::memcpy(&v, p, 2); return static_cast<T>(bfloat16_to_float(v)); }
    case DataType::INT8: return static_cast<T>(*static_cast<const int8_t*>(p));
    case DataType::INT16: { int16_t v; std::memcpy(&v, p, 2); return static_cast<T>(v); }
    case DataType::INT32: { int32_t v; std::memcpy(&v, p, 4); return static_cast<T>(v); }
    case DataType::INT64: { int64_t v; std::memcpy(&v, p, 8); return static_cast<T>(v); }
    case DataType::UINT8: return static_cast<T>(*static_cast<const uint8_t*>(p));
    case DataType::UINT16: { uint16_t v; std::memcpy(&v, p, 2); return static_cast<T>(v); }
    case DataType::UINT32: { uint32_t v; std::memcpy(&v, p, 4); return static_cast<T>(v); }
    case DataType::UINT64: { uint64_t v; std::memcpy(&v, p, 8); return static_cast<T>(v); }
    case DataType::BOOL: return static_cast<T>(*static_cast<const uint8_t*>(p) != 0);
  }
  return T{};
}
}  // namespace pto2
