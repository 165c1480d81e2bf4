// array.* ops: fixed-size arrays of scalars (TaskId arrays for loop-carried dependencies).
//
//   array.create() size=4 dtype="TASK_ID"   -> Array[4, TASK_ID]
//   array.get_element(arr, k)               -> Scalar[arr.dtype]
//   array.update_element(arr, k, v)         -> type of arr (SSA: a new array value)
#include "../describe.h"
#include "op_util.h"
#include "pypto/ir/const_integer.h"
#include "pypto/ir/error.h"

namespace pypto::ir::ops {

using detail::describe;

namespace {

void check_index(const std::string& op, const ArrayType* a, const ExprPtr& idx, const Span& span) {
  expect_int_scalar(op, "index", idx, span);
  // Literals alone (`w[N + 1]` with a module constant N) are known here too, not only at run time.
  if (auto c = ConstIntegerValue(idx)) {
    PYPTO_USER_CHECK(*c >= 0 && *c < a->size, span,
                     op << ": index " << *c << " out of range for Array[" << a->size << ", " << to_string(a->dtype) << "]",
                     "index a slot from 0 to " + std::to_string(a->size - 1) +
                         " (a negative index does not count from the end); an index known only at run time is "
                         "checked when the orchestration runs");
  }
}

}  // namespace

// The most slots of one pl.array (65,536: 512 KiB of 8-byte slots, and a copy per if / loop exit).
constexpr int64_t kMaxArraySlots = int64_t{1} << 16;

void register_array_ops(OpRegistry& r) {
  add_op(r, "array.create", {}, {"size", "dtype"}, "A new fixed-size array of scalars: pl.array.create(N, dtype).",
         [](const std::vector<ExprPtr>&, const Attrs& attrs, const Span& span) -> TypePtr {
           auto* n = attr_get<int64_t>(attrs, "size");
           PYPTO_USER_CHECK(n, span, "array.create: missing integer size", "e.g. pl.array.create(4, pl.TASK_ID)");
           PYPTO_USER_CHECK(*n > 0, span, "array.create: size must be positive, got " << *n, "");
           // An array is a C array of the generated function (its stack): 3,000,000 FP32 slots
           // killed the process with SIGSEGV.
           PYPTO_USER_CHECK(*n <= kMaxArraySlots, span,
                            "array.create: size " << *n << " is more than " << kMaxArraySlots
                                                  << " slots (an array lives on the orchestration's stack)",
                            "keep large data in a tensor: pl.create_tensor([n], dtype) with pl.tensor.read / "
                            "pl.tensor.write");
           DataType d = attr_dtype("array.create", attrs, span);
           return ArrayType::make(*n, d);
         });

  add_op(r, "array.get_element", {"array", "index"}, {}, "Read one slot of an array: arr[k].",
         [](const std::vector<ExprPtr>& args, const Attrs&, const Span& span) -> TypePtr {
           auto* a = expect_array("array.get_element", "array", args[0], span);
           check_index("array.get_element", a, args[1], span);
           return ScalarType::make(a->dtype);
         });

  add_op(r, "array.update_element", {"array", "index", "value"}, {},
         "The array with slot k replaced by value: arr[k] = v (a new SSA array value).",
         [](const std::vector<ExprPtr>& args, const Attrs&, const Span& span) -> TypePtr {
           auto* a = expect_array("array.update_element", "array", args[0], span);
           check_index("array.update_element", a, args[1], span);
           auto* v = args[2]->type->as<ScalarType>();
           bool ok = v && (a->dtype == DataType::TASK_ID ? v->dtype == DataType::TASK_ID : v->dtype != DataType::TASK_ID);
           PYPTO_USER_CHECK(ok, span,
                            "array.update_element: cannot store " << describe(args[2]->type) << " into " << describe(args[0]->type),
                            a->dtype == DataType::TASK_ID ? "store a TaskId (from pl.submit, pl.at ... as tid, ...)" : "");
           return args[0]->type;
         });
}

}  // namespace pypto::ir::ops
