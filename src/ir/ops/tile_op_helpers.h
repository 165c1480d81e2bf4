// Shared type-inference helpers of the tile op families (tile_ops*.cpp): rank / dtype checks
// that raise UserError with the call's span and name the op, 2-D broadcasting, attr readers.
//
//   auto* a = tile_helpers::expect_2d("tile.col_sum", "tile", args[0], span);
//   auto shape = tile_helpers::broadcast_2d("tile.add", args[0], args[1], span);
#pragma once
#include <string>
#include <vector>

#include "op_util.h"

namespace pypto::ir::ops::tile_helpers {

using Args = std::vector<ExprPtr>;

// Result dtype of a product (reference_ops.md §2): FP32 for float inputs, INT32 for integer ones.
//   matmul_dtype(DataType::INT8) == DataType::INT32
inline DataType matmul_dtype(DataType d) { return is_float(d) ? DataType::FP32 : DataType::INT32; }
// A tile of rank exactly 2.
const TileType* expect_2d(const std::string& op, const std::string& arg, const ExprPtr& e, const Span& span);
// Two tiles of one dtype ("dtype mismatch" with a pl.cast hint otherwise).
void same_dtype(const std::string& op, const ExprPtr& a, const ExprPtr& b, const Span& span);
// The NumPy broadcast of two tile shapes the CPU computes as 2-D views: equal shapes (any rank),
// or shapes of rank <= 2 whose right-aligned dims are equal or the constant 1.
//   [16, 32] with [1, 32] -> [16, 32];  [16, 1] with [1, 32] -> [16, 32];  [16] with [4, 16] -> [4, 16]
std::vector<ExprPtr> broadcast_2d(const std::string& op, const ExprPtr& a, const ExprPtr& b, const Span& span);
std::vector<ExprPtr> broadcast_2d(const std::string& op, const std::vector<ExprPtr>& a, const std::vector<ExprPtr>& b,
                                  const Span& span);
// The valid shape of a broadcast result (spec anchor_features §10): per axis the left operand's
// valid extent, or the right one's where the left operand is broadcast (its dim is not the
// result's). Empty when neither operand has a valid shape.
//   a [16, 1] valid [n, 1] with b [16, 32] -> [n, 32]
std::vector<ExprPtr> broadcast_valid(const TileType* a, const TileType* b, const std::vector<ExprPtr>& shape);
// The optional drop_dims attr of slice / load (anchor_features §10): distinct axes in [0, rank),
// each with the constant extent 1 in `shapes`; returns them ascending (empty when absent).
//   drop_dims=[0] with shapes [1, 32, 16] -> {0}
std::vector<int64_t> check_drop_dims(const std::string& op, const Attrs& attrs, const std::vector<ExprPtr>& shapes,
                                     const Span& span);
// `v` without the axes `drop` (ascending).
std::vector<ExprPtr> without_axes(const std::vector<ExprPtr>& v, const std::vector<int64_t>& drop);
// The optional pad_value attr of slice (anchor_features §10): "null", "zero", "max" or "min"
// (pl.PadValue.*); a UserError naming `op` otherwise.
void check_pad_value(const std::string& op, const Attrs& attrs, const Span& span);
// "tile.shl: requires integer tile dtype, but got FP32".
void expect_int_dtype(const std::string& op, const std::string& what, DataType d, const Span& span);
// A scalar operand that is an integer ("requires shift/bitwise scalar to be an integer type").
void expect_int_scalar_operand(const std::string& op, const ExprPtr& e, const Span& span);
// An optional scratch tile (`tmp`): if passed it must be a tile.
void optional_tile(const std::string& op, const std::string& arg, const Args& args, size_t i, const Span& span);
// An integer attr, `def` when absent; UserError when present and not an int.
int64_t attr_int(const std::string& op, const Attrs& attrs, const std::string& key, int64_t def, const Span& span);
// ceil(c / 8) rounded up to a multiple of 32: the byte width of a packed cmp mask row.
int64_t mask_cols(int64_t cols);
// A list of positive constant dims (a tile shape literal) of rank 1..max_rank.
std::vector<ExprPtr> expect_const_shape(const std::string& op, const std::string& arg, const ExprPtr& e, const Span& span,
                                        size_t max_rank = 2);
// Registration with optional trailing args: args [min_args, arg_names.size()) may be left out.
void add_op_opt(OpRegistry& r, std::string name, std::vector<std::string> arg_names, size_t min_args,
                std::vector<std::string> attr_names, std::string doc, decltype(OpInfo::infer) infer);

}  // namespace pypto::ir::ops::tile_helpers
