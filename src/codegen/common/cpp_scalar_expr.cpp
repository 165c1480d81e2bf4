// Scalar IR expressions -> C++ text (see cpp_scalar_expr.h).
#include "pypto/codegen/cpp_scalar_expr.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>

#include "pypto/codegen/control_flow_printer.h"
#include "pypto/ir/const_integer.h"
#include "pypto/ir/error.h"
#include "pypto/ir/structural_equal.h"
#include "pypto/ir/type.h"

namespace pypto::codegen::common {

using namespace ir;

DataType ScalarDtypeOf(const Expr& e) {
  auto* s = e.type ? e.type->as<ScalarType>() : nullptr;
  return s ? s->dtype : DataType::INDEX;
}

DataType ScalarDtypeOf(const ExprPtr& e) { return ScalarDtypeOf(*e); }

namespace {

// An integer or boolean expression without a division (which may fail at run time) or a call:
// evaluating it twice gives the same value and has no effect.
bool PureInteger(const ExprPtr& e) {
  if (is_float(ScalarDtypeOf(e))) return false;
  if (as_var(e) || e->as<ConstInt>() || e->as<ConstBool>()) return true;
  if (auto* c = e->as<Cast>()) return PureInteger(c->value);
  if (auto* u = e->as<UnaryExpr>()) return PureInteger(u->a);
  if (auto* b = e->as<BinaryExpr>())
    return b->op != BinaryOp::Div && b->op != BinaryOp::FloorDiv && b->op != BinaryOp::Mod && b->op != BinaryOp::Shl &&
           b->op != BinaryOp::Shr && PureInteger(b->a) && PureInteger(b->b);
  return false;
}

// g++ -Wall reports an integer comparison of an expression with itself (-Wtautological-compare:
// `b <= b`, and min(a, a)'s `(a < a ? a : a)`), an error under -Werror (found by the scalar
// expression fuzzer, tests/python/scalar_expr_fuzz.py). Such operands are folded: their value
// is known. Floats are not: x == x is false for NaN (and g++ does not report them). The caller
// compares the operands' C++ text, not their IR: `max(max(b, b), b)` folds its inner max to `b`,
// and the outer one would then print `b > b` (two pure expressions of one text have one value).
bool SameIntegerOperands(const BinaryExpr& b) { return PureInteger(b.a) && PureInteger(b.b); }

// The same tree over the same variables (and the same literals, casts and operators).
bool SameTree(const ExprPtr& a, const ExprPtr& b) {
  if (a.get() == b.get()) return true;
  const Var* va = as_var(a);
  const Var* vb = as_var(b);
  if (va || vb) return va == vb;
  if (a->kind != b->kind || ScalarDtypeOf(a) != ScalarDtypeOf(b)) return false;
  if (auto* x = a->as<ConstInt>()) return x->value == b->as<ConstInt>()->value;
  if (auto* x = a->as<ConstBool>()) return x->value == b->as<ConstBool>()->value;
  if (auto* x = a->as<Cast>()) return SameTree(x->value, b->as<Cast>()->value);
  if (auto* x = a->as<UnaryExpr>()) return x->op == b->as<UnaryExpr>()->op && SameTree(x->a, b->as<UnaryExpr>()->a);
  if (auto* x = a->as<BinaryExpr>()) {
    auto* y = b->as<BinaryExpr>();
    return x->op == y->op && SameTree(x->a, y->a) && SameTree(x->b, y->b);
  }
  return false;
}

// The value of `x OP x` for a comparison, else nullopt.
std::optional<std::string> SelfComparison(BinaryOp op) {
  if (op == BinaryOp::Eq || op == BinaryOp::Le || op == BinaryOp::Ge) return std::string("true");
  if (op == BinaryOp::Ne || op == BinaryOp::Lt || op == BinaryOp::Gt) return std::string("false");
  return std::nullopt;
}

}  // namespace

bool NeedsTypedArithmetic(DataType result, DataType a, DataType b) {
  if (!is_integer(result)) return false;
  const std::string t = CppScalarType(result, "");
  return bit_width(result) < 32 || CppScalarType(a, "") != t || CppScalarType(b, "") != t;
}

namespace {

}  // namespace

std::string CppTruthText(const std::string& text, DataType d) {
  return d == DataType::BOOL ? text : "(" + text + " != 0)";
}

std::string CppScalarType(DataType d, const std::string& task_id_type) {
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
    case DataType::TASK_ID: return task_id_type;
  }
  return "int64_t";
}

