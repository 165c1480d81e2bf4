// Escaping allocations (see escaping_allocations.h).
#include "escaping_allocations.h"

#include <map>
#include <set>

#include "pypto/ir/error.h"
#include "pypto/ir/visitor.h"
#include "pypto/transforms/scope_carries.h"

namespace pypto::transforms {

using namespace ir;

namespace {

bool is_create(const Stmt& s) {
  auto* a = s.as<AssignStmt>();
  auto* c = a ? a->value->as<Call>() : nullptr;
  return c && c->is_op && c->callee == "tensor.create";
}

// Vars an expression reads (not through types), and whether it is pure: constants, Vars,
// arithmetic, casts, tuples and the metadata ops tensor.create / tensor.dim (no task, no read).
struct ExprScan : IRVisitor {
  std::vector<const Var*> vars;
  bool pure = true;
  void visit_(const Var* op) override { vars.push_back(op); }
  void visit_(const IterArg* op) override { vars.push_back(op); }
  void visit_(const Call* op) override {
    if (!op->is_op || (op->callee != "tensor.create" && op->callee != "tensor.dim")) pure = false;
    for (auto& a : op->args) visit_expr(a);
  }
  void visit_(const Submit*) override { pure = false; }
};

// Every Var a statement defines (AssignStmt vars, loop / if results), nested ones included.
struct DefScan : IRVisitor {
  std::set<const Var*> defs;
  void visit_(const AssignStmt* op) override {
    defs.insert(op->var.get());
    IRVisitor::visit_(op);
  }
  void visit_(const ForStmt* op) override {
    for (auto& v : op->return_vars) defs.insert(v.get());
    IRVisitor::visit_(op);
  }
  void visit_(const IfStmt* op) override {
    for (auto& v : op->return_vars) defs.insert(v.get());
    IRVisitor::visit_(op);
  }
  void visit_expr(const ExprPtr&) override {}
};

}  // namespace

EscapeSplit SplitEscapingAllocations(const std::vector<StmtPtr>& stmts, const BufferRoots& roots, const char* what) {
  EscapeSplit out;
  const YieldStmt* y = TrailingYield(stmts);
  std::map<const Var*, size_t> top;   // Var -> index of the top-level AssignStmt defining it
  for (size_t k = 0; k < stmts.size(); ++k) {
    if (auto* a = stmts[k]->as<AssignStmt>()) top[a->var.get()] = k;
  }
  DefScan nested;
  for (auto& s : stmts) {
    if (!s->is<AssignStmt>()) nested.visit_stmt(s);
  }

  std::vector<bool> lift(stmts.size(), false);
  if (y) {
    for (auto& v : y->values) {
      for (const Var* r : roots.of(v)) {
        auto it = top.find(r);
        if (it != top.end() && is_create(*stmts[it->second])) {
          lift[it->second] = true;
        } else if (it == top.end() && nested.defs.count(r)) {
          out.scope_ok = false;   // created in a nested body: no scope here, the enclosing one keeps it
        }
      }
    }
  }
  if (!out.scope_ok) {
    out.rest = stmts;
    return out;
  }
  // The statements a lifted allocation's shape needs: pure ones only (transitively).
  std::vector<size_t> work;
  for (size_t k = 0; k < stmts.size(); ++k)
    if (lift[k]) work.push_back(k);
  std::map<size_t, const AssignStmt*> why;   // needed statement -> the create that needs it
  for (size_t k : work) why[k] = stmts[k]->as<AssignStmt>();
  while (!work.empty()) {
    size_t k = work.back();
    work.pop_back();
    ExprScan scan;
    scan.visit_expr(stmts[k]->as<AssignStmt>()->value);
    for (const Var* v : scan.vars) {
      auto it = top.find(v);
      if (it != top.end() && lift[it->second]) continue;
      if (it == top.end() && !nested.defs.count(v)) continue;   // bound before the body
      const AssignStmt* dep = it == top.end() ? nullptr : stmts[it->second]->as<AssignStmt>();
      ExprScan d;
      if (dep) d.visit_expr(dep->value);
      const AssignStmt* create = why[k];
      PYPTO_USER_CHECK(dep && d.pure, create->span,
                       "'" << create->var->name << "' is allocated in a " << what
                           << " body and used after it, so it must be allocated before the body's runtime scope, "
                              "but its shape depends on '"
                           << v->name << "' (line " << v->span.line << "), which that body computes at run time (from a task "
                           << "result or a nested loop / if)",
                       std::string("compute the shape before the ") + what +
                           " (from parameters, pl.tensor.dim or loop indices), or create the tensor before the " +
                           what + " and pass it as the Out argument");
      lift[it->second] = true;
      why[it->second] = create;
      work.push_back(it->second);
    }
  }
  for (size_t k = 0; k < stmts.size(); ++k) (lift[k] ? out.lifted : out.rest).push_back(stmts[k]);
  return out;
}

}  // namespace pypto::transforms
