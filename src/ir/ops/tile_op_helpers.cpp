// Shared type-inference helpers of the tile op families (see tile_op_helpers.h).
#include "tile_op_helpers.h"

#include <algorithm>

#include "../describe.h"
#include "pypto/ir/error.h"

namespace pypto::ir::ops::tile_helpers {

using detail::describe;
using detail::describe_shape;

const TileType* expect_2d(const std::string& op, const std::string& arg, const ExprPtr& e, const Span& span) {
  auto* t = expect_tile(op, arg, e, span);
  PYPTO_USER_CHECK(t->shape.size() == 2, span,
                   op << ": argument '" << arg << "' must be a 2-D tile, got " << describe(e->type), "");
  return t;
}

std::vector<ExprPtr> broadcast_valid(const TileType* a, const TileType* b, const std::vector<ExprPtr>& shape) {
  if (!a->has_valid_shape() && !b->has_valid_shape()) return {};
  std::vector<ExprPtr> valid;
  const size_t r = shape.size();
  for (size_t k = 0; k < r; ++k) {
    const size_t ka = k + a->shape.size() - r, kb = k + b->shape.size() - r;   // right-aligned axes
    const bool a_has = k + a->shape.size() >= r, b_has = k + b->shape.size() >= r;
    if (a_has && dim_equal(a->shape[ka], shape[k])) valid.push_back(a->valid_or_shape()[ka]);
    else if (b_has) valid.push_back(b->valid_or_shape()[kb]);
    else valid.push_back(shape[k]);
  }
  return valid;
}

std::vector<int64_t> check_drop_dims(const std::string& op, const Attrs& attrs, const std::vector<ExprPtr>& shapes,
                                     const Span& span) {
  auto it = attrs.find("drop_dims");
  if (it == attrs.end()) return {};
  auto* l = std::get_if<std::vector<ExprPtr>>(&it->second);
  PYPTO_USER_CHECK(l, span, op << ": drop_dims must be a list of axis numbers", "e.g. drop_dims=[0]");
  std::vector<int64_t> axes;
  for (auto& e : *l) {
    auto* c = e->as<ConstInt>();
    PYPTO_USER_CHECK(c, span, op << ": drop_dims entries must be integer constants", "e.g. drop_dims=[0]");
    PYPTO_USER_CHECK(c->value >= 0 && c->value < static_cast<int64_t>(shapes.size()), span,
                     op << ": drop_dims axis " << c->value << " is out of range for rank " << shapes.size(), "");
    PYPTO_USER_CHECK(std::find(axes.begin(), axes.end(), c->value) == axes.end(), span,
                     op << ": drop_dims names axis " << c->value << " twice", "");
    auto* s = shapes[static_cast<size_t>(c->value)]->as<ConstInt>();
    PYPTO_USER_CHECK(s && s->value == 1, span,
                     op << ": drop_dims axis " << c->value << " has extent " << describe(shapes[static_cast<size_t>(c->value)])
                        << ", only an axis of constant extent 1 can be dropped",
                     "slice that axis with extent 1");
    axes.push_back(c->value);
  }
  std::sort(axes.begin(), axes.end());
  return axes;
}

std::vector<ExprPtr> without_axes(const std::vector<ExprPtr>& v, const std::vector<int64_t>& drop) {
  std::vector<ExprPtr> out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (std::find(drop.begin(), drop.end(), static_cast<int64_t>(i)) == drop.end()) out.push_back(v[i]);
  }
  return out;
}

void check_pad_value(const std::string& op, const Attrs& attrs, const Span& span) {
  auto it = attrs.find("pad_value");
  if (it == attrs.end()) return;
  auto* s = std::get_if<std::string>(&it->second);
  PYPTO_USER_CHECK(s && (*s == "null" || *s == "zero" || *s == "max" || *s == "min"), span,
                   op << ": pad_value must be pl.PadValue.null, .zero, .max or .min", "e.g. pad_value=pl.PadValue.zero");
}

void same_dtype(const std::string& op, const ExprPtr& a, const ExprPtr& b, const Span& span) {
  auto *ta = a->type->as<TileType>(), *tb = b->type->as<TileType>();
  PYPTO_USER_CHECK(ta->dtype == tb->dtype, span,
                   op << ": dtype mismatch: " << describe(a->type) << " vs " << describe(b->type),
                   "convert one side with pl.cast(tile, dtype)");
}

namespace {
bool is_one(const ExprPtr& d) {
  auto* c = d->as<ConstInt>();
  return c && c->value == 1;
}
}  // namespace

