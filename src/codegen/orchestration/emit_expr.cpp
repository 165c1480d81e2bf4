// Scalar expressions -> C++ (loop bounds, conditions, kernel scalar args, shapes, indices).
// Python semantics are kept: `//` and `%` floor (exact C++ forms unless both operands are
// provably non-negative), `/` is true division.
#include <cmath>
#include <cstdio>
#include <functional>

#include "emitter.h"
#include "pypto/ir/error.h"

namespace pypto::codegen::orchestration {

using namespace ir;

std::string Emitter::ctype(DataType d) {
  switch (d) {
    case DataType::BOOL: return "bool";
    case DataType::INT8: return "int8_t";
    case DataType::INT16: return "int16_t";
    case DataType::INT32: return "int32_t";
    case DataType::INT64: return "int64_t";
    case DataType::UINT8: return "uint8_t";
    case DataType::UINT16: return "uint16_t";
    case DataType::UINT32: return "uint32_t";
    case DataType::UINT64: return "uint64_t";
    case DataType::FP16:
    case DataType::BF16:
    case DataType::FP32: return "float";
    case DataType::INDEX: return "int64_t";
    case DataType::TASK_ID: return "PTO2TaskId";
  }
  return "int64_t";
}

std::string Emitter::runtime_dtype(DataType d, const Span& span) {
  switch (d) {
    case DataType::FP32: return "DataType::FLOAT32";
    case DataType::FP16: return "DataType::FLOAT16";
    case DataType::BF16: return "DataType::BFLOAT16";
    case DataType::INT8: return "DataType::INT8";
    case DataType::INT16: return "DataType::INT16";
    case DataType::INT32: return "DataType::INT32";
    case DataType::INT64:
    case DataType::INDEX: return "DataType::INT64";
    case DataType::UINT8: return "DataType::UINT8";
    case DataType::UINT16: return "DataType::UINT16";
    case DataType::UINT32: return "DataType::UINT32";
    case DataType::UINT64: return "DataType::UINT64";
    case DataType::BOOL: return "DataType::BOOL";
    case DataType::TASK_ID: break;
  }
  throw UserError(std::string("a tensor of ") + to_string(d) + " elements cannot be created in orchestration code", span,
                  "TaskIds live in pl.array.create(N, pl.TASK_ID), not in tensors");
}

namespace {

DataType dtype_of(const ExprPtr& e) {
  auto* s = e->type->as<ScalarType>();
  return s ? s->dtype : DataType::INDEX;
}

bool atomic(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
  }
  return true;
}

std::string float_literal(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s + "f";
}

}  // namespace

bool Emitter::non_negative(const ExprPtr& e) const {
  if (auto* c = e->as<ConstInt>()) return c->value >= 0;
  if (auto* v = as_var(e)) return dyn_decl_.count(v) > 0 || nonneg_loop_vars_.count(v) > 0;
  if (auto* c = e->as<Cast>()) return non_negative(c->value);
  if (auto* b = e->as<BinaryExpr>()) {
    switch (b->op) {
      case BinaryOp::Add:
      case BinaryOp::Mul:
      case BinaryOp::FloorDiv:
      case BinaryOp::Mod:
      case BinaryOp::Min:
      case BinaryOp::Max: return non_negative(b->a) && non_negative(b->b);
      default: return false;
    }
  }
  return false;
}

