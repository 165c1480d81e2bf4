// Reference reductions and row / column broadcasts (spec/reference_ops.md §6–7), 2-D tiles.
//
//   tile.row_prod(x[M, N])                 -> Tile[[M, 1]]
//   tile.col_sum(x[M, N]) (col_max, ...)   -> Tile[[1, N]]
//   tile.row_expand_max(x[M, N], r[M, 1])  -> type of x        (also min, expdif, plain row_expand)
//   tile.col_expand_add(x[M, N], c[1, N])  -> type of x        (also sub, mul, div, max, min, expdif)
#include "../describe.h"
#include "pypto/ir/error.h"
#include "tile_op_helpers.h"

namespace pypto::ir::ops {

using namespace tile_helpers;
using detail::describe_shape;

namespace {

void add_col_reduce(OpRegistry& r, const std::string& name, const std::string& what, bool has_tmp) {
  const std::string op = "tile." + name;
  std::vector<std::string> names = {"tile"};
  if (has_tmp) names.push_back("tmp_tile");
  add_op_opt(r, op, names, 1, {}, "Column-wise " + what + " of a [M, N] tile, giving a [1, N] tile.",
             [op](const Args& args, const Attrs&, const Span& span) -> TypePtr {
               auto* a = expect_2d(op, "tile", args[0], span);
               if (args.size() > 1) {
                 auto* t = expect_tile(op, "tmp_tile", args[1], span);
                 PYPTO_USER_CHECK(t->dtype == a->dtype, span, op << ": requires tmp_tile dtype to match the input's",
                                  "");
               }
               // The rows are reduced; the valid columns stay valid (spec reference_ops.md §1.5).
               std::vector<ExprPtr> valid;
               if (a->has_valid_shape()) valid = {ConstInt::make(1), a->valid_shape[1]};
               return TileType::make({ConstInt::make(1), a->shape[1]}, a->dtype, MemorySpace::Vec, std::move(valid));
             });
}

// (tile[M, N], vec) where vec is [M, 1] (row) or [1, N] (col).
void add_expand(OpRegistry& r, const std::string& name, const std::string& what, bool row) {
  const std::string op = "tile." + name;
  const std::string vec = row ? "row_vec" : "col_vec";
  add_op(r, op, {row ? "tile" : "tile", vec}, {}, what,
         [op, vec, row](const Args& args, const Attrs&, const Span& span) -> TypePtr {
           auto* a = expect_2d(op, "tile", args[0], span);
           auto* v = expect_2d(op, vec, args[1], span);
           auto* one = v->shape[row ? 1 : 0]->as<ConstInt>();
           const bool ok = one && one->value == 1 && dim_equal(a->shape[row ? 0 : 1], v->shape[row ? 0 : 1]);
           PYPTO_USER_CHECK(ok, span,
                            op << ": shape mismatch: tile is " << describe_shape(a->shape) << ", " << vec << " must be "
                               << (row ? "[" + detail::describe(a->shape[0]) + ", 1]"
                                       : "[1, " + detail::describe(a->shape[1]) + "]")
                               << ", got " << describe_shape(v->shape),
                            row ? "compute the row operand with pl.row_max / pl.row_sum / pl.row_min"
                                : "compute the column operand with pl.col_max / pl.col_sum / pl.col_min");
           same_dtype(op, args[0], args[1], span);
           // The tile's valid region (the vector's where the tile has none: §1.5, broadcast rule).
           return TileType::make(a->shape, a->dtype, MemorySpace::Vec, broadcast_valid(a, v, a->shape));
         });
}

}  // namespace

void register_tile_reduce_ops(OpRegistry& r) {
  // pl.sum / pl.max / pl.min(tile, axis, keepdim=False): reduce one axis of a 1-D or 2-D tile.
  for (const char* n : {"sum", "max", "min"}) {
    const std::string op = std::string("tile.") + n;
    add_op(r, op, {"tile"}, {"axis", "keepdim"}, std::string("Reduce one axis (") + n + "); keepdim keeps it as 1.",
           [op](const Args& args, const Attrs& attrs, const Span& span) -> TypePtr {
             auto* t = expect_tile(op, "tile", args[0], span);
             const int64_t rank = static_cast<int64_t>(t->shape.size());
             PYPTO_USER_CHECK(op != "tile.sum" || attrs.count("axis"), span, op << ": axis is required",
                              "e.g. pl.sum(t, axis=1) sums each row");
             int64_t axis = attr_int(op, attrs, "axis", 0, span);
             const bool keep = attr_int(op, attrs, "keepdim", 0, span) != 0;
             PYPTO_USER_CHECK(rank <= 2, span,
                              op << ": the CPU backend reduces 1-D and 2-D tiles, got a tile of rank " << rank,
                              "reshape it to 2-D first (pl.tile.reshape), reduce, and reshape the result back");
             PYPTO_USER_CHECK(axis >= -rank && axis < rank, span,
                              op << ": axis " << axis << " is out of range for a tile of rank " << rank,
                              "axes of a rank-" + std::to_string(rank) + " tile are " + std::to_string(-rank) + ".." +
                                  std::to_string(rank - 1));
             axis = (axis + rank) % rank;
             std::vector<ExprPtr> shape = t->shape, valid = t->valid_shape;   // valid: §1.5, as the shape
             if (keep) shape[static_cast<size_t>(axis)] = ConstInt::make(1);
             else shape.erase(shape.begin() + axis);
             if (!valid.empty() && keep) valid[static_cast<size_t>(axis)] = ConstInt::make(1);
             else if (!valid.empty()) valid.erase(valid.begin() + axis);
             PYPTO_USER_CHECK(!shape.empty(), span,
                              op << ": reducing a 1-D tile to a scalar is not supported in CPU kernels",
                              "pass keepdim=True to get a [1] tile");
             return TileType::make(std::move(shape), t->dtype, MemorySpace::Vec, std::move(valid));
           });
  }

  add_op_opt(r, "tile.row_prod", {"tile", "tmp_tile"}, 1, {}, "Row-wise product of a [M, N] tile, giving [M, 1].",
             [](const Args& args, const Attrs&, const Span& span) -> TypePtr {
               auto* a = expect_2d("tile.row_prod", "tile", args[0], span);
               optional_tile("tile.row_prod", "tmp_tile", args, 1, span);
               std::vector<ExprPtr> valid;   // [valid_rows, 1] (§1.5)
               if (a->has_valid_shape()) valid = {a->valid_shape[0], ConstInt::make(1)};
               return TileType::make({a->shape[0], ConstInt::make(1)}, a->dtype, MemorySpace::Vec, std::move(valid));
             });
  add_col_reduce(r, "col_sum", "sum", true);
  add_col_reduce(r, "col_max", "maximum", false);
  add_col_reduce(r, "col_min", "minimum", false);
  add_col_reduce(r, "col_prod", "product", false);

  add_expand(r, "row_expand", "out[i, j] = row_vec[i, 0] (tile's values are not read).", true);
  add_expand(r, "row_expand_max", "max(tile[i, j], row_vec[i, 0]).", true);
  add_expand(r, "row_expand_min", "min(tile[i, j], row_vec[i, 0]).", true);
  add_expand(r, "row_expand_expdif", "exp(tile[i, j] - row_vec[i, 0]) (softmax numerator).", true);
  add_expand(r, "col_expand", "out[i, j] = col_vec[0, j] (tile's values are not read).", false);
  add_expand(r, "col_expand_add", "tile[i, j] + col_vec[0, j].", false);
  add_expand(r, "col_expand_sub", "tile[i, j] - col_vec[0, j].", false);
  add_expand(r, "col_expand_mul", "tile[i, j] * col_vec[0, j].", false);
  add_expand(r, "col_expand_div", "tile[i, j] / col_vec[0, j].", false);
  add_expand(r, "col_expand_max", "max(tile[i, j], col_vec[0, j]).", false);
  add_expand(r, "col_expand_min", "min(tile[i, j], col_vec[0, j]).", false);
  add_expand(r, "col_expand_expdif", "exp(tile[i, j] - col_vec[0, j]).", false);
}

}  // namespace pypto::ir::ops