std::string CppDoubleLiteral(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string CppIntLiteral(int64_t v) {
  if (v == std::numeric_limits<int64_t>::min()) return "INT64_MIN";
  // `-2147483648` is the negation of 2147483648, a long: an INT32 expression with it computed in
  // 64 bits (typed fuzzer seed 3029)
  if (v == std::numeric_limits<int32_t>::min()) return "(-2147483647 - 1)";
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
    return "INT64_C(" + std::to_string(v) + ")";
  }
  return std::to_string(v);
}

namespace {

// The float nearest `v` (round to nearest even) without converting an out-of-range double,
// which is undefined behaviour: past FLT_MAX it stays FLT_MAX below the midpoint to the next
// power of two, 2^128 - 2^103, and is infinity from there (the tie goes to infinity: FLT_MAX's
// significand is odd).
float NearestFloat(double v) {
  const double flt_max = std::numeric_limits<float>::max();
  if (std::isnan(v) || std::fabs(v) <= flt_max) return static_cast<float>(v);
  const float big = std::fabs(v) >= std::ldexp(1.0, 128) - std::ldexp(1.0, 103) ? std::numeric_limits<float>::infinity()
                                                                                 : std::numeric_limits<float>::max();
  return std::signbit(v) ? -big : big;
}

}  // namespace

std::string CppFloatLiteral(double v) {
  const float f = NearestFloat(v);
  if (std::isnan(f)) return "std::numeric_limits<float>::quiet_NaN()";
  if (std::isinf(f)) return f > 0 ? "std::numeric_limits<float>::infinity()" : "(-std::numeric_limits<float>::infinity())";
  // A literal that underflows to zero or exceeds FLT_MAX is a -Woverflow / -Wliteral-range error.
  if (f == 0) return std::signbit(f) ? "-0.0f" : "0.0f";
  std::string digits = CppDoubleLiteral(v);
  if (std::fabs(v) > std::numeric_limits<float>::max() || std::strtof(digits.c_str(), nullptr) != f) {
    digits = CppDoubleLiteral(f);   // 9 significant digits identify every float
  }
  return digits + "f";
}

bool CppFloatLiteralNeedsLimits(double v) { return !std::isfinite(NearestFloat(v)); }

std::string CppRuntimeDType(DataType d) {
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
  throw InternalError("CppRuntimeDType: " + std::string(to_string(d)) + " has no runtime DataType");
}

bool IsAtomicCppText(const std::string& text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
  }
  return true;
}

std::string StripOuterParens(const std::string& text) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') return text;
  int depth = 0;
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    depth += text[i] == '(' ? 1 : text[i] == ')' ? -1 : 0;
    if (depth == 0) return text;
  }
  return text.substr(1, text.size() - 2);
}

namespace {

std::string quoted(const std::string& text) { return "\"" + CppStringBody(text) + "\""; }

// True when a value of integer dtype `have` may lie outside the range of integer dtype `want`
// (INT64 into INT32, INT32 into UINT32, UINT64 into INT64).
bool may_not_fit(DataType have, DataType want) {
  const bool hs = is_signed(have), ws = is_signed(want);
  const int hb = bit_width(have), wb = bit_width(want);
  const bool below = hs && (!ws || wb < hb);   // values under want's minimum
  const bool above = hs == ws ? hb > wb : hs ? hb > wb + 1 : hb >= wb;
  return below || above;
}

}  // namespace

std::string ArgumentSiteArgs(const Span& span, const std::string& param, const std::string& callee) {
  return quoted(callee) + ", " + quoted(param) + ", " + CppSourceSiteArgs(span);
}

