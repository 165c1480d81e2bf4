// tile.* ops: what InCore / AIC / AIV kernels compute with.
//
//   tile.load(a, [0, 0], [16, 16])          -> Tile[[16, 16], a.dtype, Vec]   (target_memory= optional)
//   tile.load(a, [r, 0], [32, 16], [n, 16]) -> Tile[[32, 16], a.dtype, Vec, valid [n, 16]]  (transpose= optional)
//   tile.store(t, [0, 0], c)                -> type of c
//   tile.add(x, y) / tile.add(x, 2.0)       -> type of x         (also sub, mul, div, maximum, minimum)
//   tile.exp(x)                             -> type of x         (also log, sqrt, rsqrt, recip, neg, abs, relu)
//   tile.row_max(x[M, N])                   -> Tile[[M, 1]]      (also row_sum, row_min)
//   tile.row_expand_sub(x[M, N], r[M, 1])   -> type of x         (also add, mul, div)
//   tile.matmul(a[M, K], b[K, N])           -> Tile[[M, N], FP32, Acc]
//   tile.matmul_acc(acc, a, b)              -> type of acc
//   tile.move(t) target_memory="Left"       -> t in that memory
//   tile.cast(t) dtype="FP16"               -> t with that dtype
//   tile.full([16, 16], 0.0) dtype="FP32"   -> Tile[[16, 16], FP32, Vec]
//   tile.get_block_idx(), tile.get_block_num() -> Scalar[INDEX]
#include "../describe.h"
#include "op_util.h"
#include "pypto/ir/const_integer.h"
#include "tile_op_helpers.h"
#include "pypto/ir/error.h"