std::string Emitter::expr(const ExprPtr& e) {
  if (auto* v = as_var(e)) return ref(v);
  if (auto* c = e->as<ConstInt>()) {
    if (dtype_of(e) == DataType::BOOL) return c->value ? "true" : "false";
    return std::to_string(c->value);
  }
  if (auto* c = e->as<ConstFloat>()) return float_literal(c->value);
  if (auto* c = e->as<ConstBool>()) return c->value ? "true" : "false";
  if (auto* c = e->as<Cast>()) return "((" + ctype(dtype_of(e)) + ")(" + expr(c->value) + "))";
  if (auto* u = e->as<UnaryExpr>()) {
    std::string a = expr(u->a);
    return u->op == UnaryOp::Neg ? "(-" + a + ")" : "(!" + a + ")";
  }
  if (auto* b = e->as<BinaryExpr>()) {
    std::string a = expr(b->a), c = expr(b->b);
    bool fl = is_float(dtype_of(e)) || is_float(dtype_of(b->a)) || is_float(dtype_of(b->b));
    switch (b->op) {
      case BinaryOp::Add: return "(" + a + " + " + c + ")";
      case BinaryOp::Sub: return "(" + a + " - " + c + ")";
      case BinaryOp::Mul: return "(" + a + " * " + c + ")";
      case BinaryOp::Div:
        if (!is_float(dtype_of(b->a)) && !is_float(dtype_of(b->b))) return "((float)" + a + " / (float)" + c + ")";
        return "(" + a + " / " + c + ")";
      case BinaryOp::FloorDiv:
        if (fl) return "((float)__builtin_floor((double)" + a + " / (double)" + c + "))";
        if (non_negative(b->a) && non_negative(b->b)) return "(" + a + " / " + c + ")";
        return "(" + a + " / " + c + " - ((" + a + " % " + c + " != 0) && ((" + a + " < 0) != (" + c + " < 0))))";
      case BinaryOp::Mod:
        if (fl) throw UserError("'%' on floating-point scalars is not supported in orchestration code", e->span, "");
        if (non_negative(b->a) && non_negative(b->b)) return "(" + a + " % " + c + ")";
        return "(((" + a + " % " + c + ") + " + c + ") % " + c + ")";
      case BinaryOp::Min: return "(" + a + " < " + c + " ? " + a + " : " + c + ")";
      case BinaryOp::Max: return "(" + a + " > " + c + " ? " + a + " : " + c + ")";
      case BinaryOp::Eq: return "(" + a + " == " + c + ")";
      case BinaryOp::Ne: return "(" + a + " != " + c + ")";
      case BinaryOp::Lt: return "(" + a + " < " + c + ")";
      case BinaryOp::Le: return "(" + a + " <= " + c + ")";
      case BinaryOp::Gt: return "(" + a + " > " + c + ")";
      case BinaryOp::Ge: return "(" + a + " >= " + c + ")";
      case BinaryOp::And: return "(" + a + " && " + c + ")";
      case BinaryOp::Or: return "(" + a + " || " + c + ")";
    }
  }
  if (auto* c = e->as<Call>()) {
    throw UserError(std::string("'") + c->callee + "' cannot be used inside an expression in orchestration code", e->span,
                    "assign it to a variable first");
  }
  throw UserError(std::string("this expression (") + to_string(e->kind) + ") is not supported in orchestration code",
                  e->span, "");
}

Binding Emitter::capture(const ExprPtr& e) {
  // Emit the text, then record which declared identifiers it mentions (by re-walking Vars).
  Binding b;
  bool saved = marking_;
  marking_ = false;
  b.text = expr(e);
  marking_ = saved;
  std::function<void(const ExprPtr&)> walk = [&](const ExprPtr& x) {
    if (auto* v = as_var(x)) {
      auto it = bindings_.find(v);
      if (it != bindings_.end()) b.idents.insert(b.idents.end(), it->second.idents.begin(), it->second.idents.end());
    } else if (auto* bi = x->as<BinaryExpr>()) {
      walk(bi->a);
      walk(bi->b);
    } else if (auto* u = x->as<UnaryExpr>()) {
      walk(u->a);
    } else if (auto* c = x->as<Cast>()) {
      walk(c->value);
    }
  };
  walk(e);
  if (!atomic(b.text)) b.text = "(" + b.text + ")";
  return b;
}

// "(a + b)" -> "a + b" when the outer parentheses enclose the whole text.
std::string Emitter::strip_parens(const std::string& text) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') return text;
  int depth = 0;
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    depth += text[i] == '(' ? 1 : text[i] == ')' ? -1 : 0;
    if (depth == 0) return text;
  }
  return text.substr(1, text.size() - 2);
}

std::string Emitter::u32(const ExprPtr& e) {
  if (auto* c = e->as<ConstInt>()) return std::to_string(c->value);
  return "(uint32_t)(" + strip_parens(expr(e)) + ")";
}

std::string Emitter::i64(const ExprPtr& e) {
  if (auto* c = e->as<ConstInt>()) return std::to_string(c->value);
  std::string s = expr(e);
  if (dtype_of(e) == DataType::INT64 || dtype_of(e) == DataType::INDEX) return s;
  return "(int64_t)(" + strip_parens(s) + ")";
}

std::string Emitter::scalar_slot(const ExprPtr& e, DataType param_dtype) {
  DataType have = dtype_of(e);
  std::string s = expr(e);
  if (is_float(param_dtype)) {
    if (!is_float(have)) s = "(float)(" + s + ")";
    return "to_u64(" + s + ")";
  }
  if (is_float(have)) s = "(int64_t)(" + s + ")";
  return atomic(s) || s[0] == '(' ? "(uint64_t)" + s : "(uint64_t)(" + s + ")";
}

}  // namespace pypto::codegen::orchestration
