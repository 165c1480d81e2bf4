// tensor.write (anchor §11): store one element of a tensor from the orchestration.
//
//   tensor.write(t, [i, j], v)   -> type of t   (pl.tensor.write(t, [i, j], v), pl.write)
//
// One integer index per dimension; v a scalar of exactly t's dtype (use pl.cast). Codegen waits
// for every earlier reader and writer of the element, then stores it (set_tensor_data).
#include "../describe.h"
#include "op_util.h"
#include "pypto/ir/error.h"

namespace pypto::ir::ops {

using detail::describe;

void register_tensor_write_op(OpRegistry& r) {
  add_op(r, "tensor.write", {"tensor", "indices", "value"}, {},
         "Write one element of a tensor: pl.tensor.write(t, [i, j], v); the result is the tensor.",
         [](const std::vector<ExprPtr>& args, const Attrs&, const Span& span) -> TypePtr {
           auto* t = expect_tensor("tensor.write", "tensor", args[0], span);
           auto idx = expect_int_list("tensor.write", "indices", args[1], span);
           PYPTO_USER_CHECK(idx.size() == t->shape.size(), span,
                            "tensor.write: indices count (" << idx.size() << ") must match tensor rank ("
                                                             << t->shape.size() << ")",
                            "give one index per dimension, e.g. [i, j] for a 2-D tensor");
           expect_const_indices_inside("tensor.write", idx, t->shape, span);
           auto* v = expect_numeric_scalar("tensor.write", "value", args[2], span);
           PYPTO_USER_CHECK(v->dtype == t->dtype, span,
                            "tensor.write: value " << describe(args[2]->type) << " must have the tensor's dtype "
                                                   << to_string(t->dtype),
                            std::string("convert it first: pl.cast(v, pl.") + to_string(t->dtype) + ")");
           return args[0]->type;
         });
}

}  // namespace pypto::ir::ops
