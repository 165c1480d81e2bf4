// tensor_bytes.h — the byte count of a tensor the runtime allocates, checked: Tensor::nbytes()
// multiplies without a check, and [2^31, 2^31] FP32 (2^64 bytes) came out as 0, so the tasks
// writing the tensor wrote through a zero-byte buffer. Both allocation paths (alloc_tensors and
// Arg::add_output(TensorCreateInfo)) ask this first and fail the run naming the shape.
//
//     size_t bytes;
//     if (!checked_tensor_bytes(t.shapes, t.ndims, t.dtype, &bytes))
//       abort_orchestration(too_large_tensor(t.shapes, t.ndims, t.dtype, limit));
#pragma once

#include <cstdint>
#include <string>

#include "pto2/types.h"

namespace pto2::detail {

/// True for the DataType enumerators (FLOAT32..BOOL); an int cast to DataType may be anything.
inline bool valid_dtype(DataType dt) { return static_cast<uint8_t>(dt) <= static_cast<uint8_t>(DataType::BOOL); }

/// "dtype 200 is not a DataType (0..11, FLOAT32..BOOL)" (for messages).
inline std::string invalid_dtype_text(DataType dt) {
  return "dtype " + std::to_string(static_cast<unsigned>(dt)) + " is not a DataType (0..11, FLOAT32..BOOL)";
}

/// A NULL data pointer of a tensor with elements: kernels would read and write through it
/// (make_tensor_external, the C API and Runtime::run refuse it; an empty tensor may be NULL).
inline bool null_data_with_elements(const void* data, const uint32_t* shapes, uint32_t ndims) {
  if (data) return false;
  for (uint32_t d = 0; d < ndims; ++d)
    if (shapes[d] == 0) return false;
  return true;
}

/// The bytes of a row-major `shapes` tensor of `dt`, or false when they do not fit int64 — or
/// when its span does not: the product of its extents with an empty axis (0) counted as 1. An
/// empty [0, 2^32-1, 2^32-1] tensor holds no byte, but its row-major strides, its views'
/// offsets and the dependency tracker's byte intervals of them would overflow int64.
/// Also bounds what its views can reach: a view may start one past the end on every axis (an
/// empty view at offset == extent), so `base_offset` (elements) plus the sum over axes of
/// extent x row-major stride must fit int64 in bytes too (Tensor::view adds them unchecked).
inline bool checked_tensor_bytes(const uint32_t* shapes, uint32_t ndims, DataType dt, size_t* bytes,
                                 int64_t base_offset = 0) {
  if (!valid_dtype(dt)) return false;  // too_large_tensor names it
  uint64_t span = 1, ends = static_cast<uint64_t>(base_offset < 0 ? 0 : base_offset) + 1;
  bool empty = false;
  for (uint32_t d = ndims; d-- > 0;) {
    empty |= shapes[d] == 0;
    if (__builtin_mul_overflow(span, static_cast<uint64_t>(shapes[d] ? shapes[d] : 1), &span)) return false;
    if (__builtin_add_overflow(ends, span, &ends)) return false;
  }
  uint64_t end_bytes = 0;
  if (__builtin_mul_overflow(ends, static_cast<uint64_t>(dtype_size(dt)), &end_bytes) ||
      end_bytes > static_cast<uint64_t>(INT64_MAX))
    return false;
  *bytes = empty ? 0 : static_cast<size_t>(span * dtype_size(dt));
  return true;
}

/// "[a, b]" (for messages).
inline std::string shape_text(const uint32_t* shapes, uint32_t ndims) {
  std::string s = "[";
  for (uint32_t d = 0; d < ndims; ++d) s += (d ? ", " : "") + std::to_string(shapes[d]);
  return s + "]";
}

/// The run's error for a tensor checked_tensor_bytes refuses (or for its invalid dtype): "allocation of a tensor [a, b] FP32
/// needs more than 2^63 bytes; the memory limit is N bytes".
inline std::string too_large_tensor(const uint32_t* shapes, uint32_t ndims, DataType dt, uint64_t memory_limit) {
  if (!valid_dtype(dt)) return "allocation of a tensor " + shape_text(shapes, ndims) + ": " + invalid_dtype_text(dt);
  bool empty = false;
  for (uint32_t d = 0; d < ndims; ++d) empty |= shapes[d] == 0;
  return "allocation of a tensor " + shape_text(shapes, ndims) + " " + dtype_name(dt) +
         (empty ? " (empty) spans more than 2^63 bytes (its extents multiplied, an empty axis counted as 1)"
                : " needs more than 2^63 bytes") +
         " (counting its views' one-past-the-end offsets); the memory limit is " + std::to_string(memory_limit) +
         " bytes";
}

}  // namespace pto2::detail
