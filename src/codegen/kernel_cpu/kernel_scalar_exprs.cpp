// CPU kernel code generation: scalar expressions (constants, variables, arithmetic with Python
// semantics for // and %, comparisons, logic, casts, block index / count, tensor.dim) and the
// dtype spellings of generated code.
#include <cmath>
#include <cstdio>

#include "kernel_emitter.h"

namespace pypto::codegen::kernel_cpu {

using namespace ir;

std::string CType(DataType t) {
  switch (t) {
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
    case DataType::TASK_ID: break;
  }
  throw UserError("TASK_ID values cannot be used inside a kernel", Span{}, "");
}

std::string StorageKind(DataType t) {
  switch (t) {
    case DataType::FP32: return "pypto_kernel::Storage::F32";
    case DataType::FP16: return "pypto_kernel::Storage::F16";
    case DataType::BF16: return "pypto_kernel::Storage::BF16";
    case DataType::INT8: return "pypto_kernel::Storage::I8";
    case DataType::INT16: return "pypto_kernel::Storage::I16";
    case DataType::INT32: return "pypto_kernel::Storage::I32";
    case DataType::INT64:
    case DataType::INDEX: return "pypto_kernel::Storage::I64";
    case DataType::UINT8: return "pypto_kernel::Storage::U8";
    case DataType::UINT16: return "pypto_kernel::Storage::U16";
    case DataType::UINT32: return "pypto_kernel::Storage::U32";
    case DataType::UINT64: return "pypto_kernel::Storage::U64";
    case DataType::BOOL: return "pypto_kernel::Storage::BOOL";
    case DataType::TASK_ID: break;
  }
  throw UserError("TASK_ID tiles are not supported", Span{}, "");
}

std::string RuntimeDType(DataType t) {
  switch (t) {
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
  throw UserError("TASK_ID tensors are not supported", Span{}, "");
}

namespace {

bool IsConstInt(const std::string& s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i])) && !(i == 0 && s[i] == '-')) return false;
  }
  return s != "-";
}

std::string Product(const std::vector<std::string>& dims, size_t begin, size_t end) {
  bool all_const = true;
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i) {
    if (IsConstInt(dims[i])) n *= std::stoll(dims[i]);
    else all_const = false;
  }
  if (all_const) return std::to_string(n);
  std::string s = "(";
  for (size_t i = begin; i < end; ++i) s += (i > begin ? " * " : "") + dims[i];
  return s + ")";
}

std::string FloatLiteral(double v) {
  if (std::isnan(v)) return "std::numeric_limits<float>::quiet_NaN()";
  if (std::isinf(v)) return v > 0 ? "std::numeric_limits<float>::infinity()" : "(-std::numeric_limits<float>::infinity())";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  std::string s = buf;
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  // Values beyond float range keep double precision (the cast at the use narrows them).
  if (std::fabs(v) > 3.4e38) return "(" + s + ")";
  return "(" + s + "f)";
}

std::string IntLiteral(int64_t v) {
  if (v == INT64_MIN) return "INT64_MIN";
  if (v >= INT32_MIN && v <= INT32_MAX) return v < 0 ? "(" + std::to_string(v) + ")" : std::to_string(v);
  return "INT64_C(" + std::to_string(v) + ")";
}

DataType ScalarDType(const ExprPtr& e) {
  auto* st = e->type ? e->type->as<ScalarType>() : nullptr;
  PYPTO_USER_CHECK(st != nullptr, e->span, "expected a scalar value", "");
  return st->dtype;
}

}  // namespace

std::string TileRef::numel() const { return Product(dims, 0, dims.size()); }
std::string TileRef::rows() const { return dims.size() <= 1 ? "1" : Product(dims, 0, dims.size() - 1); }
std::string TileRef::cols() const { return dims.back(); }

