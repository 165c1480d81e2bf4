// The per-call fast path of CompiledProgram.__call__ (issue 17: the fixed cost of a call), in
// C++: a CallPlan is built once per compiled program from its entry signature; marshal(args)
// checks the common call -- every parameter passed positionally, tensors as C-contiguous,
// aligned NumPy arrays of an accepted dtype and the declared shape (written ones writeable),
// scalars as Python numbers that fit, no two arrays overlapping where one is written -- and
// fills a MarshalledCall with the pto2_tensor_arg / scalar bits the runtime takes. Anything
// else returns None, and the caller runs the full checker (pypto.runtime.args), which accepts
// or rejects with located messages: the plan only ever accepts calls the full checker accepts,
// with the same slots (tests/python/test_call_plan.py compares the two on random calls).
//
//     plan = abi.CallPlan(np.ndarray, entries, n_args, n_tensors, n_scalars)
//     call = plan.marshal((a, b, c))        # MarshalledCall, or None
//     ok, message, stats = rt.run_call(call)
#pragma once

#include <cstdint>
#include <vector>

#include <nanobind/nanobind.h>

#include "pto2_c_api.h"

namespace pypto::bindings {

__extension__ typedef __int128 Int128;  // a scalar's range: int64 and uint64 bounds alike

/// One call's arguments in the runtime's form. Holds the argument tuple, so the arrays (and
/// their memory) live as long as the call does.
struct MarshalledCall {
  MarshalledCall() = default;
  MarshalledCall(MarshalledCall&&) = default;
  MarshalledCall(const MarshalledCall&) = delete;  // tensors point into this object's shapes
  MarshalledCall& operator=(const MarshalledCall&) = delete;
  nanobind::object args;
  std::vector<pto2_tensor_arg> tensors;   // by slot; shapes point into `shapes`
  std::vector<uint32_t> shapes;           // kMaxRank per tensor slot
  std::vector<uint64_t> scalars;          // bit patterns by slot
  static constexpr uint32_t kMaxRank = 8;
};

/// What to check of one parameter, and where it goes.
struct ParamPlan {
  uint32_t arg = 0;            // position in the call
  uint32_t slot = 0;           // tensor or scalar slot
  bool tensor = false;
  // tensors
  std::vector<nanobind::object> accepted;  // NumPy dtypes
  int32_t dtype_code = 0;
  uint32_t itemsize = 1;
  std::vector<int64_t> shape;  // >= 0: the extent; < 0: dynamic symbol -(k + 1)
  bool written = false;
  // scalars: 0 an integer in [lo, hi], 1 a float32, 2 a bool
  int kind = 0;
  Int128 lo = 0, hi = 0;
};

class CallPlan {
 public:
  /// A tensor argument's bytes, for the overlap check.
  struct Span {
    uintptr_t lo, hi;
    bool written;
  };

  /// `entries`, one per parameter in call order: ("tensor", slot, accepted dtypes, dtype code,
  /// itemsize, shape (ints >= 0, or -(k + 1) for the k-th dynamic symbol), written) or
  /// ("scalar", slot, kind "int" / "float" / "bool", lo, hi).
  CallPlan(nanobind::handle ndarray_type, const nanobind::list& entries, uint32_t n_tensors, uint32_t n_scalars,
           uint32_t n_symbols);

  /// A MarshalledCall for the common call, or None (see the file comment).
  nanobind::object marshal(const nanobind::tuple& args) const;

 private:
  bool marshal_tensor(const ParamPlan& p, PyObject* v, MarshalledCall& call, std::vector<int64_t>& dims,
                      Span& span) const;
  static bool marshal_scalar(const ParamPlan& p, PyObject* v, uint64_t& bits);

  nanobind::object ndarray_type_;
  std::vector<ParamPlan> params_;
  uint32_t n_tensors_, n_scalars_, n_symbols_;
};

/// Binds CallPlan and MarshalledCall into `abi` (pypto._core.program_abi).
void bind_call_plan(nanobind::module_& abi);

}  // namespace pypto::bindings
