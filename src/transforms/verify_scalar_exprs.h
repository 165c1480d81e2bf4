// The scalar expressions the orchestration and HOST code generators print (loop bounds,
// conditions, scalar task arguments, shapes, indices), checked the way the printer walks
// them (common::CppScalarExprPrinter): Vars, literals, casts, unary and binary operators.
// Private to src/transforms/verify_*.cpp.
//
//   ScalarExprChecker c(kOrchestrationWording);
//   c.on_var = [&](const ir::Var* v, const ir::Span& s) { ... };   // a Var the printer names
//   c.check(loop.stop);        // UserError on a Call inside an expression, ...
#pragma once
#include <functional>
#include <string>

#include "pypto/ir/error.h"
#include "pypto/ir/expr.h"
#include "pypto/ir/type.h"

namespace pypto::transforms {

// How one backend words an expression it cannot print.
struct ExprWording {
  const char* where;          // "orchestration code" / "a HOST-level orchestration"
  bool name_calls;            // a Call gets "'<callee>' cannot be used inside an expression in <where>"
  const char* kind_help;      // help line of "this expression (<kind>) is not supported in <where>"
};

inline constexpr ExprWording kOrchestrationWording{"orchestration code", true, ""};
inline constexpr ExprWording kHostWording{"a HOST-level orchestration", false,
                                          "assign calls to a variable first; HOST code computes scalars only"};

class ScalarExprChecker {
 public:
  explicit ScalarExprChecker(ExprWording wording) : wording_(wording) {}
  std::function<void(const ir::Var*, const ir::Span&)> on_var;   // each Var the printer names

  // Walks `e` in the printer's order; throws ir::UserError at the first unprintable node.
  void check(const ir::ExprPtr& e) const {
    using namespace ir;
    if (auto* v = as_var(e)) {
      if (on_var) on_var(v, e->span);
      return;
    }
    if (e->is<ConstInt>() || e->is<ConstFloat>() || e->is<ConstBool>()) return;
    if (auto* c = e->as<Cast>()) return check(c->value);
    if (auto* u = e->as<UnaryExpr>()) return check(u->a);
    if (auto* b = e->as<BinaryExpr>()) {
      check(b->a);
      check(b->b);
      return;
    }
    if (auto* c = e->as<Call>(); c && wording_.name_calls) {
      throw UserError(std::string("'") + c->callee + "' cannot be used inside an expression in " + wording_.where,
                      e->span, "assign it to a variable first");
    }
    throw UserError(std::string("this expression (") + to_string(e->kind) + ") is not supported in " + wording_.where,
                    e->span, wording_.kind_help);
  }

 private:
  ExprWording wording_;
};

}  // namespace pypto::transforms
