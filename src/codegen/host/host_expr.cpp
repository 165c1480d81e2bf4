// HOST orchestration codegen: scalar expressions (loop bounds, branch conditions, scalar
// arguments of next-level tasks) and their encoding into 64-bit scalar slots — the same
// spelling as L2 orchestration code (float slots via to_u64, integers and bools cast).
#include <cstdio>

#include "host_emitter.h"
#include "pypto/ir/error.h"
#include "pypto/ir/type.h"

namespace pypto::codegen::host {

using namespace pypto::ir;

namespace {

DataType dtype_of(const ExprPtr& e) {
  auto* s = e->type ? e->type->as<ScalarType>() : nullptr;
  return s ? s->dtype : DataType::INDEX;
}


std::string float_literal(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s + "f";
}

}  // namespace

std::string HostEmitter::ctype(DataType d) {
  switch (d) {
    case DataType::BOOL: return "bool";
    case DataType::INT8: return "int8_t";
    case DataType::INT16: return "int16_t";
    case DataType::INT32: return "int32_t";
    case DataType::UINT8: return "uint8_t";
    case DataType::UINT16: return "uint16_t";
    case DataType::UINT32: return "uint32_t";
    case DataType::UINT64: return "uint64_t";
    case DataType::FP16:
    case DataType::BF16:
    case DataType::FP32: return "float";
    case DataType::TASK_ID: return "TaskHandle";
    case DataType::INT64:
    case DataType::INDEX: return "int64_t";
  }
  return "int64_t";
}

std::string HostEmitter::expr(const ExprPtr& e) {
  if (auto* v = as_var(e)) return ref(v, e->span);
  if (auto* c = e->as<ConstInt>()) {
    if (dtype_of(e) == DataType::BOOL) return c->value ? "true" : "false";
    return std::to_string(c->value);
  }
  if (auto* c = e->as<ConstFloat>()) return float_literal(c->value);
  if (auto* c = e->as<ConstBool>()) return c->value ? "true" : "false";
  if (auto* c = e->as<Cast>()) return "((" + ctype(dtype_of(e)) + ")(" + expr(c->value) + "))";
  if (auto* u = e->as<UnaryExpr>()) return std::string(u->op == UnaryOp::Neg ? "(-" : "(!") + expr(u->a) + ")";
  if (auto* b = e->as<BinaryExpr>()) {
    std::string a = expr(b->a), c = expr(b->b);
    bool fl = is_float(dtype_of(e)) || is_float(dtype_of(b->a)) || is_float(dtype_of(b->b));
    switch (b->op) {
      case BinaryOp::Add: return "(" + a + " + " + c + ")";
      case BinaryOp::Sub: return "(" + a + " - " + c + ")";
      case BinaryOp::Mul: return "(" + a + " * " + c + ")";
      case BinaryOp::Div:
        if (!fl) return "((float)" + a + " / (float)" + c + ")";
        return "(" + a + " / " + c + ")";
      case BinaryOp::FloorDiv:
        if (fl) return "((float)__builtin_floor((double)" + a + " / (double)" + c + "))";
        return "(" + a + " / " + c + " - ((" + a + " % " + c + " != 0) && ((" + a + " < 0) != (" + c + " < 0))))";
      case BinaryOp::Mod:
        if (fl) throw UserError("'%' on floating-point scalars is not supported in orchestration code", e->span, "");
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
  throw UserError(std::string("this expression (") + to_string(e->kind) + ") is not supported in a HOST-level orchestration",
                  e->span, "assign calls to a variable first; HOST code computes scalars only");
}

std::string HostEmitter::scalar_slot(const ExprPtr& e, DataType param_dtype) {
  DataType have = dtype_of(e);
  std::string s = expr(e);
  if (is_float(param_dtype)) {
    if (!is_float(have)) s = "(float)(" + s + ")";
    return "to_u64(" + s + ")";
  }
  if (is_float(have)) s = "(int64_t)(" + s + ")";
  return "(uint64_t)" + (s[0] == '(' ? s : "(" + s + ")");
}

}  // namespace pypto::codegen::host
