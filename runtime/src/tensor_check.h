// tensor_check.h — what a submission checks of its tensors' fields. Tensor's fields are public,
// so a caller may write them by hand (shapes, strides, offset, ndims, dtype); a submission
// refuses a rank above PTO2_MAX_DIMS and a dtype that is no DataType (docs/runtime.md, "Tensors
// written by hand"), which the runtime's own code would index and size with.
//
//     if (!tensors_fields_ok(params)) abort_orchestration(tensor_fields_error(params, who));
#pragma once

#include <cstdint>
#include <string>

#include "pto2/task.h"
#include "tensor_bytes.h"

namespace pto2::detail {

/// What a submission checks per tensor: the rank and the dtype, which the runtime's own code
/// indexes and sizes with (one branch per tensor). The span (int64 overflow, a runtime tensor's
/// storage) is not checked here: the exact check cost 4-5 ns per tensor, +30-60 % per task on
/// the AUTO benchmarks (commit message); a view the API made is inside its source, and fields
/// written by hand are the caller's duty (docs/runtime.md, "Tensors written by hand").
inline bool tensor_fields_ok(const Tensor& t) {
  return __builtin_expect(((t.ndims > PTO2_MAX_DIMS) | !valid_dtype(t.dtype)) == 0, 1);
}

inline bool tensors_fields_ok(const Arg& params) {
  for (const Tensor& t : params.tensors())
    if (!tensor_fields_ok(t)) return false;
  return true;
}

/// Why the first tensor tensor_fields_ok refuses is refused: "`who`: tensor slot 1: ...".
std::string tensor_fields_error(const Arg& params, const std::string& who);

}  // namespace pto2::detail
