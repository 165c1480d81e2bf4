// Reference element-wise tile ops (spec/reference_ops.md §3–5, §8): tile x tile with 2-D
// broadcasting, tile x scalar, bitwise and shifts, floor-mod, activations, sin / cos / not,
// compare into a packed UINT8 mask, and select.
//
//   tile.rem(a[16, 32], b[1, 32])         -> Tile[[16, 32], a.dtype]     (floor-mod, sign of b)
//   tile.shls(a, 3)                        -> type of a                   (integer tiles)
//   tile.cmp(a[16, 32], b) cmp_type=2     -> Tile[[16, 32], UINT8]       (bit j%8 of byte j/8)
//   tile.sel(mask, a, b)                   -> broadcast of a, b
//
// Operands of one op share a dtype (the reference promotes; we ask for an explicit pl.cast,
// see docs/kernels.md); tile x scalar ops convert the scalar to the tile dtype.
#include <map>

#include "../describe.h"
#include "pypto/ir/error.h"
#include "tile_op_helpers.h"

namespace pypto::ir::ops {

using namespace tile_helpers;
using detail::describe;

namespace {

// The result takes the first operand's valid shape (spec anchor_features §10; on broadcast axes
// the other operand's).
TypePtr result_tile(const ExprPtr& like, const ExprPtr& other, std::vector<ExprPtr> shape) {
  auto* t = like->type->as<TileType>();
  auto valid = broadcast_valid(t, other->type->as<TileType>(), shape);
  return TileType::make(std::move(shape), t->dtype, MemorySpace::Vec, std::move(valid));
}

// The DSL spelling of an op's other form (tile x scalar <-> tile x tile) for the help of a
// wrong operand kind; "" when there is none (part_*).
std::string other_form(const std::string& name) {
  static const std::map<std::string, std::string> kForms = {
      {"adds", "pl.add"}, {"subs", "pl.sub"}, {"muls", "pl.mul"}, {"divs", "pl.div"},
      {"maximums", "pl.maximum"}, {"minimums", "pl.minimum"}, {"rems", "pl.rem"}, {"ands", "pl.and_"},
      {"ors", "pl.or_"}, {"xors", "pl.xor"}, {"shls", "pl.shl"}, {"shrs", "pl.shr"},
      {"lrelu", "pl.prelu (a tile of slopes)"}, {"rem", "pl.rems"}, {"and", "pl.ands"}, {"or", "pl.ors"},
      {"xor", "pl.xors"}, {"shl", "pl.shls"}, {"shr", "pl.shrs"}};
  auto it = kForms.find(name);
  return it == kForms.end() ? "" : it->second;
}

// (lhs, rhs[, tmp]) tile x tile, broadcast, same dtype.
void add_tile_tile(OpRegistry& r, const std::string& name, const std::string& doc, bool integer_only,
                   bool has_tmp = false, bool lhs_dtype_only = false) {
  const std::string op = "tile." + name;
  std::vector<std::string> names = {"lhs", "rhs"};
  if (has_tmp) names.push_back("tmp");
  add_op_opt(r, op, names, 2, {}, doc, [=](const Args& args, const Attrs&, const Span& span) -> TypePtr {
    auto* a = expect_tile(op, "lhs", args[0], span);
    const std::string scalar_form = other_form(name);
    PYPTO_USER_CHECK(!args[1]->type->is<ScalarType>() || scalar_form.empty(), span,
                     op << ": argument 'rhs' must be a Tile, got " << describe(args[1]->type),
                     "the tile x scalar form is " + scalar_form);
    auto* b = expect_tile(op, "rhs", args[1], span);
    optional_tile(op, "tmp", args, 2, span);
    if (integer_only) {
      expect_int_dtype(op, "tile", a->dtype, span);
      expect_int_dtype(op, "tile", b->dtype, span);
    }
    if (!lhs_dtype_only) same_dtype(op, args[0], args[1], span);
    return result_tile(args[0], args[1], broadcast_2d(op, args[0], args[1], span));
  });
}

// (lhs, scalar[, tmp]) with the tile's shape and dtype.
void add_tile_scalar(OpRegistry& r, const std::string& name, const std::string& doc, bool integer_only,
                     bool has_tmp = false) {
  const std::string op = "tile." + name;
  std::vector<std::string> names = {"lhs", "rhs"};
  if (has_tmp) names.push_back("tmp");
  add_op_opt(r, op, names, 2, {}, doc, [=](const Args& args, const Attrs&, const Span& span) -> TypePtr {
    auto* a = expect_tile(op, "lhs", args[0], span);
    PYPTO_USER_CHECK(!args[1]->type->is<TileType>(), span,
                     op << ": argument 'rhs' must be a scalar, got " << describe(args[1]->type),
                     "the tile x tile form is " + other_form(name));
    expect_numeric_scalar(op, "rhs", args[1], span);
    optional_tile(op, "tmp", args, 2, span);
    if (integer_only) {
      expect_int_dtype(op, "tile", a->dtype, span);
      expect_int_scalar_operand(op, args[1], span);
    }
    if (name == "shls" || name == "shrs") {
      auto* c = args[1]->as<ConstInt>();
      PYPTO_USER_CHECK(!c || c->value >= 0, span, op << ": shift count " << c->value << " is negative",
                       "shift counts must be >= 0");
    }
    return TileType::make(a->shape, a->dtype, MemorySpace::Vec, a->valid_shape);
  });
}

void add_unary(OpRegistry& r, const std::string& name, const std::string& doc, bool fp32_only, bool int16_only) {
  const std::string op = "tile." + name;
  add_op(r, op, {"tile"}, {}, doc, [=](const Args& args, const Attrs&, const Span& span) -> TypePtr {
    auto* a = expect_tile(op, "tile", args[0], span);
    PYPTO_USER_CHECK(!fp32_only || a->dtype == DataType::FP32, span,
                     op << " is FP32-only, got " << to_string(a->dtype),
                     "cast the tile explicitly via pl.cast(tile, pl.FP32)");
    PYPTO_USER_CHECK(!int16_only || a->dtype == DataType::INT16 || a->dtype == DataType::UINT16, span,
                     op << ": requires int16 or uint16 tile dtype, but got " << to_string(a->dtype),
                     "pl.cast the tile to pl.INT16 or pl.UINT16 first");
    return TileType::make(a->shape, a->dtype, MemorySpace::Vec, a->valid_shape);
  });
}

int64_t cmp_type(const std::string& op, const Attrs& attrs, const Span& span) {
  int64_t c = attr_int(op, attrs, "cmp_type", 0, span);
  PYPTO_USER_CHECK(c >= 0 && c <= 5, span, op << ": cmp_type " << c << " is out of range",
                   "cmp_type is EQ=0, NE=1, LT=2, LE=3, GT=4, GE=5");
  return c;
}

// The packed mask of a compare of `shape` whose valid box is `valid` ([] when the whole tile):
// [R, roundup(ceil(C / 8), 32)] bytes, of which [valid rows, ceil(valid C / 8)] are valid
// (reference_ops.md §8): a store writes only those bytes, and into a tensor that wide.
//   [3, 13] -> Tile[[3, 32], UINT8, valid [3, 2]];  [16, 256] -> Tile[[16, 32], UINT8]
TypePtr mask_type(const std::string& op, const std::vector<ExprPtr>& shape, const std::vector<ExprPtr>& valid,
                  const Span& span) {
  PYPTO_USER_CHECK(shape.size() == 2, span, op << ": compares 2-D tiles, got rank " << shape.size(), "");
  auto* c = shape[1]->as<ConstInt>();
  PYPTO_USER_CHECK(c, span, op << ": the column count must be a constant (it sets the mask width)", "");
  const int64_t width = mask_cols(c->value);
  const ExprPtr rows = valid.empty() ? shape[0] : valid[0];
  const ExprPtr cols = valid.empty() ? shape[1] : valid[1];
  ExprPtr bytes;
  if (auto* k = cols->as<ConstInt>()) bytes = ConstInt::make((k->value + 7) / 8);
  else bytes = BinaryExpr::make(BinaryOp::FloorDiv, BinaryExpr::make(BinaryOp::Add, cols, ConstInt::make(7)), ConstInt::make(8));
  auto* kb = bytes->as<ConstInt>();
  const bool whole = rows.get() == shape[0].get() && kb && kb->value == width;
  return TileType::make({shape[0], ConstInt::make(width)}, DataType::UINT8, MemorySpace::Vec,
                        whole ? std::vector<ExprPtr>{} : std::vector<ExprPtr>{rows, bytes});
}

}  // namespace

void register_tile_elementwise_ops(OpRegistry& r) {
  add_tile_tile(r, "rem", "Floor-mod a - floor(a / b) * b (sign of b); b = 0 gives NaN / 0.", false, true);
  add_tile_tile(r, "and", "Bitwise and of two integer tiles.", true);
  add_tile_tile(r, "or", "Bitwise or of two integer tiles.", true);
  add_tile_tile(r, "xor", "Bitwise xor of two integer tiles.", true, true);
  add_tile_tile(r, "shl", "lhs << rhs per element (integer tiles; result dtype = lhs dtype).", true, false, true);
  add_tile_tile(r, "shr", "lhs >> rhs per element (arithmetic for signed, logical for unsigned).", true, false, true);
  add_tile_tile(r, "part_add", "Element-wise sum over the valid region (full tiles: tile.add).", false);
  add_tile_tile(r, "part_mul", "Element-wise product over the valid region (full tiles: tile.mul).", false);
  add_tile_tile(r, "part_max", "Element-wise maximum over the valid region (full tiles: tile.maximum).", false);
  add_tile_tile(r, "part_min", "Element-wise minimum over the valid region (full tiles: tile.minimum).", false);

  add_tile_scalar(r, "adds", "tile + scalar (the scalar converted to the tile dtype).", false);
  add_tile_scalar(r, "subs", "tile - scalar.", false);
  add_tile_scalar(r, "muls", "tile * scalar.", false);
  add_tile_scalar(r, "divs", "tile / scalar.", false);
  add_tile_scalar(r, "maximums", "Element-wise max(tile, scalar).", false);
  add_tile_scalar(r, "minimums", "Element-wise min(tile, scalar).", false);
  add_tile_scalar(r, "rems", "Floor-mod of tile by scalar.", false, true);
  add_tile_scalar(r, "ands", "Bitwise and with an integer scalar.", true);
  add_tile_scalar(r, "ors", "Bitwise or with an integer scalar.", true);
  add_tile_scalar(r, "xors", "Bitwise xor with an integer scalar.", true, true);
  add_tile_scalar(r, "shls", "tile << scalar (integer tiles).", true);
  add_tile_scalar(r, "shrs", "tile >> scalar (integer tiles).", true);
  add_tile_scalar(r, "lrelu", "Leaky relu: x > 0 ? x : x * slope.", false);

  add_op(r, "tile.expands", {"target", "scalar"}, {}, "A tile of target's shape and dtype, every element = scalar.",
         [](const Args& args, const Attrs&, const Span& span) -> TypePtr {
           auto* t = expect_tile("tile.expands", "target", args[0], span);
           expect_numeric_scalar("tile.expands", "scalar", args[1], span);
           return TileType::make(t->shape, t->dtype, MemorySpace::Vec);
         });

  for (const char* n : {"addc", "subc"}) {
    const std::string op = std::string("tile.") + n;
    add_op(r, op, {"lhs", "rhs", "rhs2"}, {}, n[0] == 'a' ? "lhs + rhs + rhs2." : "lhs - rhs - rhs2.",
           [op](const Args& args, const Attrs&, const Span& span) -> TypePtr {
             for (size_t i = 0; i < 3; ++i) expect_tile(op, i == 0 ? "lhs" : i == 1 ? "rhs" : "rhs2", args[i], span);
             same_dtype(op, args[0], args[1], span);
             same_dtype(op, args[0], args[2], span);
             auto s = broadcast_2d(op, args[0], args[1], span);
             return result_tile(args[0], args[1], broadcast_2d(op, s, args[2]->type->as<TileType>()->shape, span));
           });
  }
  for (const char* n : {"addsc", "subsc"}) {
    const std::string op = std::string("tile.") + n;
    add_op(r, op, {"lhs", "rhs", "rhs2"}, {}, n[0] == 'a' ? "lhs + scalar + rhs2." : "lhs - scalar - rhs2.",
           [op](const Args& args, const Attrs&, const Span& span) -> TypePtr {
             expect_tile(op, "lhs", args[0], span);
             expect_numeric_scalar(op, "rhs", args[1], span);
             expect_tile(op, "rhs2", args[2], span);
             same_dtype(op, args[0], args[2], span);
             return result_tile(args[0], args[2], broadcast_2d(op, args[0], args[2], span));
           });
  }
  add_op_opt(r, "tile.prelu", {"tile", "slope", "tmp"}, 2, {}, "x > 0 ? x : x * slope (slope a tile, broadcast).",
             [](const Args& args, const Attrs&, const Span& span) -> TypePtr {
               expect_tile("tile.prelu", "tile", args[0], span);
               expect_tile("tile.prelu", "slope", args[1], span);
               optional_tile("tile.prelu", "tmp", args, 2, span);
               same_dtype("tile.prelu", args[0], args[1], span);
               return result_tile(args[0], args[1], broadcast_2d("tile.prelu", args[0], args[1], span));
             });

  add_unary(r, "sin", "Element-wise sine (radians), FP32 tiles.", true, false);
  add_unary(r, "cos", "Element-wise cosine (radians), FP32 tiles.", true, false);
  add_unary(r, "not", "Bitwise complement (INT16 / UINT16 tiles).", false, true);

  add_op(r, "tile.cmp", {"lhs", "rhs"}, {"cmp_type"},
         "Compare into a packed UINT8 mask [R, roundup(ceil(C/8), 32)]: EQ=0 NE=1 LT=2 LE=3 GT=4 GE=5.",
         [](const Args& args, const Attrs& attrs, const Span& span) -> TypePtr {
           expect_tile("tile.cmp", "lhs", args[0], span);
           cmp_type("tile.cmp", attrs, span);
           if (!args[1]->type->is<TileType>()) {
             expect_numeric_scalar("tile.cmp", "rhs", args[1], span);
             auto* a = args[0]->type->as<TileType>();
             return mask_type("tile.cmp", a->shape, a->valid_shape, span);
           }
           same_dtype("tile.cmp", args[0], args[1], span);
           auto shape = broadcast_2d("tile.cmp", args[0], args[1], span);
           auto valid = broadcast_valid(args[0]->type->as<TileType>(), args[1]->type->as<TileType>(), shape);
           return mask_type("tile.cmp", shape, valid, span);
         });
  add_op(r, "tile.cmps", {"lhs", "rhs"}, {"cmp_type"}, "Compare a tile with a scalar into a packed UINT8 mask.",
         [](const Args& args, const Attrs& attrs, const Span& span) -> TypePtr {
           auto* a = expect_tile("tile.cmps", "lhs", args[0], span);
           expect_numeric_scalar("tile.cmps", "rhs", args[1], span);
           cmp_type("tile.cmps", attrs, span);
           return mask_type("tile.cmps", a->shape, a->valid_shape, span);
         });
  add_op_opt(r, "tile.sel", {"mask", "lhs", "rhs", "tmp"}, 3, {},
             "mask bit (i, j) ? lhs[i, j] : rhs[i, j], mask as produced by tile.cmp.",
             [](const Args& args, const Attrs&, const Span& span) -> TypePtr {
               auto* m = expect_2d("tile.sel", "mask", args[0], span);
               PYPTO_USER_CHECK(m->dtype == DataType::UINT8, span,
                                "tile.sel: the mask must be a UINT8 tile (from pl.cmp), got " << describe(args[0]->type),
                                "");
               expect_tile("tile.sel", "lhs", args[1], span);
               expect_tile("tile.sel", "rhs", args[2], span);
               optional_tile("tile.sel", "tmp", args, 3, span);
               same_dtype("tile.sel", args[1], args[2], span);
               auto s = broadcast_2d("tile.sel", args[1], args[2], span);
               PYPTO_USER_CHECK(s.size() == 2, span, "tile.sel: lhs and rhs must be 2-D", "");
               auto* c = s[1]->as<ConstInt>();
               auto* mc = m->shape[1]->as<ConstInt>();
               PYPTO_USER_CHECK(!c || !mc || mc->value * 8 >= c->value, span,
                                "tile.sel: mask has " << mc->value << " byte columns, too few for " << c->value
                                                      << " columns",
                                "compute the mask with pl.cmp on tiles of the same shape");
               PYPTO_USER_CHECK(dim_equal(m->shape[0], s[0]), span,
                                "tile.sel: mask has a different row count than the operands", "");
               return result_tile(args[1], args[2], s);
             });
  add_op(r, "tile.sels", {"lhs", "rhs", "select_mode"}, {}, "The whole lhs if select_mode == 1, else rhs.",
         [](const Args& args, const Attrs&, const Span& span) -> TypePtr {
           expect_tile("tile.sels", "lhs", args[0], span);
           expect_tile("tile.sels", "rhs", args[1], span);
           expect_int_scalar("tile.sels", "select_mode", args[2], span);
           same_dtype("tile.sels", args[0], args[1], span);
           return result_tile(args[0], args[1], broadcast_2d("tile.sels", args[0], args[1], span));
         });
}

}  // namespace pypto::ir::ops
