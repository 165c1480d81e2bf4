// tensor_check.h — what a submission checks of its tensors' fields. Tensor's fields are public,
// so a caller may write them by hand (shapes, strides, offset, ndims, dtype); a submission
// refuses what the runtime can decide (docs/runtime.md, "Tensors written by hand"): a rank above
// PTO2_MAX_DIMS, a dtype that is no DataType, a view whose bytes overflow int64, and a view of
// a runtime-allocated tensor reaching outside its storage. Whether strides written by hand stay
// inside external memory is the caller's duty: the runtime does not know that memory's size.
//
//     if (!tensors_fields_ok(params)) abort_orchestration(tensor_fields_error(params, who));
#pragma once

#include <cstdint>
#include <string>

#include "memory_pool.h"
#include "pto2/task.h"
#include "tensor_bytes.h"

namespace pto2::detail {

/// The exact check (128-bit), out of the common case's way.
inline bool tensor_fields_ok_exact(const Tensor& t) {
  if (t.ndims > PTO2_MAX_DIMS || !valid_dtype(t.dtype)) return false;
  __int128 lo = t.offset, hi = t.offset;  // elements, then bytes
  for (uint32_t i = 0; i < t.ndims; ++i) {
    if (t.shapes[i] == 0) return true;  // empty: touches no element, adds no dependency
    const __int128 d = static_cast<__int128>(t.shapes[i] - 1) * t.strides[i];
    (d < 0 ? lo : hi) += d;
  }
  const int64_t es = static_cast<int64_t>(dtype_size(t.dtype));
  lo *= es;
  hi = (hi + 1) * es;
  if (lo < INT64_MIN || hi > INT64_MAX) return false;
  return !t.storage || (lo >= 0 && hi <= static_cast<__int128>(t.storage->bytes));
}

/// The view's fields are ones the API could have made (see the file comment). Per submitted
/// tensor, so the common case is decided without a loop over the rank or 128-bit arithmetic:
/// every stride (all eight: zero past the rank in a tensor the API made) within +-2^24 elements
/// and the offset within +-2^58 keep every byte of the view inside int64 (eight axes of at most
/// 2^32 x 2^24 elements plus the offset stay below 2^60 elements, 2^63 bytes of 8-byte elements).
/// An external tensor is then fine; a runtime-allocated one is compared with its storage.
inline bool tensor_fields_ok(const Tensor& t) {
  // Unsigned: a value outside the window wraps to a high bit instead of overflowing.
  uint64_t far = (static_cast<uint64_t>(t.offset) + (uint64_t(1) << 58)) >> 59;
  for (uint32_t i = 0; i < PTO2_MAX_DIMS; ++i) far |= (static_cast<uint64_t>(t.strides[i]) + (uint64_t(1) << 24)) >> 25;
  if (__builtin_expect((far | (t.ndims > PTO2_MAX_DIMS) | !valid_dtype(t.dtype)) != 0 || t.storage != nullptr, 0))
    return tensor_fields_ok_exact(t);
  return true;
}

inline bool tensors_fields_ok(const Arg& params) {
  for (const Tensor& t : params.tensors())
    if (!tensor_fields_ok(t)) return false;
  return true;
}

/// Why the first tensor tensor_fields_ok refuses is refused: "`who`: tensor slot 1: ...".
std::string tensor_fields_error(const Arg& params, const std::string& who);

}  // namespace pto2::detail