std::vector<ExprPtr> broadcast_2d(const std::string& op, const ExprPtr& a, const ExprPtr& b, const Span& span) {
  return broadcast_2d(op, a->type->as<TileType>()->shape, b->type->as<TileType>()->shape, span);
}

std::vector<ExprPtr> broadcast_2d(const std::string& op, const std::vector<ExprPtr>& sa, const std::vector<ExprPtr>& sb,
                                  const Span& span) {
  struct S { const std::vector<ExprPtr>& shape; } sta{sa}, stb{sb};
  auto *ta = &sta, *tb = &stb;
  if (shape_equal(ta->shape, tb->shape)) return ta->shape;
  bool ok = ta->shape.size() <= 2 && tb->shape.size() <= 2;
  std::vector<ExprPtr> out;
  const size_t rank = std::max(ta->shape.size(), tb->shape.size());
  for (size_t i = 0; ok && i < rank; ++i) {  // right-aligned
    const bool ha = i < ta->shape.size(), hb = i < tb->shape.size();
    const ExprPtr da = ha ? ta->shape[ta->shape.size() - 1 - i] : nullptr;
    const ExprPtr db = hb ? tb->shape[tb->shape.size() - 1 - i] : nullptr;
    if (!ha) out.insert(out.begin(), db);
    else if (!hb) out.insert(out.begin(), da);
    else if (dim_equal(da, db) || is_one(db)) out.insert(out.begin(), da);
    else if (is_one(da)) out.insert(out.begin(), db);
    else ok = false;
  }
  PYPTO_USER_CHECK(ok, span,
                   op << ": requires compatible shapes, but got " << describe_shape(ta->shape) << " and "
                      << describe_shape(tb->shape),
                   "operands must have the same shape, or 2-D shapes whose dims are equal or 1 ([M, N] with "
                   "[1, N], [M, 1] or [1, 1])");
  return out;
}

void expect_int_dtype(const std::string& op, const std::string& what, DataType d, const Span& span) {
  PYPTO_USER_CHECK(is_integer(d), span, op << ": requires integer " << what << " dtype, but got " << to_string(d),
                   "bitwise ops and shifts work on integer tiles; pl.cast the tile to an integer dtype");
}

void expect_int_scalar_operand(const std::string& op, const ExprPtr& e, const Span& span) {
  auto* s = e->type->as<ScalarType>();
  PYPTO_USER_CHECK(s && is_integer(s->dtype), span,
                   op << ": requires shift/bitwise scalar to be an integer type, got " << describe(e->type), "");
}

void optional_tile(const std::string& op, const std::string& arg, const Args& args, size_t i, const Span& span) {
  if (i < args.size()) expect_tile(op, arg, args[i], span);
}

int64_t attr_int(const std::string& op, const Attrs& attrs, const std::string& key, int64_t def, const Span& span) {
  auto it = attrs.find(key);
  if (it == attrs.end()) return def;
  if (auto* b = std::get_if<bool>(&it->second)) return *b ? 1 : 0;
  auto* v = std::get_if<int64_t>(&it->second);
  PYPTO_USER_CHECK(v, span, op << ": " << key << " must be an integer constant", "");
  return *v;
}

int64_t mask_cols(int64_t cols) { return ((cols + 7) / 8 + 31) / 32 * 32; }

std::vector<ExprPtr> expect_const_shape(const std::string& op, const std::string& arg, const ExprPtr& e, const Span& span,
                                        size_t max_rank) {
  auto shape = expect_int_list(op, arg, e, span);
  PYPTO_USER_CHECK(!shape.empty() && shape.size() <= max_rank, span,
                   op << ": " << arg << " must have 1 to " << max_rank << " dims, got " << describe_shape(shape), "");
  for (auto& d : shape) {   // (literal arithmetic is folded by expect_int_list)
    auto* c = d->as<ConstInt>();
    PYPTO_USER_CHECK(c && c->value > 0, span, op << ": " << arg << " entries must be positive integer constants, got "
                                                  << describe_shape(shape), "");
  }
  return shape;
}

void add_op_opt(OpRegistry& r, std::string name, std::vector<std::string> arg_names, size_t min_args,
                std::vector<std::string> attr_names, std::string doc, decltype(OpInfo::infer) infer) {
  OpInfo info;
  info.name = std::move(name);
  info.arg_names = std::move(arg_names);
  info.min_args = min_args;
  info.attr_names = std::move(attr_names);
  info.doc = std::move(doc);
  info.infer = std::move(infer);
  r.add(std::move(info));
}

}  // namespace pypto::ir::ops::tile_helpers
