// Default IRVisitor: dispatch on NodeKind and recurse into every child (see visitor.h).
#include "pypto/ir/visitor.h"

#include "pypto/ir/error.h"

namespace pypto::ir {

namespace {

void visit_attrs(IRVisitor* v, const Attrs& attrs) {
  for (const auto& kv : attrs) {
    if (auto* e = std::get_if<ExprPtr>(&kv.second)) {
      if (*e) v->visit_expr(*e);
    } else if (auto* l = std::get_if<std::vector<ExprPtr>>(&kv.second)) {
      for (auto& x : *l) {
        if (x) v->visit_expr(x);
      }
    }
  }
}

}  // namespace

void IRVisitor::visit_expr(const ExprPtr& e) {
  if (statements_only_) return;
  PYPTO_CHECK(e, "visit_expr on a null expr");
  switch (e->kind) {
#define PYPTO_EXPR_NODE(Name) \
  case NodeKind::Name:        \
    return visit_(static_cast<const Name*>(e.get()));
#include "pypto/ir/node_kinds.def"
#define PYPTO_STMT_NODE(Name) case NodeKind::Name:
#include "pypto/ir/node_kinds.def"
      break;
  }
  PYPTO_CHECK(false, "IRVisitor: no visit for expr kind " << to_string(e->kind));
}

void IRVisitor::visit_stmt(const StmtPtr& s) {
  PYPTO_CHECK(s, "visit_stmt on a null stmt");
  switch (s->kind) {
#define PYPTO_STMT_NODE(Name) \
  case NodeKind::Name:        \
    return visit_(static_cast<const Name*>(s.get()));
#include "pypto/ir/node_kinds.def"
#define PYPTO_EXPR_NODE(Name) case NodeKind::Name:
#include "pypto/ir/node_kinds.def"
      break;
  }
  PYPTO_CHECK(false, "IRVisitor: no visit for stmt kind " << to_string(s->kind));
}

void IRVisitor::visit_type(const TypePtr& t) {
  if (!t) return;
  if (auto* tt = t->as<TensorType>()) {
    for (auto& d : tt->shape) visit_expr(d);
  } else if (auto* tl = t->as<TileType>()) {
    for (auto& d : tl->shape) visit_expr(d);
  } else if (auto* tu = t->as<TupleType>()) {
    for (auto& el : tu->elements) visit_type(el);
  }
}

void IRVisitor::visit_function(const Function& f) {
  for (auto& p : f.params) visit_expr(p);
  for (auto& t : f.return_types) visit_type(t);
  visit_attrs(this, f.attrs);
  if (f.body) visit_stmt(f.body);
}

void IRVisitor::visit_program(const Program& p) {
  for (auto& d : p.dynamic_dims) visit_expr(d);
  for (auto& f : p.functions) visit_function(*f);
}

void IRVisitor::visit_(const Var* op) { visit_type(op->type); }
// An IterArg's init is visited once, by its ForStmt (it is evaluated before the loop), not
// at every use of the IterArg.
void IRVisitor::visit_(const IterArg* op) { visit_type(op->type); }
void IRVisitor::visit_(const ConstInt*) {}
void IRVisitor::visit_(const ConstFloat*) {}
void IRVisitor::visit_(const ConstBool*) {}
void IRVisitor::visit_(const BinaryExpr* op) {
  visit_expr(op->a);
  visit_expr(op->b);
}
void IRVisitor::visit_(const UnaryExpr* op) { visit_expr(op->a); }
void IRVisitor::visit_(const Cast* op) { visit_expr(op->value); }
void IRVisitor::visit_(const Call* op) {
  for (auto& a : op->args) visit_expr(a);
  visit_attrs(this, op->attrs);
  for (auto& d : op->compiler_manual_dep_edges) visit_expr(d);
  for (auto& d : op->dump_vars) visit_expr(d);
  for (auto& d : op->manual_dep_edges) visit_expr(d);
}
void IRVisitor::visit_(const Submit* op) {
  for (auto& a : op->args) visit_expr(a);
  for (auto& d : op->deps) visit_expr(d);
  for (auto& d : op->compiler_manual_dep_edges) visit_expr(d);
  for (auto& d : op->dump_vars) visit_expr(d);
  if (op->core_num) visit_expr(op->core_num);
  if (op->predicate) visit_expr(op->predicate);
}
void IRVisitor::visit_(const MakeTuple* op) {
  for (auto& e : op->elements) visit_expr(e);
}
void IRVisitor::visit_(const TupleGetItem* op) { visit_expr(op->tuple); }

void IRVisitor::visit_(const AssignStmt* op) {
  visit_expr(op->value);
  visit_expr(op->var);
}
void IRVisitor::visit_(const EvalStmt* op) { visit_expr(op->expr); }
void IRVisitor::visit_(const SeqStmts* op) {
  for (size_t i = 0; i < op->stmts.size(); ++i) {
    prefetch_stmts_ahead(op->stmts, i);
    visit_stmt(op->stmts[i]);
  }
}
void IRVisitor::visit_(const ForStmt* op) {
  visit_expr(op->start);
  visit_expr(op->stop);
  visit_expr(op->step);
  visit_expr(op->loop_var);
  for (auto& ia : op->iter_args) {
    visit_expr(ia->init);
    visit_expr(ia);
  }
  visit_attrs(this, op->attrs);
  visit_stmt(op->body);
  for (auto& rv : op->return_vars) visit_expr(rv);
}
void IRVisitor::visit_(const IfStmt* op) {
  visit_expr(op->cond);
  visit_stmt(op->then_body);
  if (op->else_body) visit_stmt(op->else_body);
  for (auto& rv : op->return_vars) visit_expr(rv);
}
void IRVisitor::visit_(const YieldStmt* op) {
  for (auto& v : op->values) visit_expr(v);
}
void IRVisitor::visit_(const ReturnStmt* op) {
  for (auto& v : op->values) visit_expr(v);
}
void IRVisitor::visit_(const ScopeStmt* op) {
  visit_attrs(this, op->attrs);
  for (const ExprPtr& e : op->options.exprs()) visit_expr(e);
  if (op->block_var) visit_expr(op->block_var);
  visit_stmt(op->body);
  if (op->task_id_var) visit_expr(op->task_id_var);
}
void IRVisitor::visit_(const RuntimeScopeStmt* op) { visit_stmt(op->body); }

}  // namespace pypto::ir
