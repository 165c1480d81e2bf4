// Read-only traversal. Override the visit_* you care about and call the base to recurse.
// `visit_expr` / `visit_stmt` dispatch on NodeKind (an unknown kind throws InternalError).
//
//   struct CountCalls : IRVisitor {
//     int n = 0;
//     void visit_(const Call* op) override { ++n; IRVisitor::visit_(op); }
//   };
#pragma once
#include "pypto/ir/function.h"

namespace pypto::ir {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  virtual void visit_expr(const ExprPtr& e);
  virtual void visit_stmt(const StmtPtr& s);
  virtual void visit_type(const TypePtr& t);       // recurses into shape exprs
  virtual void visit_function(const Function& f);  // params, then body
  void visit_program(const Program& p);

#define PYPTO_EXPR_NODE(Name) virtual void visit_(const Name* op);
#define PYPTO_STMT_NODE(Name) virtual void visit_(const Name* op);
#include "pypto/ir/node_kinds.def"

 protected:
  // A visitor that only looks at statements (loops, branches, scopes) sets this: visit_expr
  // then returns without touching the expression, so a walk reads statement nodes only (no
  // expression holds a statement). A full walk of a 100k-call body reads every call, argument
  // and type; a statement walk reads 100k AssignStmts.
  //   struct LoopCounter : IRVisitor { LoopCounter() { statements_only_ = true; } ... };
  bool statements_only_ = false;
};

}  // namespace pypto::ir
