// Scalar IR expressions -> C++ text, shared by the L2 (src/codegen/orchestration) and HOST
// (src/codegen/host) orchestration emitters and the CPU kernel emitter (src/codegen/kernel_cpu).
// Public so that tests and a new backend print scalars the one way: the literal spellings
// (CppIntLiteral, CppFloatLiteral, ...) and the CppScalarExprPrinter base.
//
// Python semantics are kept: `/` is true division (integer operands are cast to float), `//`
// and `%` floor (exact C++ forms unless the emitter proves both operands non-negative).
// Each emitter derives from CppScalarExprPrinter and says how a Var is spelled, which C++ type
// a TaskId has, what it knows about signs, and how an unsupported expression is reported:
//
//   class MyEmitter : public common::CppScalarExprPrinter {
//     std::string var_text(const ir::Var* v, const ir::Span& span) override { return names_.at(v); }
//     std::string scalar_type(ir::DataType d) const override { return common::CppScalarType(d, "TaskHandle"); }
//     [[noreturn]] void unsupported(const ir::ExprPtr& e) override { throw ir::InternalError(...); }
//   };
//   print_scalar(i + 1)   ->  "(i + 1)"
//
// The walk and the infix operators (+ - * comparisons && || unary - !) are the same for every
// emitter. The spelling hooks below default to the orchestration spellings; the kernel emitter
// overrides them (overflow-safe literals, static_cast, pypto_kernel::floordiv / pymod helpers)
// and prints the kernel-only scalar ops (block index, tensor.dim) through print_other.
#pragma once
#include <cstdint>
#include <string>

#include "pypto/ir/expr.h"

namespace pypto::codegen::common {

// The dtype of a scalar expression (INDEX when it has no scalar type).
ir::DataType ScalarDtypeOf(const ir::ExprPtr& e);
ir::DataType ScalarDtypeOf(const ir::Expr& e);

// The C++ type of a scalar of dtype `d`; a TaskId is `task_id_type`. INT64 / INDEX -> int64_t.
std::string CppScalarType(ir::DataType d, const std::string& task_id_type);

// An int64_t literal that is valid C++ for every value: "4", "-1"; beyond int32
// "INT64_C(5000000000)" (int64_t on every data model); INT64_MIN as "INT64_MIN", since no literal
// spells it (`-9223372036854775808` negates 9223372036854775808, which does not fit int64_t).
// Both macros come from <stdint.h>, which generated files include.
std::string CppIntLiteral(int64_t v);

// The literal of the float nearest `v` (the value an FP32 constant holds: IEEE round to nearest),
// exact and accepted by -Wall -Werror: 0.5 -> "0.5f", 2 -> "2.0f", -0.0 -> "-0.0f",
// 1e-50 -> "0.0f" (underflow), 1e39 -> "std::numeric_limits<float>::infinity()" (overflow),
// -inf -> "(-std::numeric_limits<float>::infinity())", NaN -> "std::numeric_limits<float>::quiet_NaN()".
// Digits are those of `v` when they round to the same float ("0.1f"), else the float's own 9.
std::string CppFloatLiteral(double v);

// True when CppFloatLiteral(v) spells std::numeric_limits (NaN or an infinite float), so the
// generated file needs <limits>.
bool CppFloatLiteralNeedsLimits(double v);

// A double literal (9 significant digits): 0.5 -> "0.5", 2 -> "2.0", 1e+39 -> "1e+39".
std::string CppDoubleLiteral(double v);

// The runtime's DataType enumerator for a tensor element dtype: FP32 -> "DataType::FLOAT32",
// INDEX -> "DataType::INT64". Not for TASK_ID (no tensor holds TaskIds; callers report it).
std::string CppRuntimeDType(ir::DataType d);

// True when `text` needs no parentheses to be an operand: an identifier, number or a.b member.
bool IsAtomicCppText(const std::string& text);

// `text` without one pair of parentheses around all of it: "(i + 1)" -> "i + 1", while
// "(a) + (b)" is returned unchanged.
std::string StripOuterParens(const std::string& text);

// The C++ truth of a scalar's text where a bool is needed (an if condition, && / ||, a cast to
// BOOL): the text itself for a BOOL, else `(text != 0)`. g++ -Wall reports `if (a * b)` and
// `(bool)(c ? 2 : 3)` (-Wint-in-bool-context), an error under -Werror.
//   CppTruthText("(a * b)", DataType::INDEX)  ->  "((a * b) != 0)"
std::string CppTruthText(const std::string& text, ir::DataType d);

// Whether `a + b` (- *) with operands of dtypes `a`, `b` and an integer result `result` must be
// computed with casts to the result's C++ type to mean what the DSL means (Python's integers
// wrapped to the dtype): the result is narrower than int, or an operand's C++ type differs.
//   NeedsTypedArithmetic(DataType::INT8, DataType::INT8, DataType::INT8)   == true   (int8 * int8 is int)
//   NeedsTypedArithmetic(DataType::INDEX, DataType::INT64, DataType::INDEX) == false  (both int64_t)
bool NeedsTypedArithmetic(ir::DataType result, ir::DataType a, ir::DataType b);

// Whether an integer literal of dtype `d` is printed cast to d's C++ type: a UINT32 / UINT64
// value printed as an int or int64 literal would make `lit + x` compute in int64 (no wrap at 32
// bits) and `x < lit` mix signedness. Narrower types compute typed anyway (NeedsTypedArithmetic).
//   NeedsTypedLiteral(DataType::UINT32) == true; NeedsTypedLiteral(DataType::INT32) == false
bool NeedsTypedLiteral(ir::DataType d);

// The 64-bit scalar-slot operand of an `add_scalar` for a parameter of dtype `want`, given the
// C++ text of a value of dtype `have`: floats go through to_u64, the rest are cast to uint64_t.
//   CppScalarSlot("n", INDEX, INT64) -> "(uint64_t)n";  CppScalarSlot("x", FP32, FP32) -> "to_u64(x)"
// A float into an integer parameter, and an integer `have` whose values `want` cannot all hold,
// are checked at run time by pto2_int_arg (pto2/orchestration.h), which names `site_args`
// (ArgumentSiteArgs) when the value does not fit:
//   CppScalarSlot("n", INT64, INT32, s) -> "pto2_int_arg((int64_t)(n), DataType::INT32, " + s + ")"
std::string CppScalarSlot(const std::string& text, ir::DataType have, ir::DataType want,
                          const std::string& site_args = "");
// `"scale", "k", "prog.py", 12`: pto2_int_arg's site arguments for argument `param` of `callee` at `span`.
std::string ArgumentSiteArgs(const ir::Span& span, const std::string& param, const std::string& callee);

// The C++ text of a float `value` of dtype `d` rounded to d's precision: FP16 / BF16 values
// are rounded after each op (pto2/half_float.h), other dtypes are `value` itself.
//   RoundedToDtypeText(DataType::FP16, "(p * p)")  ->  "pto2::round_to_half(p * p)"
std::string RoundedToDtypeText(ir::DataType d, const std::string& value);

class CppScalarExprPrinter {
 public:
  virtual ~CppScalarExprPrinter() = default;

