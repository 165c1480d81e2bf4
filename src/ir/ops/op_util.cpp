// Shared helpers for op type inference (see op_util.h).
#include "op_util.h"

#include "../describe.h"
#include "pypto/ir/const_integer.h"
#include "pypto/ir/error.h"
#include "pypto/ir/structural_equal.h"

namespace pypto::ir::ops {

using detail::describe;

namespace {

[[noreturn]] void wrong_kind(const std::string& op, const std::string& arg, const char* want, const ExprPtr& e,
                             const Span& span, const std::string& help = "") {
  throw UserError(op + ": argument '" + arg + "' must be " + want + ", got " + describe(e->type), span, help);
}

}  // namespace

const TensorType* expect_tensor(const std::string& op, const std::string& arg, const ExprPtr& e, const Span& span) {
  auto* t = e->type->as<TensorType>();
  if (!t) wrong_kind(op, arg, "a Tensor", e, span);
  return t;
}

const TileType* expect_tile(const std::string& op, const std::string& arg, const ExprPtr& e, const Span& span) {
  auto* t = e->type->as<TileType>();
  if (!t) {
    wrong_kind(op, arg, "a Tile", e, span,
               e->type->is<TensorType>() ? "load the tensor into a tile first with pl.load(tensor, offsets, shapes)" : "");
  }
  return t;
}

const ArrayType* expect_array(const std::string& op, const std::string& arg, const ExprPtr& e, const Span& span) {
  auto* t = e->type->as<ArrayType>();
  if (!t) wrong_kind(op, arg, "an Array (from pl.array.create)", e, span);
  return t;
}

const ScalarType* expect_numeric_scalar(const std::string& op, const std::string& arg, const ExprPtr& e, const Span& span) {
  auto* s = e->type->as<ScalarType>();
  if (!s || s->dtype == DataType::TASK_ID) wrong_kind(op, arg, "a numeric scalar", e, span);
  return s;
}

void expect_int_scalar(const std::string& op, const std::string& arg, const ExprPtr& e, const Span& span) {
  auto* s = e->type->as<ScalarType>();
  if (!s || !is_integer(s->dtype)) wrong_kind(op, arg, "an integer scalar", e, span);
}

std::vector<ExprPtr> expect_int_list(const std::string& op, const std::string& arg, const ExprPtr& e, const Span& span) {
  auto* t = e->as<MakeTuple>();
  if (!t) wrong_kind(op, arg, "a list of integers", e, span, "write a list literal such as [0, 0]");
  for (size_t i = 0; i < t->elements.size(); ++i) {
    auto* s = t->elements[i]->type->as<ScalarType>();
    if (!s || !is_integer(s->dtype)) {
      throw UserError(op + ": element " + std::to_string(i) + " of '" + arg + "' must be an integer, got " +
                          describe(t->elements[i]->type),
                      span, "");
    }
  }
  // Literals alone (`N * 4`) count as the constant they are, for the op's checks and the type it
  // derives; the call keeps them as written (the printed IR parses back to the same IR).
  std::vector<ExprPtr> out = t->elements;
  for (ExprPtr& d : out) {
    if (d->is<ConstInt>()) continue;
    if (auto c = ConstIntegerValue(d)) d = ConstInt::make(*c, d->type->as<ScalarType>()->dtype, d->span);
  }
  return out;
}

void expect_const_indices_inside(const std::string& op, const std::vector<ExprPtr>& idx,
                                 const std::vector<ExprPtr>& shape, const Span& span) {
  for (size_t k = 0; k < idx.size() && k < shape.size(); ++k) {
    const auto i = ConstIntegerValue(idx[k]);   // (expect_int_list folded literal arithmetic)
    auto* d = shape[k]->as<ConstInt>();
    if (!i || !d) continue;
    PYPTO_USER_CHECK(*i >= 0 && *i < d->value, span,
                     op << ": index " << *i << " of axis " << k << " is outside [0, " << d->value << ")",
                     "each index counts from 0 to its axis' extent minus 1");
  }
}

std::string block_end(int64_t offset, int64_t size) {
  int64_t end = 0;
  return __builtin_add_overflow(offset, size, &end) ? std::to_string(offset) + " + " + std::to_string(size)
                                                     : std::to_string(end);
}

int64_t expect_const_int(const std::string& op, const std::string& arg, const ExprPtr& e, const Span& span) {
  auto c = ConstIntegerValue(e);   // a literal, or arithmetic of literals (`5 - 4`)
  if (!c) {
    throw UserError(op + ": argument '" + arg + "' must be an integer constant, got " + describe(e), span, "");
  }
  return *c;
}

bool dim_equal(const ExprPtr& a, const ExprPtr& b) {
  auto *ca = a->as<ConstInt>(), *cb = b->as<ConstInt>();
  if (ca && cb) return ca->value == cb->value;
  return structural_equal(a, b);
}

bool shape_equal(const std::vector<ExprPtr>& a, const std::vector<ExprPtr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!dim_equal(a[i], b[i])) return false;
  }
  return true;
}

DataType attr_dtype(const std::string& op, const Attrs& attrs, const Span& span) {
  auto* s = attr_get<std::string>(attrs, "dtype");
  PYPTO_USER_CHECK(s, span, op << ": missing dtype", "pass dtype=pl.FP32 (or another pl dtype)");
  DataType d;
  PYPTO_USER_CHECK(parse_data_type(*s, &d), span, op << ": unknown dtype '" << *s << "'",
                   "dtypes are BOOL, INT8..INT64, UINT8..UINT64, FP16, BF16, FP32, INDEX, TASK_ID");
  return d;
}

bool attr_memory(const std::string& op, const Attrs& attrs, const Span& span, MemorySpace* out) {
  auto it = attrs.find("target_memory");
  if (it == attrs.end()) return false;
  auto* s = std::get_if<std::string>(&it->second);
  PYPTO_USER_CHECK(s, span, op << ": target_memory must be a memory space name", "e.g. target_memory=pl.MemorySpace.Left");
  PYPTO_USER_CHECK(parse_memory_space(*s, out), span, op << ": unknown memory space '" << *s << "'",
                   "memory spaces are Vec, Mat, Left, Right, Acc");
  return true;
}

void expect_bool_attr(const std::string& op, const Attrs& attrs, const std::string& key, const Span& span) {
  auto it = attrs.find(key);
  if (it == attrs.end()) return;
  PYPTO_USER_CHECK(std::holds_alternative<bool>(it->second), span, op << ": " << key << " must be True or False", "");
}

void add_op(OpRegistry& r, std::string name, std::vector<std::string> arg_names, std::vector<std::string> attr_names,
            std::string doc, decltype(OpInfo::infer) infer) {
  OpInfo info;
  info.name = std::move(name);
  info.arg_names = std::move(arg_names);
  info.attr_names = std::move(attr_names);
  info.doc = std::move(doc);
  info.infer = std::move(infer);
  r.add(std::move(info));
}

}  // namespace pypto::ir::ops
