// Scalar IR expressions -> C++ text, shared by the L2 (src/codegen/orchestration) and HOST
// (src/codegen/host) orchestration emitters (private to src/codegen).
//
// Python semantics are kept: `/` is true division (integer operands are cast to float), `//`
// and `%` floor (exact C++ forms unless the emitter proves both operands non-negative).
// Each emitter derives from CppScalarExprPrinter and says how a Var is spelled, which C++ type
// a TaskId has, what it knows about signs, and how an unsupported expression is reported:
//
//   class MyEmitter : public common::CppScalarExprPrinter {
//     std::string var_text(const ir::Var* v, const ir::Span& span) override { return names_.at(v); }
//     std::string scalar_type(ir::DataType d) const override { return common::CppScalarType(d, "TaskHandle"); }
//     [[noreturn]] void unsupported(const ir::ExprPtr& e) override { throw ir::UserError(...); }
//   };
//   print_scalar(i + 1)   ->  "(i + 1)"
#pragma once
#include <string>

#include "pypto/ir/expr.h"

namespace pypto::codegen::common {

// The dtype of a scalar expression (INDEX when it has no scalar type).
ir::DataType ScalarDtypeOf(const ir::ExprPtr& e);

// The C++ type of a scalar of dtype `d`; a TaskId is `task_id_type`. INT64 / INDEX -> int64_t.
std::string CppScalarType(ir::DataType d, const std::string& task_id_type);

// A float literal: 0.5 -> "0.5f", 2 -> "2.0f".
std::string CppFloatLiteral(double v);

// True when `text` needs no parentheses to be an operand: an identifier, number or a.b member.
bool IsAtomicCppText(const std::string& text);

// The 64-bit scalar-slot operand of an `add_scalar` for a parameter of dtype `want`, given the
// C++ text of a value of dtype `have`: floats go through to_u64, the rest are cast to uint64_t.
//   CppScalarSlot("n", INDEX, INT64) -> "(uint64_t)n";  CppScalarSlot("x", FP32, FP32) -> "to_u64(x)"
std::string CppScalarSlot(const std::string& text, ir::DataType have, ir::DataType want);

class CppScalarExprPrinter {
 public:
  virtual ~CppScalarExprPrinter() = default;

  // The C++ text of the scalar expression `e`: literals, Vars, casts, unary and binary ops.
  std::string print_scalar(const ir::ExprPtr& e);

 protected:
  // The C++ text bound to `v` (reports a Var without a value).
  virtual std::string var_text(const ir::Var* v, const ir::Span& span) = 0;
  // The C++ type of a scalar of dtype `d` (used by casts).
  virtual std::string scalar_type(ir::DataType d) const = 0;
  // True when `e` is known to be >= 0, so that `//` and `%` can be the plain C++ operators.
  virtual bool non_negative(const ir::ExprPtr& e) const { return false; }
  // Reports an expression the printer does not handle (a Call, a tuple, ...).
  [[noreturn]] virtual void unsupported(const ir::ExprPtr& e) = 0;
};

}  // namespace pypto::codegen::common
