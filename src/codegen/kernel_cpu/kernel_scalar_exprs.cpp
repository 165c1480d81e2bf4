// CPU kernel code generation: the kernel spellings of scalar expressions and the dtype spellings
// of generated code. The walk and the infix operators are common::CppScalarExprPrinter's
// (include/pypto/codegen/cpp_scalar_expr.h, shared with orchestration and HOST codegen); this file
// supplies what a kernel prints differently: overflow-safe literals, static_cast, the prelude's
// floordiv / pymod, std::min / max, Var bindings, block index / count, tensor.dim.
// VerifyKernelProgram refuses what cannot be printed; the errors left here are InternalErrors.
#include <cctype>
#include <cmath>
#include <cstdint>

#include "kernel_emitter.h"
#include "kernel_ops_util.h"
#include "pypto/codegen/control_flow_printer.h"
#include "pypto/ir/const_integer.h"

namespace pypto::codegen::kernel_cpu {

using namespace ir;

std::string CType(DataType t) {
  PYPTO_CHECK(t != DataType::TASK_ID, "a TASK_ID value in a kernel (VerifyKernelProgram refuses it)");
  return common::CppScalarType(t, /*task_id_type=*/"");
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
  throw InternalError("a TASK_ID tile in a kernel (VerifyKernelProgram refuses it)");
}

std::string RuntimeDType(DataType t) {
  PYPTO_CHECK(t != DataType::TASK_ID, "a TASK_ID tensor in a kernel (VerifyKernelProgram refuses it)");
  return common::CppRuntimeDType(t);
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

}  // namespace

std::string TileRef::numel() const { return Product(dims, 0, dims.size()); }
std::string TileRef::rows() const { return dims.size() <= 1 ? "1" : Product(dims, 0, dims.size() - 1); }
std::string TileRef::cols() const { return dims.back(); }
std::string TileRef::valid_prefix() const {
  if (valid.empty()) return numel();
  std::vector<std::string> f = dims;
  f[0] = valid[0];
  return Product(f, 0, f.size());
}

// The common literals (INT64_C beyond int32, INT64_MIN by its macro), negative ones in int32
// range parenthesized (so `a - -1` cannot arise).
std::string KernelEmitter::int_literal(int64_t v, DataType d) const {
  const std::string s = common::CppIntLiteral(v);
  const std::string t = v < 0 && v > INT32_MIN ? "(" + s + ")" : s;
  return common::NeedsTypedLiteral(d) ? cast_text(d, t) : t;
}

// The common float literals (exact; NaN / infinity through std::numeric_limits, which the
// prelude includes), finite ones parenthesized.
std::string KernelEmitter::float_literal(double v) const {
  // Values beyond float range keep double precision (the cast at the use narrows them).
  if (std::isfinite(v) && std::fabs(v) > 3.4e38) return "(" + common::CppDoubleLiteral(v) + ")";
  const std::string s = common::CppFloatLiteral(v);
  return std::isfinite(v) ? "(" + s + ")" : s;
}

std::string KernelEmitter::cast_text(DataType to, const std::string& value) const {
  return "static_cast<" + CType(to) + ">(" + value + ")";
}

std::string KernelEmitter::float_to_int_text(DataType to, const std::string& value) const {
  return "pypto_kernel::float_to_int<" + CType(to) + ">(" + value + ")";
}

std::string KernelEmitter::scalar_as(const ExprPtr& e, DataType to) {
  auto* st = e->type ? e->type->as<ScalarType>() : nullptr;
  const std::string text = scalar(e);
  return st && is_float(st->dtype) && is_integer(to) ? float_to_int_text(to, text) : cast_text(to, text);
}

std::string KernelEmitter::var_text(const Var* v, const Span& span) {
  auto it = names_.find(v);
  if (it != names_.end()) return it->second;
  (void)span;
  throw InternalError("'" + v->name + "' has no scalar value in kernel '" + fn_.name + "' (VerifyKernelProgram refuses it)");
}

// Python's // and % (floor, sign of the divisor) are the prelude's floordiv / pymod, computed
// in the result's C++ type like min / max. On integers they are the checked forms: a zero divisor
// fails the run at the expression's line, as in the orchestration (floats: IEEE, x / 0 is ±inf).
std::string KernelEmitter::python_op_text(const BinaryExpr& b, const std::string& a, const std::string& c) {
  const DataType rt = common::ScalarDtypeOf(b);
  const std::string ct = CType(rt);
  const std::string args = "(static_cast<" + ct + ">(" + a + "), static_cast<" + ct + ">(" + c + "))";
  const std::string checked_args = "(ctx, " + common::CppSourceSiteArgs(b.span) + ", static_cast<" + ct + ">(" + a +
                                   "), static_cast<" + ct + ">(" + c + "))";
  switch (b.op) {
    case BinaryOp::Div:
      if (is_float(rt)) return "(static_cast<" + ct + ">(" + a + ") / static_cast<" + ct + ">(" + c + "))";
      return "pypto_kernel::floordiv_checked<" + ct + ">" + checked_args;
    // A float scalar's // and % are Python's on the values, computed in double and rounded to the
    // dtype, as the orchestration computes them (in float, the quotient of a subnormal divisor
    // rounded differently: found by tests/python/float_scalar_fuzz.py). Tile ops keep the tile's type.
    case BinaryOp::FloorDiv:
      if (is_float(rt))
        return "static_cast<" + ct + ">(pto2_float_floordiv<double>(static_cast<double>(" + a + "), static_cast<double>(" + c + ")))";
      return "pypto_kernel::floordiv_checked<" + ct + ">" + checked_args;
    case BinaryOp::Mod:
      if (is_float(rt))
        return "static_cast<" + ct + ">(pto2_float_mod<double>(static_cast<double>(" + a + "), static_cast<double>(" + c + ")))";
      return "pypto_kernel::pymod_checked<" + ct + ">" + checked_args;
    case BinaryOp::Min: return "std::min<" + ct + ">" + args;
    case BinaryOp::Max: return "std::max<" + ct + ">" + args;
    case BinaryOp::Shl:
    case BinaryOp::Shr:   // the count keeps its own type: a negative one fails the run
      return std::string(b.op == BinaryOp::Shl ? "pypto_kernel::shl_checked<" : "pypto_kernel::shr_checked<") + ct +
             ">(ctx, " + common::CppSourceSiteArgs(b.span) + ", static_cast<" + ct + ">(" + a + "), " + c + ")";
    case BinaryOp::Add:   // the others have a C++ operator (no `default:`: -Wswitch flags a new op)
    case BinaryOp::Sub:
    case BinaryOp::Mul:
    case BinaryOp::Eq:
    case BinaryOp::Ne:
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge:
    case BinaryOp::And:
    case BinaryOp::Or:
    case BinaryOp::BitAnd:
    case BinaryOp::BitOr:
    case BinaryOp::BitXor: break;
  }
  throw InternalError(std::string("python_op_text: '") + to_string(b.op) + "' has a C++ operator");
}

const std::map<std::string, ScalarOpPrinter>& ScalarOps() {
  static const std::map<std::string, ScalarOpPrinter> kOps = [] {
    std::map<std::string, ScalarOpPrinter> ops = {
        {"tile.get_block_idx", [](KernelEmitter&, const Call&) { return std::string("static_cast<int64_t>(ctx->block_idx)"); }},
        {"tile.get_block_num", [](KernelEmitter&, const Call&) { return std::string("static_cast<int64_t>(ctx->block_num)"); }},
        {"system.assert",   // Python's assert: a false condition fails the run at its line
         [](KernelEmitter& em, const Call& call) {
           const ExprPtr& cond = call.args.at(0);
           return "pypto_kernel::assert_true(ctx, " + common::CppTruthText(em.scalar(cond), common::ScalarDtypeOf(cond)) +
                  ", " + common::CppAssertArgs(call) + ")";
         }},
        {"tensor.dim",
         [](KernelEmitter& em, const Call& call) {
           PYPTO_CHECK(call.args.size() == 2, "tensor.dim with " << call.args.size() << " arguments (VerifyKernelProgram refuses it)");
           // The axis as a non-negative constant: `shapes[-1]` read outside the array (a wrong
           // extent, silently) for pl.tensor.dim(x, -1) of a dimension not folded to a literal.
           auto* tt = call.args[0]->type->as<TensorType>();
           const auto axis = ConstIntegerValue(call.args[1]);
           PYPTO_CHECK(tt && axis, "tensor.dim: a tensor and a constant axis (the op refuses anything else)");
           const int64_t rank = static_cast<int64_t>(tt->shape.size());
           const int64_t k = *axis < 0 ? *axis + rank : *axis;
           PYPTO_CHECK(k >= 0 && k < rank, "tensor.dim: axis " << *axis << " out of range (the op refuses it)");
           return "static_cast<int64_t>(" + em.tensor(call.args[0]) + ".shapes[" + std::to_string(k) + "])";
         }},
    };
    AddAccessScalarOps(ops);
    AddPipeBufferScalarOps(ops);
    return ops;
  }();
  return kOps;
}

std::string KernelEmitter::print_other(const ExprPtr& e) {
  auto* call = e->as<Call>();
  if (!call) return CppScalarExprPrinter::print_other(e);   // reports it unsupported
  auto it = call->is_op ? ScalarOps().find(call->callee) : ScalarOps().end();
  if (it != ScalarOps().end()) return it->second(*this, *call);
  throw InternalError("'" + call->callee + "' as a kernel scalar (VerifyKernelProgram refuses it)");
}

void KernelEmitter::unsupported(const ExprPtr& e) {
  throw InternalError(std::string("a ") + to_string(e->kind) + " scalar in a kernel (VerifyKernelProgram refuses it)");
}

}  // namespace pypto::codegen::kernel_cpu