std::string CppScalarSlot(const std::string& text, DataType have, DataType want, const std::string& site_args) {
  std::string s = text;
  if (is_float(want)) {
    if (!is_float(have)) s = "(float)(" + s + ")";
    return "to_u64(" + s + ")";
  }
  // A float into an integer parameter (the C++ conversion of NaN, inf or an out-of-range value is
  // undefined behaviour), and an integer the parameter's dtype may not hold (it was passed as its
  // low bits: the callee saw another number), are checked where they are passed, naming the site.
  if (is_integer(want) && bit_width(want) <= 64 &&
      (is_float(have) || (is_integer(have) && may_not_fit(have, want)))) {
    const std::string source = is_float(have) ? "double" : is_signed(have) ? "int64_t" : "uint64_t";
    return "pto2_int_arg((" + source + ")(" + StripOuterParens(s) + "), " + CppRuntimeDType(want) + ", " +
           (site_args.empty() ? std::string("nullptr, nullptr, nullptr, 0") : site_args) + ")";
  }
  // A float into a BOOL parameter is its truth, as Python's bool() and pl.cast: 0.5 is True (it
  // was truncated to 0 first: False), NaN is True (its conversion to int64_t was undefined).
  if (is_float(have)) return "(uint64_t)((" + StripOuterParens(s) + ") != 0)";
  return IsAtomicCppText(s) || s[0] == '(' ? "(uint64_t)" + s : "(uint64_t)(" + s + ")";
}

namespace {

// Whether the C++ value of `e`, an FP16 / BF16 scalar, may not be one of its dtype (C++ computes
// it in float): a literal, a conversion from another dtype, or an arithmetic result. A Var holds
// a rounded value already, a negation or min / max of rounded values is one.
bool MayNeedRounding(const Expr& e) {
  if (e.as<ConstFloat>()) return true;
  if (auto* c = e.as<Cast>()) return ScalarDtypeOf(c->value) != ScalarDtypeOf(e);
  if (auto* b = e.as<BinaryExpr>()) {   // arithmetic; min / max give a rounded operand, the rest BOOL or ints
    const BinaryOp op = b->op;
    return op == BinaryOp::Add || op == BinaryOp::Sub || op == BinaryOp::Mul || op == BinaryOp::Div ||
           op == BinaryOp::FloorDiv || op == BinaryOp::Mod;
  }
  return false;
}

}  // namespace

std::string RoundedToDtypeText(DataType d, const std::string& value) {
  if (d == DataType::FP16) return "pto2::round_to_half(" + StripOuterParens(value) + ")";
  if (d == DataType::BF16) return "pto2::round_to_bfloat16(" + StripOuterParens(value) + ")";
  return value;
}

// An FP16 / BF16 result is rounded to its dtype after each op, as NumPy's float16 and the tiles
// of those dtypes are: a value does not change when it is passed to a kernel (whose parameter is
// rounded), and pl.cast(x, pl.FP16) rounds.
std::string CppScalarExprPrinter::print_scalar(const ExprPtr& e) {
  const DataType d = ScalarDtypeOf(e);
  std::string text = print_unrounded(e);
  if ((d == DataType::FP16 || d == DataType::BF16) && MayNeedRounding(*e)) return RoundedToDtypeText(d, text);
  return text;
}