namespace pypto::ir::ops {

using detail::describe;
using detail::describe_shape;

namespace {

using Args = std::vector<ExprPtr>;

void check_tile_rank(const std::string& op, const std::string& what, size_t rank, const Span& span) {
  PYPTO_USER_CHECK(rank == 1 || rank == 2, span, op << ": " << what << " must be 1-D or 2-D, got rank " << rank, "");
}

const TileType* expect_2d(const std::string& op, const std::string& arg, const ExprPtr& e, const Span& span) {
  auto* t = expect_tile(op, arg, e, span);
  PYPTO_USER_CHECK(t->shape.size() == 2, span,
                   op << ": argument '" << arg << "' must be a 2-D tile, got " << describe(e->type), "");
  return t;
}

void same_dtype(const std::string& op, const TileType* a, const TileType* b, const ExprPtr& ea, const ExprPtr& eb,
                const Span& span) {
  PYPTO_USER_CHECK(a->dtype == b->dtype, span,
                   op << ": dtype mismatch: " << describe(ea->type) << " vs " << describe(eb->type),
                   "convert one side with pl.cast(tile, dtype)");
}

// add / sub / mul / div promote mixed operand dtypes (spec reference_ops.md §1.3, PromoteDataTypes);
// maximum / minimum keep asking for equal dtypes.
void add_elementwise_binary(OpRegistry& r, const std::string& name, const std::string& what, bool promote = false) {
  std::string op = "tile." + name;
  add_op(r, op, {"a", "b"}, {},
         "Elementwise " + what + " of tile a with a tile of the same shape or a scalar" +
             (promote ? " (mixed dtypes promote: float beats int, wider wins)." : "."),
         [op, promote](const Args& args, const Attrs&, const Span& span) -> TypePtr {
           auto* a = expect_tile(op, "a", args[0], span);
           if (auto* b = args[1]->type->as<TileType>()) {
             DataType dt = a->dtype;
             if (promote && a->dtype != b->dtype) {
               PYPTO_USER_CHECK(a->dtype != DataType::TASK_ID && b->dtype != DataType::TASK_ID, span,
                                op << ": TASK_ID tiles have no arithmetic", "");
               dt = PromoteDataTypes(a->dtype, b->dtype);
             } else {
               same_dtype(op, a, b, args[0], args[1], span);
             }
             auto shape = tile_helpers::broadcast_2d(op, args[0], args[1], span);   // NumPy-style, 2-D
             if (!shape_equal(shape, a->shape) || dt != a->dtype) {
               auto valid = tile_helpers::broadcast_valid(a, b, shape);
               return TileType::make(std::move(shape), dt, a->memory, std::move(valid));
             }
           } else {
             PYPTO_USER_CHECK(args[1]->type->is<ScalarType>() && args[1]->type->as<ScalarType>()->dtype != DataType::TASK_ID,
                              span, op << ": argument 'b' must be a Tile or a scalar, got " << describe(args[1]->type), "");
           }
           return args[0]->type;
         });
}

}  // namespace

DataType PromoteDataTypes(DataType a, DataType b) {
  if (a == b) return a;
  const bool fa = is_float(a), fb = is_float(b), ia = is_integer(a), ib = is_integer(b);
  if ((fa && ib) || (ia && fb)) return fa ? a : b;   // a float beats an integer
  if ((fa && fb) || (ia && ib)) {
    if (bit_width(a) != bit_width(b)) return bit_width(a) > bit_width(b) ? a : b;   // the wider wins
    if (ia && is_signed(a) != is_signed(b)) return is_signed(a) ? a : b;            // signed beats unsigned
  }
  return a;   // anything else (FP16 vs BF16, BOOL): the left operand's dtype
}

namespace {

void add_elementwise_unary(OpRegistry& r, const std::string& name, const std::string& doc) {
  std::string op = "tile." + name;
  add_op(r, op, {"a"}, {}, doc, [op](const Args& args, const Attrs&, const Span& span) -> TypePtr {
    expect_tile(op, "a", args[0], span);
    return args[0]->type;
  });
}

void add_row_reduce(OpRegistry& r, const std::string& name, const std::string& what) {
  std::string op = "tile." + name;
  tile_helpers::add_op_opt(r, op, {"a", "tmp"}, 1, {}, "Row-wise " + what + " of a [M, N] tile, giving a [M, 1] tile.",
         [op](const Args& args, const Attrs&, const Span& span) -> TypePtr {
           auto* a = expect_2d(op, "a", args[0], span);
           tile_helpers::optional_tile(op, "tmp", args, 1, span);   // the reference's scratch tile
           // [valid_rows, 1] (spec anchor_features §10)
           std::vector<ExprPtr> valid;
           if (a->has_valid_shape()) valid = {a->valid_shape[0], ConstInt::make(1)};
           return TileType::make({a->shape[0], ConstInt::make(1)}, a->dtype, a->memory, std::move(valid));
         });
}

void add_row_expand(OpRegistry& r, const std::string& name, const std::string& what) {
  std::string op = "tile." + name;
  add_op(r, op, {"a", "row"}, {}, "Elementwise " + what + " of each row of a [M, N] tile by the matching entry of a [M, 1] tile.",
         [op](const Args& args, const Attrs&, const Span& span) -> TypePtr {
           auto* a = expect_2d(op, "a", args[0], span);
           auto* row = expect_2d(op, "row", args[1], span);
           auto* one = row->shape[1]->as<ConstInt>();
           PYPTO_USER_CHECK(dim_equal(a->shape[0], row->shape[0]) && one && one->value == 1, span,
                            op << ": shape mismatch: a is " << describe_shape(a->shape) << ", row must be ["
                               << describe(a->shape[0]) << ", 1], got " << describe_shape(row->shape),
                            "compute the row operand with pl.row_max / pl.row_sum / pl.row_min");
           same_dtype(op, a, row, args[0], args[1], span);
           return args[0]->type;
         });
}

// With constant offsets, dims and tile sizes: the block [offset, offset + size) must lie inside
// the tensor in every dimension.
void check_block_inside(const std::string& op, const std::vector<ExprPtr>& offsets, const std::vector<ExprPtr>& sizes,
                        const TensorType* t, const Span& span) {
  if (sizes.size() > t->shape.size() || offsets.size() != t->shape.size()) return;
  // A tile of lower rank covers the tensor's trailing axes, extent 1 on the leading ones (as
  // the kernel's store does: a row max [16] stored into a [16, 8] tensor is a [1, 16] block).
  const size_t lead = t->shape.size() - sizes.size();
  for (size_t i = 0; i < t->shape.size(); ++i) {
    const auto o = ConstIntegerValue(offsets[i]);   // (expect_int_list folded literal arithmetic)
    const auto s = i < lead ? std::optional<int64_t>(1) : ConstIntegerValue(sizes[i - lead]);
    auto* d = t->shape[i]->as<ConstInt>();
    if (!o || !s || !d) continue;
    PYPTO_USER_CHECK(*o >= 0 && *o <= d->value - *s, span,   // (no overflowing o + s)
                     op << ": block [" << *o << ", " << block_end(*o, *s) << ") of dimension " << i
                        << " is outside the tensor shape " << describe_shape(t->shape),
                     "");
  }
}

// [M, K] x [K, N] -> {M, N}; UserError naming both shapes when K differs.
std::vector<ExprPtr> matmul_shape(const std::string& op, const TileType* a, const TileType* b, const Span& span) {
  PYPTO_USER_CHECK(a->dtype == b->dtype, span,
                   op << ": dtype mismatch: a is " << to_string(a->dtype) << ", b is " << to_string(b->dtype),
                   "convert one operand with pl.cast(tile, dtype)");
  PYPTO_USER_CHECK(dim_equal(a->shape[1], b->shape[0]), span,
                   op << ": inner dimensions differ: a is " << describe_shape(a->shape) << ", b is " << describe_shape(b->shape),
                   "a must be [M, K] and b [K, N]");
  return {a->shape[0], b->shape[1]};
}

}  // namespace

void register_tile_ops(OpRegistry& r) {
  // The 4th argument is the valid box (spec anchor_features §10); it defaults to `shapes` and the
  // frontend leaves it out then. transpose=True (Mat only) swaps the tile's last two dims.
  // pad_value (a kernel-side tensor.slice's, pl.PadValue.*) is what the elements outside the
  // valid box read as ("zero", the default, "max", "min").
  tile_helpers::add_op_opt(r, "tile.load", {"tensor", "offsets", "shapes", "valid_shapes"}, 3,
         {"target_memory", "transpose", "drop_dims", "pad_value"},
         "Load a 1-D or 2-D block of a tensor at offsets into a tile; only the valid box is read.",
         [](const Args& args, const Attrs& attrs, const Span& span) -> TypePtr {
           auto* t = expect_tensor("tile.load", "tensor", args[0], span);
           tile_helpers::check_pad_value("tile.load", attrs, span);
           auto offsets = expect_int_list("tile.load", "offsets", args[1], span);
           auto shapes = expect_int_list("tile.load", "shapes", args[2], span);
           PYPTO_USER_CHECK(!shapes.empty(), span, "tile.load: shapes is empty",
                            "give one tile size per tensor dimension, e.g. [32, 16]");
           // drop_dims (§10): size-1 axes of the block that the tile does not have ([1, 32, 16] -> [32, 16]).
           auto drop = tile_helpers::check_drop_dims("tile.load", attrs, shapes, span);
           check_tile_rank("tile.load", "the tile", shapes.size() - drop.size(), span);
           PYPTO_USER_CHECK(offsets.size() == t->shape.size(), span,
                            "tile.load: " << offsets.size() << " offsets for a tensor of shape " << describe_shape(t->shape),
                            "give one offset per tensor dimension");
           PYPTO_USER_CHECK(shapes.size() == t->shape.size(), span,
                            "tile.load: tile shape " << describe_shape(shapes) << " has a different rank than the tensor shape "
                                                     << describe_shape(t->shape),
                            "");
           for (size_t i = 0; i < shapes.size(); ++i) {
             auto* c = shapes[i]->as<ConstInt>();
             PYPTO_USER_CHECK(!c || c->value > 0, span,
                              "tile.load: tile shape " << describe_shape(shapes) << " has extent " << c->value << " on axis "
                                                       << i << "; every extent must be positive",
                              "");
           }
           std::vector<ExprPtr> valid = shapes;
           if (args.size() > 3) {
             valid = expect_int_list("tile.load", "valid_shapes", args[3], span);
             PYPTO_USER_CHECK(valid.size() == shapes.size(), span,
                              "tile.load: valid_shapes " << describe_shape(valid) << " has " << valid.size()
                                                         << " entries, shapes " << describe_shape(shapes) << " has "
                                                         << shapes.size(),
                              "give one valid extent per tile dimension");
             for (size_t i = 0; i < valid.size(); ++i) {
               auto *v = valid[i]->as<ConstInt>(), *s = shapes[i]->as<ConstInt>();
               PYPTO_USER_CHECK(!v || v->value >= 0, span,
                                "tile.load: valid extent " << v->value << " of dimension " << i << " is negative", "");
               PYPTO_USER_CHECK(!v || !s || v->value <= s->value, span,
                                "tile.load: valid extent " << v->value << " of dimension " << i
                                                           << " exceeds the tile shape " << s->value,
                                "the valid box lies inside the tile: valid_shapes <= shapes");
             }
           }
           check_block_inside("tile.load", offsets, valid, t, span);   // only the valid box is read
           shapes = tile_helpers::without_axes(shapes, drop);
           valid = tile_helpers::without_axes(valid, drop);
           MemorySpace mem = MemorySpace::Vec;
           attr_memory("tile.load", attrs, span, &mem);
           expect_bool_attr("tile.load", attrs, "transpose", span);
           auto* tr = attr_get<bool>(attrs, "transpose");
           if (tr && *tr) {
             PYPTO_USER_CHECK(mem == MemorySpace::Mat, span,
                              "tile.load: transpose=True needs target_memory=pl.MemorySpace.Mat, got "
                                  << to_string(mem),
                              "write pl.load(..., target_memory=pl.MemorySpace.Mat, transpose=True)");
             PYPTO_USER_CHECK(shapes.size() >= 2, span,
                              "tile.load: transpose=True needs a tile of rank >= 2, got rank " << shapes.size(), "");
             std::swap(shapes[shapes.size() - 1], shapes[shapes.size() - 2]);
             std::swap(valid[valid.size() - 1], valid[valid.size() - 2]);
           }
           return TileType::make(std::move(shapes), t->dtype, mem, std::move(valid));
         });

  add_op(r, "tile.store", {"tile", "offsets", "tensor"}, {"atomic"},
         "Store a tile into a tensor at offsets; the result is the tensor. atomic=\"Add\" adds into it instead.",
         [](const Args& args, const Attrs& attrs, const Span& span) -> TypePtr {
           auto* tile = expect_tile("tile.store", "tile", args[0], span);
           auto offsets = expect_int_list("tile.store", "offsets", args[1], span);
           auto* t = expect_tensor("tile.store", "tensor", args[2], span);
           PYPTO_USER_CHECK(offsets.size() == t->shape.size(), span,
                            "tile.store: " << offsets.size() << " offsets for a tensor of shape " << describe_shape(t->shape),
                            "give one offset per tensor dimension");
           PYPTO_USER_CHECK(tile->shape.size() <= offsets.size(), span,
                            "pl.store: " << offsets.size() << " offsets for a tile of rank " << tile->shape.size(), "");
           PYPTO_USER_CHECK(tile->dtype == t->dtype, span,
                            "tile.store: dtype mismatch: tile " << describe(args[0]->type) << " vs tensor " << describe(args[2]->type),
                            "convert the tile first with pl.cast(tile, dtype)");
           check_block_inside("tile.store", offsets, tile->valid_or_shape(), t, span);   // the valid box
           check_store_atomic(attrs, t->dtype, span);
           return args[2]->type;
         });

  add_elementwise_binary(r, "add", "sum", true);
  add_elementwise_binary(r, "sub", "difference", true);
  add_elementwise_binary(r, "mul", "product", true);
  add_elementwise_binary(r, "div", "quotient", true);
  add_elementwise_binary(r, "maximum", "maximum");
  add_elementwise_binary(r, "minimum", "minimum");

  add_elementwise_unary(r, "exp", "Elementwise e^x.");
  add_elementwise_unary(r, "log", "Elementwise natural logarithm.");
  add_elementwise_unary(r, "sqrt", "Elementwise square root.");
  add_elementwise_unary(r, "rsqrt", "Elementwise 1 / sqrt(x).");
  add_elementwise_unary(r, "recip", "Elementwise 1 / x.");
  add_elementwise_unary(r, "neg", "Elementwise -x.");
  add_elementwise_unary(r, "abs", "Elementwise |x|.");
  add_elementwise_unary(r, "relu", "Elementwise max(x, 0).");

  add_row_reduce(r, "row_max", "maximum");
  add_row_reduce(r, "row_sum", "sum");
  add_row_reduce(r, "row_min", "minimum");

  add_row_expand(r, "row_expand_add", "sum");
  add_row_expand(r, "row_expand_sub", "difference");
  add_row_expand(r, "row_expand_mul", "product");
  add_row_expand(r, "row_expand_div", "quotient");

  add_op(r, "tile.matmul", {"a", "b"}, {}, "Matrix product of a [M, K] and b [K, N] into a new Acc tile [M, N]: FP32 for float inputs, INT32 for integer ones.",
         [](const Args& args, const Attrs&, const Span& span) -> TypePtr {
           auto* a = expect_2d("tile.matmul", "a", args[0], span);
           auto* b = expect_2d("tile.matmul", "b", args[1], span);
           auto mn = matmul_shape("tile.matmul", a, b, span);
           std::vector<ExprPtr> valid;   // [valid rows of a, valid cols of b]
           if (a->has_valid_shape() || b->has_valid_shape()) valid = {a->valid_or_shape()[0], b->valid_or_shape()[1]};
           return TileType::make(std::move(mn), tile_helpers::matmul_dtype(a->dtype), MemorySpace::Acc, std::move(valid));
         });

  add_op(r, "tile.matmul_acc", {"acc", "a", "b"}, {}, "acc + a @ b, for acc [M, N], a [M, K], b [K, N].",
         [](const Args& args, const Attrs&, const Span& span) -> TypePtr {
           auto* acc = expect_2d("tile.matmul_acc", "acc", args[0], span);
           auto* a = expect_2d("tile.matmul_acc", "a", args[1], span);
           auto* b = expect_2d("tile.matmul_acc", "b", args[2], span);
           auto mn = matmul_shape("tile.matmul_acc", a, b, span);
           PYPTO_USER_CHECK(shape_equal(mn, acc->shape), span,
                            "tile.matmul_acc: acc shape " << describe_shape(acc->shape) << " does not match a @ b shape "
                                                          << describe_shape(mn),
                            "");
           // reference_ops.md §2: "acc must already have that dtype" (FP32 or INT32, as tile.matmul's)
           PYPTO_USER_CHECK(acc->dtype == tile_helpers::matmul_dtype(a->dtype), span,
                            "tile.matmul_acc: acc must be " << to_string(tile_helpers::matmul_dtype(a->dtype))
                                                            << " for " << to_string(a->dtype) << " operands, got "
                                                            << to_string(acc->dtype),
                            "accumulate into the product's dtype (pl.matmul's result), or convert acc with pl.cast");
           return args[0]->type;
         });

  add_op(r, "tile.move", {"tile"}, {"target_memory"}, "Copy a tile to another memory space (Vec, Mat, Left, Right, Acc).",
         [](const Args& args, const Attrs& attrs, const Span& span) -> TypePtr {
           auto* t = expect_tile("tile.move", "tile", args[0], span);
           MemorySpace mem;
           PYPTO_USER_CHECK(attr_memory("tile.move", attrs, span, &mem), span, "tile.move: missing target_memory",
                            "e.g. pl.move(t, target_memory=pl.MemorySpace.Left)");
           return TileType::make(t->shape, t->dtype, mem, t->valid_shape);
         });

  add_op(r, "tile.cast", {"tile"}, {"dtype", "mode"},
         "Convert the elements of a tile to another dtype; mode= rounds float -> int (none, rint, round, floor, "
         "ceil, trunc, odd; default round).",
         [](const Args& args, const Attrs& attrs, const Span& span) -> TypePtr {
           auto* t = expect_tile("tile.cast", "tile", args[0], span);
           DataType d = attr_dtype("tile.cast", attrs, span);
           PYPTO_USER_CHECK(d != DataType::TASK_ID, span, "tile.cast: cannot cast a tile to TASK_ID", "");
           // The reference's rule (reference_ops.md §5): a cast to the tile's own dtype is an error.
           PYPTO_USER_CHECK(d != t->dtype, span,
                            "tile.cast: the tile is already " << to_string(d) << "; casting to the same dtype is an error",
                            "remove the pl.cast (add/sub/mul/div promote mixed dtypes themselves)");
           if (attrs.count("mode")) {
             auto* m = attr_get<std::string>(attrs, "mode");
             PYPTO_USER_CHECK(m && CastModeIndex(*m) >= 0, span,
                              "tile.cast: unknown cast mode " << (m ? "'" + *m + "'" : std::string("(not a string)")),
                              "mode is one of none, rint, round, floor, ceil, trunc, odd (or 0..6)");
           }
           return TileType::make(t->shape, d, t->memory, t->valid_shape);
         });

  // target_memory: what an annotated memory space sets (anchor_features §14: `t: pl.Tile[..., pl.Mem.Mat] =
  // pl.tile.full(...)`); Vec otherwise.
  add_op(r, "tile.full", {"shape", "value"}, {"dtype", "target_memory"},
         "A new tile (Vec unless target_memory says) of the given shape and dtype, every element = value.",
         [](const Args& args, const Attrs& attrs, const Span& span) -> TypePtr {
           auto shape = expect_int_list("tile.full", "shape", args[0], span);
           check_tile_rank("tile.full", "shape", shape.size(), span);
           expect_numeric_scalar("tile.full", "value", args[1], span);
           DataType d = attr_dtype("tile.full", attrs, span);
           MemorySpace mem = MemorySpace::Vec;
           attr_memory("tile.full", attrs, span, &mem);
           return TileType::make(std::move(shape), d, mem);
         });

  register_tile_elementwise_ops(r);
  register_tile_reduce_ops(r);
  register_tile_layout_ops(r);
  register_tile_matmul_ops(r);
  register_tile_accelerator_ops(r);
  register_tile_access_ops(r);

  add_op(r, "tile.get_block_idx", {}, {}, "Index of the current block within an SPMD launch.",
         [](const Args&, const Attrs&, const Span&) -> TypePtr { return ScalarType::make(DataType::INDEX); });
  add_op(r, "tile.get_block_num", {}, {}, "Number of blocks of the current SPMD launch.",
         [](const Args&, const Attrs&, const Span&) -> TypePtr { return ScalarType::make(DataType::INDEX); });
}

}  // namespace pypto::ir::ops