std::string KernelEmitter::Scalar(const ExprPtr& e) {
  switch (e->kind) {
    case NodeKind::ConstInt: return IntLiteral(e->as<ConstInt>()->value);
    case NodeKind::ConstFloat: return FloatLiteral(e->as<ConstFloat>()->value);
    case NodeKind::ConstBool: return e->as<ConstBool>()->value ? "true" : "false";
    case NodeKind::Var:
    case NodeKind::IterArg: {
      const Var* v = as_var(e);
      auto it = names_.find(v);
      if (it != names_.end()) return it->second;
      if (tiles_.count(v) || tensors_.count(v)) {
        throw UserError("'" + v->name + "' is a " + (tiles_.count(v) ? "tile" : "tensor") + ", not a scalar", e->span,
                        "");
      }
      throw UserError("'" + v->name + "' has no value in kernel '" + fn_.name + "'", e->span,
                      "a dynamic dimension used in a kernel must appear in the shape of one of its tensor parameters");
    }
    case NodeKind::BinaryExpr: {
      auto* b = e->as<BinaryExpr>();
      const std::string a = Scalar(b->a), c = Scalar(b->b);
      const DataType rt = ScalarDType(e);
      switch (b->op) {
        case BinaryOp::Add: return "(" + a + " + " + c + ")";
        case BinaryOp::Sub: return "(" + a + " - " + c + ")";
        case BinaryOp::Mul: return "(" + a + " * " + c + ")";
        case BinaryOp::Div: {
          const std::string ct = CType(rt);
          if (is_float(rt)) return "(static_cast<" + ct + ">(" + a + ") / static_cast<" + ct + ">(" + c + "))";
          return "pypto_kernel::floordiv<" + ct + ">(" + a + ", " + c + ")";
        }
        case BinaryOp::FloorDiv: {
          const std::string ct = CType(rt);
          return "pypto_kernel::floordiv<" + ct + ">(static_cast<" + ct + ">(" + a + "), static_cast<" + ct + ">(" + c + "))";
        }
        case BinaryOp::Mod: {
          const std::string ct = CType(rt);
          return "pypto_kernel::pymod<" + ct + ">(static_cast<" + ct + ">(" + a + "), static_cast<" + ct + ">(" + c + "))";
        }
        case BinaryOp::Min:
        case BinaryOp::Max: {
          const std::string ct = CType(rt);
          return std::string("std::") + (b->op == BinaryOp::Min ? "min" : "max") + "<" + ct + ">(static_cast<" + ct +
                 ">(" + a + "), static_cast<" + ct + ">(" + c + "))";
        }
        case BinaryOp::Eq: return "(" + a + " == " + c + ")";
        case BinaryOp::Ne: return "(" + a + " != " + c + ")";
        case BinaryOp::Lt: return "(" + a + " < " + c + ")";
        case BinaryOp::Le: return "(" + a + " <= " + c + ")";
        case BinaryOp::Gt: return "(" + a + " > " + c + ")";
        case BinaryOp::Ge: return "(" + a + " >= " + c + ")";
        case BinaryOp::And: return "(" + a + " && " + c + ")";
        case BinaryOp::Or: return "(" + a + " || " + c + ")";
      }
      break;
    }
    case NodeKind::UnaryExpr: {
      auto* u = e->as<UnaryExpr>();
      return std::string(u->op == UnaryOp::Neg ? "(-" : "(!") + Scalar(u->a) + ")";
    }
    case NodeKind::Cast: {
      auto* c = e->as<Cast>();
      return "static_cast<" + CType(ScalarDType(e)) + ">(" + Scalar(c->value) + ")";
    }
    case NodeKind::Call: {
      auto* call = e->as<Call>();
      if (call->is_op && call->callee == "tile.get_block_idx") return "static_cast<int64_t>(ctx->block_idx)";
      if (call->is_op && call->callee == "tile.get_block_num") return "static_cast<int64_t>(ctx->block_num)";
      if (call->is_op && call->callee == "tensor.dim") {
        PYPTO_USER_CHECK(call->args.size() == 2, e->span, "tensor.dim takes (tensor, axis)", "");
        return "static_cast<int64_t>(" + Tensor(call->args[0]) + ".shapes[" + Scalar(call->args[1]) + "])";
      }
      throw UserError("'" + call->callee + "' cannot be used as a scalar inside a kernel", e->span,
                      call->is_op ? "" : "calls to other functions are not supported inside a kernel");
    }
    default: break;
  }
  throw UserError(std::string("unsupported scalar expression (") + to_string(e->kind) + ") in a kernel", e->span, "");
}

}  // namespace pypto::codegen::kernel_cpu