std::string CppScalarExprPrinter::print_unrounded(const ExprPtr& e) {
  if (auto* v = as_var(e)) return var_text(v, e->span);
  if (auto* c = e->as<ConstInt>()) return int_literal(c->value, ScalarDtypeOf(e));
  // Literals alone, with a literal or an exact intermediate outside int32: printed as is, g++
  // could see an overflow at compile time (-Woverflow, an error under -Werror: `INT64_C(2147483648)
  // * INT64_C(4294967297)`, found by the scalar expression fuzzer; `2147483647 + 1` adds two
  // 32-bit ints), so they are printed as their value. `4 - 1` stays as written.
  bool wide = false;
  if (auto v = ConstIntegerValue(e, &wide); v && wide) return int_literal(*v, ScalarDtypeOf(e));
  if (auto* c = e->as<ConstFloat>()) return float_literal(c->value);
  if (auto* c = e->as<ConstBool>()) return c->value ? "true" : "false";
  if (auto* c = e->as<Cast>()) {
    const DataType to = ScalarDtypeOf(e);
    if (is_integer(to) && is_float(ScalarDtypeOf(c->value))) return float_to_int_text(to, print_scalar(c->value));
    // a number's truth as a comparison: g++ -Wall reports `(bool)(a * b)` and `(bool)(c ? 2 : 3)`
    // (-Wint-in-bool-context, an error under -Werror; found by the scalar expression fuzzer)
    if (to == DataType::BOOL) return CppTruthText(print_scalar(c->value), ScalarDtypeOf(c->value));
    // an integer to BF16 rounds once (through float it rounded twice: pto2/half_float.h)
    if (to == DataType::BF16 && is_integer(ScalarDtypeOf(c->value)))
      return "pto2::int_to_bfloat16(" + cast_text(ScalarDtypeOf(c->value), print_scalar(c->value)) + ")";
    return cast_text(to, print_scalar(c->value));
  }
  if (auto* u = e->as<UnaryExpr>()) {
    std::string a = print_scalar(u->a);
    if (u->op == UnaryOp::Not) return ScalarDtypeOf(u->a) == DataType::BOOL ? "(!" + a + ")" : "(" + a + " == 0)";
    if (u->op == UnaryOp::BitNot) {   // in the operand's type: ~ of a narrow type would give an int
      const DataType t = ScalarDtypeOf(e);
      return cast_text(t, "~" + cast_text(t, a));
    }
    const std::string neg = a[0] == '-' ? "(-(" + a + "))" : "(-" + a + ")";   // "(--1)" would be a decrement
    const DataType t = ScalarDtypeOf(e);
    return is_integer(t) && bit_width(t) < 32 ? cast_text(t, neg) : neg;   // C++ negates a narrow type in int
  }
  if (auto* b = e->as<BinaryExpr>()) {
    const bool pure = SameIntegerOperands(*b);
    // A comparison of one tree with itself is known; it prints no operand, so a variable only it
    // reads stays unread (an orchestration voids it: kernel-flow fuzz, `s3 == s3` left `int64_t s3`
    // unused under -Werror).
    if (pure && SameTree(b->a, b->b)) {
      if (auto known = SelfComparison(b->op)) return *known;
    }
    std::string a = print_scalar(b->a), c = print_scalar(b->b);
    if (pure && a == c) {   // two trees of one text: `max(b, b) == b` after the inner max folded
      if (b->op == BinaryOp::Min || b->op == BinaryOp::Max) return a;
      if (SelfComparison(b->op)) c = cast_text(ScalarDtypeOf(b->b), c);   // g++ reports `b == b`, not a cast
    }
    const DataType rt = ScalarDtypeOf(*b), da = ScalarDtypeOf(b->a), dc = ScalarDtypeOf(b->b);
    // An operand of another dtype is first converted to the FP16 / BF16 the op computes in (FP16
    // with BF16 computes in FP16, the left one's: a BF16 1e10 is inf there; an integer rounds).
    const bool logical = b->op == BinaryOp::And || b->op == BinaryOp::Or;
    const DataType op_dt = rt == DataType::BOOL ? PromoteScalarDTypes(da, dc) : rt;
    if (!logical && (op_dt == DataType::FP16 || op_dt == DataType::BF16)) {
      if (da != op_dt) a = RoundedToDtypeText(op_dt, a);
      if (dc != op_dt) c = RoundedToDtypeText(op_dt, c);
    }
    // & | ^ in the result's type (C++ would compute a narrow type's in int, and mix signedness)
    const auto bitwise = [&](const char* op) { return cast_text(rt, cast_text(rt, a) + " " + op + " " + cast_text(rt, c)); };
    // + - * in the result's type, wrapped to it as Python's ints wrapped to the dtype: C++ computes
    // a type narrower than int in int (no wrap: an INT8 100 * 5 compared 500 > 0), a mix of
    // signedness in the unsigned type and an INT32 times an INDEX literal in 32 bits.
    const auto arith = [&](const char* op) {
      if (!NeedsTypedArithmetic(rt, da, dc)) return "(" + a + " " + op + " " + c + ")";
      return cast_text(rt, cast_text(rt, a) + " " + op + " " + cast_text(rt, c));
    };
    // Two integers of different signedness (or a bool and an integer) compare in the dtype they
    // promote to, as arithmetic would: C++ compares a uint64 with an int64 as unsigned (-1 above
    // 5), a UINT8 200 with an INT8 -56 in int (the DSL: both -56 as INT8), and g++ reports a bool
    // compared with 100 (-Wbool-compare). Of one signedness, C++ compares the values as the DSL does.
    const auto compare = [&](const char* op) {
      const auto int_like = [](DataType d) { return is_integer(d) || d == DataType::BOOL; };
      const auto kind = [](DataType d) { return d == DataType::BOOL ? 2 : is_signed(d) ? 1 : 0; };
      if (da == dc || !int_like(da) || !int_like(dc) || kind(da) == kind(dc)) return "(" + a + " " + op + " " + c + ")";
      const DataType pt = PromoteScalarDTypes(da, dc);
      return "(" + cast_text(pt, a) + " " + op + " " + cast_text(pt, c) + ")";
    };
    switch (b->op) {
      case BinaryOp::Add: return arith("+");
      case BinaryOp::Sub: return arith("-");
      case BinaryOp::Mul: return arith("*");
      case BinaryOp::Div:
      case BinaryOp::FloorDiv:
      case BinaryOp::Mod:
      case BinaryOp::Min:
      case BinaryOp::Max: return python_op_text(*b, a, c);
      case BinaryOp::Eq: return compare("==");
      case BinaryOp::Ne: return compare("!=");
      case BinaryOp::Lt: return compare("<");
      case BinaryOp::Le: return compare("<=");
      case BinaryOp::Gt: return compare(">");
      case BinaryOp::Ge: return compare(">=");
      case BinaryOp::And: return "(" + CppTruthText(a, ScalarDtypeOf(b->a)) + " && " + CppTruthText(c, ScalarDtypeOf(b->b)) + ")";
      case BinaryOp::Or: return "(" + CppTruthText(a, ScalarDtypeOf(b->a)) + " || " + CppTruthText(c, ScalarDtypeOf(b->b)) + ")";
      case BinaryOp::BitAnd: return bitwise("&");
      case BinaryOp::BitOr: return bitwise("|");
      case BinaryOp::BitXor: return bitwise("^");
      case BinaryOp::Shl:
      case BinaryOp::Shr: return python_op_text(*b, a, c);
    }
  }
  return print_other(e);
}

