// Shared helpers for op type inference (src/ir/ops/*_ops.cpp): argument-kind checks that
// raise UserError with the call's span, list/shape helpers, and attr readers.
//
//   auto* t = expect_tensor("tensor.read", "t", args[0], span);
//   auto idx = expect_int_list("tensor.read", "indices", args[1], span);
#pragma once
#include <string>
#include <vector>

#include "pypto/ir/op_registry.h"

namespace pypto::ir::ops {

// Registration functions, one per op namespace; called once by OpRegistry::global().
void register_tensor_ops(OpRegistry& r);
void register_tensor_compute_ops(OpRegistry& r);   // tensor.<op> mirrors of tile ops (tensor_compute_ops.cpp)
// The <op> names of those mirrors: {"add", "sub", ..., "matmul", "cast", "full"}.
const std::vector<std::string>& tensor_compute_op_names();
// Whether operand `index` of mirror tensor.<name> stays a tensor in the tile op (gather_row's src).
bool tensor_op_keeps_tensor(const std::string& name, size_t index);
void register_tile_ops(OpRegistry& r);
void register_system_ops(OpRegistry& r);
void register_pipe_buffer_ops(OpRegistry& r);   // system_pipe_buffer_ops.cpp (anchor_features §8)
void register_array_ops(OpRegistry& r);
// The reference tile op families (tile_ops_*.cpp), called by register_tile_ops.
void register_tile_elementwise_ops(OpRegistry& r);
void register_tile_reduce_ops(OpRegistry& r);
void register_tile_layout_ops(OpRegistry& r);
void register_tile_matmul_ops(OpRegistry& r);
void register_tile_accelerator_ops(OpRegistry& r);
void register_tile_access_ops(OpRegistry& r);   // tile_ops_access.cpp
void register_tensor_write_op(OpRegistry& r);   // tensor_ops_write.cpp
// tile.store's atomic= attr: absent, "None_" or "Add" (FP32/FP16/INT32/INT16/INT8 only).
void check_store_atomic(const Attrs& attrs, DataType tensor_dtype, const Span& span);

const TensorType* expect_tensor(const std::string& op, const std::string& arg, const ExprPtr& e, const Span& span);
const TileType* expect_tile(const std::string& op, const std::string& arg, const ExprPtr& e, const Span& span);
const ArrayType* expect_array(const std::string& op, const std::string& arg, const ExprPtr& e, const Span& span);
// A scalar of a numeric dtype (not TASK_ID).
const ScalarType* expect_numeric_scalar(const std::string& op, const std::string& arg, const ExprPtr& e, const Span& span);
// A scalar of an integer dtype (ConstInt or an integer scalar expr).
void expect_int_scalar(const std::string& op, const std::string& arg, const ExprPtr& e, const Span& span);
// A MakeTuple of integer scalars (a shape, an offset list, an index list), its entries of literal
// arithmetic alone (`4 * 4`) returned as their ConstInt value (ConstIntegerValue).
std::vector<ExprPtr> expect_int_list(const std::string& op, const std::string& arg, const ExprPtr& e, const Span& span);
// Constant element indices lie inside the constant extents: `0 <= idx[k] < shape[k]` wherever both are
// ConstInt (read / write of one element; run-time indices are checked when the program runs).
void expect_const_indices_inside(const std::string& op, const std::vector<ExprPtr>& idx,
                                 const std::vector<ExprPtr>& shape, const Span& span);
// offset + size as text for an error message, without a signed overflow for an offset near
// INT64_MAX (then "offset + size").
std::string block_end(int64_t offset, int64_t size);
// A ConstInt (axis numbers and such).
int64_t expect_const_int(const std::string& op, const std::string& arg, const ExprPtr& e, const Span& span);

// Dims equal: equal constants, or structurally equal exprs.
bool dim_equal(const ExprPtr& a, const ExprPtr& b);
bool shape_equal(const std::vector<ExprPtr>& a, const std::vector<ExprPtr>& b);

// Attr readers. `required` attrs missing -> UserError; a bad spelling -> UserError.
DataType attr_dtype(const std::string& op, const Attrs& attrs, const Span& span);          // "dtype", required
bool attr_memory(const std::string& op, const Attrs& attrs, const Span& span, MemorySpace* out);  // "target_memory", optional
void expect_bool_attr(const std::string& op, const Attrs& attrs, const std::string& key, const Span& span);  // if present

// Convenience for registration.
void add_op(OpRegistry& r, std::string name, std::vector<std::string> arg_names, std::vector<std::string> attr_names,
            std::string doc, decltype(OpInfo::infer) infer);

}  // namespace pypto::ir::ops
