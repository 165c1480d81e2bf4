// The op registry: every op the DSL exposes, with its type inference.
//
// An op is named "<namespace>.<name>": tensor.* (orchestration-level tensor ops), tile.*
// (kernel tile ops), system.* (task_dummy, task_invalid), array.* (create, get_element,
// update_element). Type inference receives the argument exprs and attrs and returns the
// result type, or throws UserError (with the call's span) on misuse: wrong arity, a scalar
// where a tile is expected, mismatched shapes or dtypes, ...
//
//   OpRegistry::global().get("tile.add")->infer(args, attrs, span)
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "pypto/ir/expr.h"

namespace pypto::ir {

struct OpInfo {
  std::string name;
  // Names of the positional expr args, for diagnostics and printing (e.g. {"tensor", "offsets", "shapes"}).
  std::vector<std::string> arg_names;
  // Trailing args from index `min_args` on are optional (scratch operands such as the
  // reference's `tmp` tiles): a call passes between min_args and arg_names.size() args.
  // SIZE_MAX: every arg is required.
  size_t min_args = static_cast<size_t>(-1);
  // Names of the attrs the op accepts (e.g. {"dtype"}); others are rejected by make_op.
  std::vector<std::string> attr_names;
  std::function<TypePtr(const std::vector<ExprPtr>& args, const Attrs& attrs, const Span& span)> infer;
  std::string doc;   // one line, shown in docs and errors
};

class OpRegistry {
 public:
  static OpRegistry& global();
  void add(OpInfo info);                          // InternalError on a duplicate name
  const OpInfo* get(const std::string& name) const;   // null if unknown
  std::vector<std::string> names() const;         // sorted
 private:
  std::map<std::string, OpInfo> ops_;
};

namespace ops {

// Verification of the op calls a CPU kernel body evaluates (src/ir/ops/kernel_op_check.cpp):
// UserError at the call's span for a call to another function, or an op that has no kernel
// meaning on the CPU (tensor.*, system.*, array.* ops; tile.store is the one tensor-valued op).
//
//   ops::check_kernel_tile_op(*call);     // call computes a tile
//   ops::check_kernel_tensor_op(*call);   // call yields a tensor: must be tile.store
void check_kernel_tile_op(const Call& call);
void check_kernel_tensor_op(const Call& call);

// The reference's cast modes (tile.cast mode=): "none"=0, "rint"=1, "round"=2, "floor"=3,
// "ceil"=4, "trunc"=5, "odd"=6; -1 for anything else. A digit string "0".."6" is accepted too.
//   CastModeIndex("floor") == 3
int CastModeIndex(const std::string& mode);

// The result dtype of tile.add/sub/mul/div on two tiles of different dtypes (spec
// reference_ops.md §1.3): a float beats an integer, the wider wins, at equal width a signed
// integer beats an unsigned one, otherwise the left operand's dtype.
//   PromoteDataTypes(DataType::INT32, DataType::FP16) == DataType::FP16
DataType PromoteDataTypes(DataType a, DataType b);

}  // namespace ops
}  // namespace pypto::ir