std::string CppScalarExprPrinter::print_other(const ExprPtr& e) {
  unsupported(e);
  throw InternalError("CppScalarExprPrinter::unsupported returned");   // it must throw
}

bool NeedsTypedLiteral(DataType d) { return d == DataType::UINT32 || d == DataType::UINT64; }

std::string CppScalarExprPrinter::int_literal(int64_t v, DataType d) const {
  if (d == DataType::BOOL) return v ? "true" : "false";
  return NeedsTypedLiteral(d) ? cast_text(d, CppIntLiteral(v)) : CppIntLiteral(v);
}

std::string CppScalarExprPrinter::float_literal(double v) const {
  if (CppFloatLiteralNeedsLimits(v)) needs_limits_header_ = true;
  return CppFloatLiteral(v);
}

std::string CppScalarExprPrinter::cast_text(DataType to, const std::string& value) const {
  return "((" + scalar_type(to) + ")(" + value + "))";
}

std::string CppScalarExprPrinter::float_to_int_text(DataType to, const std::string& value) const {
  return "pto2_float_to_int<" + scalar_type(to) + ">(" + StripOuterParens(value) + ")";
}

// A C++ division by 0 is undefined (SIGFPE): a divisor that is not a non-zero constant is
// checked at run time, `pto2_divisor(n, "prog.py", 12)` (pto2/orchestration.h).
std::string CppScalarExprPrinter::checked_divisor(const BinaryExpr& b, const std::string& c) {
  if (auto* k = b.b->as<ConstInt>(); k && k->value != 0) return c;
  return "pto2_divisor(" + StripOuterParens(c) + ", " + CppSourceSiteArgs(b.span) + ")";
}

