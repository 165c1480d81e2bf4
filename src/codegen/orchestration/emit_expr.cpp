// Scalar expressions -> C++ (loop bounds, conditions, kernel scalar args, shapes, indices).
// The printing itself is common::CppScalarExprPrinter (include/pypto/codegen/cpp_scalar_expr.h,
// shared with HOST codegen); this file supplies the L2 spelling: Var bindings, PTO2TaskId,
// the sign facts that make `//` and `%` plain C++ operators (StampNonNegativeVars' stamp), and
// the error messages.
#include <functional>

#include "emitter.h"
#include "pypto/ir/error.h"
#include "pypto/transforms/passes.h"

namespace pypto::codegen::orchestration {

using namespace ir;

std::string Emitter::ctype(DataType d) { return common::CppScalarType(d, "PTO2TaskId"); }

std::string Emitter::runtime_dtype(DataType d, const Span& span) {
  PYPTO_CHECK(d != DataType::TASK_ID, "a tensor of TaskIds at line " << span.line << " (VerifyOrchestrationProgram refuses it)");
  return common::CppRuntimeDType(d);
}

using common::IsAtomicCppText;
using common::ScalarDtypeOf;

bool Emitter::non_negative(const ExprPtr& e, DataType as) const {
  return transforms::ProvablyNonNegativeAs(e, as, non_negative_vars_);
}

std::string Emitter::expr(const ExprPtr& e) { return print_scalar(e); }

std::string Emitter::var_text(const Var* v, const Span&) { return ref(v); }

void Emitter::unsupported(const ExprPtr& e) {
  throw InternalError(std::string("orchestration codegen: a ") + to_string(e->kind) +
                      " in a scalar expression (VerifyOrchestrationProgram refuses it)");
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
      if (const Binding* vb = find_binding(v)) b.idents.insert(b.idents.end(), vb->idents.begin(), vb->idents.end());
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
  if (!IsAtomicCppText(b.text)) b.text = "(" + b.text + ")";
  return b;
}

std::string Emitter::strip_parens(const std::string& text) { return common::StripOuterParens(text); }

std::string Emitter::u32(const ExprPtr& e, const Span& span) {
  if (auto* c = e->as<ConstInt>()) return std::to_string(c->value);
  // A dynamic-dim symbol is an argument's extent: below 2^32 (pypto.runtime.args checks it).
  auto* v = e->as<Var>();
  if ((v && is_parameter_dim(v)) || !span.known()) return "(uint32_t)(" + strip_parens(expr(e)) + ")";
  return "pto2_extent_u32(" + strip_parens(expr(e)) + ", " + source_site_args(span) + ")";
}

std::string Emitter::i64(const ExprPtr& e) {
  if (auto* c = e->as<ConstInt>()) return common::CppIntLiteral(c->value);
  std::string s = expr(e);
  if (ScalarDtypeOf(e) == DataType::INT64 || ScalarDtypeOf(e) == DataType::INDEX) return s;
  return "(int64_t)(" + strip_parens(s) + ")";
}

std::string Emitter::scalar_slot(const ExprPtr& e, DataType param_dtype, const std::string& site_args) {
  return common::CppScalarSlot(expr(e), ScalarDtypeOf(e), param_dtype, site_args);
}

}  // namespace pypto::codegen::orchestration