  // The C++ text of the scalar expression `e`: literals, Vars, casts, unary and binary ops.
  std::string print_scalar(const ir::ExprPtr& e);

  // True once the default float_literal printed a std::numeric_limits constant (NaN, infinity):
  // the generated file must then include <limits>.
  bool needs_limits_header() const { return needs_limits_header_; }

 protected:
  // The C++ text bound to `v` (reports a Var without a value).
  virtual std::string var_text(const ir::Var* v, const ir::Span& span) = 0;
  // The C++ type of a scalar of dtype `d` (used by casts).
  virtual std::string scalar_type(ir::DataType d) const = 0;
  // True when `e`'s value as dtype `as` (the operation's) is known to be >= 0, so that `//` and
  // `%` can be the plain C++ operators.
  virtual bool non_negative(const ir::ExprPtr& e, ir::DataType as) const { return false; }
  // Reports an expression the printer does not handle (a Call, a tuple, ...).
  [[noreturn]] virtual void unsupported(const ir::ExprPtr& e) = 0;

  // --- spelling hooks (defaults: the orchestration spellings) ---
  // An integer literal of dtype `d`: CppIntLiteral ("true" / "false" for BOOL).
  virtual std::string int_literal(int64_t v, ir::DataType d) const;
  // A float literal: CppFloatLiteral (notes when it needs <limits>).
  virtual std::string float_literal(double v) const;
  // The C++ text `value` converted to dtype `to`: "((int32_t)(x))".
  virtual std::string cast_text(ir::DataType to, const std::string& value) const;
  // A float `value` converted to the integer dtype `to`: toward zero, out-of-range values
  // saturated and NaN giving 0, as a tile cast (a plain C++ conversion of those is undefined):
  // "pto2_float_to_int<int64_t>(x)".
  virtual std::string float_to_int_text(ir::DataType to, const std::string& value) const;
  // Div, FloorDiv, Mod, Min, Max: the binary ops without a C++ operator of Python's meaning,
  // given the printed operands `a` and `c` of `b`.
  virtual std::string python_op_text(const ir::BinaryExpr& b, const std::string& a, const std::string& c);
  // The default python_op_text's integer `//` / `%` (the orchestration and HOST spellings):
  // `a / pto2_divisor(n, site)` when both operands are non-negative and the divisor is not a
  // non-zero constant; `pto2_floordiv<int64_t>(a, n, site)` / `pto2_mod<...>` when either may be
  // negative (pto2/orchestration.h: Python's rounding, a 0 divisor and MIN // -1 throw).
  std::string checked_divisor(const ir::BinaryExpr& b, const std::string& c);
  std::string signed_division(const char* helper, const ir::BinaryExpr& b, const std::string& a, const std::string& c);
  // print_scalar before an FP16 / BF16 result is rounded to its dtype.
  std::string print_unrounded(const ir::ExprPtr& e);
  // Any other expression (a Call, ...): unsupported by default.
  virtual std::string print_other(const ir::ExprPtr& e);

 private:
  mutable bool needs_limits_header_ = false;   // set by the (const) float_literal
};

}  // namespace pypto::codegen::common