// Python's floor `//` and `%` on operands that may be negative: the runtime's helpers, which also
// check the divisor, refuse MIN // -1 and never form an overflowing intermediate.
std::string CppScalarExprPrinter::signed_division(const char* helper, const BinaryExpr& b, const std::string& a,
                                                  const std::string& c) {
  return std::string(helper) + "<" + scalar_type(ScalarDtypeOf(b)) + ">(" + StripOuterParens(a) + ", " +
         StripOuterParens(c) + ", " + CppSourceSiteArgs(b.span) + ")";
}

std::string CppScalarExprPrinter::python_op_text(const BinaryExpr& b, const std::string& a, const std::string& c) {
  const bool float_operand = is_float(ScalarDtypeOf(b.a)) || is_float(ScalarDtypeOf(b.b));
  const bool fl = is_float(ScalarDtypeOf(b)) || float_operand;
  switch (b.op) {
    case BinaryOp::Div:
      if (!float_operand) return "((float)" + a + " / (float)" + c + ")";
      return "(" + a + " / " + c + ")";
    case BinaryOp::FloorDiv:
      if (fl) return "((float)pto2_float_floordiv((double)" + a + ", (double)" + c + "))";   // Python's float //
      if (non_negative(b.a, ScalarDtypeOf(b)) && non_negative(b.b, ScalarDtypeOf(b))) return "(" + a + " / " + checked_divisor(b, c) + ")";
      return signed_division("pto2_floordiv", b, a, c);
    case BinaryOp::Mod:
      if (fl) return "((float)pto2_float_mod((double)" + a + ", (double)" + c + "))";   // Python's float %
      if (non_negative(b.a, ScalarDtypeOf(b)) && non_negative(b.b, ScalarDtypeOf(b))) return "(" + a + " % " + checked_divisor(b, c) + ")";
      return signed_division("pto2_mod", b, a, c);
    // Python's min(a, b) and max(a, b): `a` unless `b` compares below (above) it, so a NaN or a
    // signed zero gives what Python and the kernels' std::min / std::max give (min(nan, 1.0) is
    // nan, min(0.0, -0.0) is 0.0).
    // Integers compare and give the result in its type (an INT8 with a UINT8 250 is the INT8 -6).
    case BinaryOp::Min:
    case BinaryOp::Max: {
      const DataType rt = ScalarDtypeOf(b);
      const bool typed = NeedsTypedArithmetic(rt, ScalarDtypeOf(b.a), ScalarDtypeOf(b.b));
      const std::string x = typed ? cast_text(rt, a) : a, y = typed ? cast_text(rt, c) : c;
      return "(" + y + (b.op == BinaryOp::Min ? " < " : " > ") + x + " ? " + y + " : " + x + ")";
    }
    // Python's << and >> (pto2/orchestration.h): a negative count fails the run at the line.
    case BinaryOp::Shl:
    case BinaryOp::Shr: {
      const std::string t = scalar_type(ScalarDtypeOf(b));
      return std::string(b.op == BinaryOp::Shl ? "pto2_shl<" : "pto2_shr<") + t + ">(" + cast_text(ScalarDtypeOf(b), a) +
             ", " + StripOuterParens(c) + ", " + CppSourceSiteArgs(b.span) + ")";
    }
    case BinaryOp::Add:
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

}  // namespace pypto::codegen::common
