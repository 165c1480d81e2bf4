// Escaping allocations (see escaping_allocations.h).
#include "escaping_allocations.h"

#include <map>
#include <set>

#include "pypto/ir/error.h"
#include "pypto/ir/visitor.h"
#include "pypto/transforms/return_lineage.h"
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

// The submit a statement runs when it is `tup = pl.submit(self.k, ...)` leaving out trailing Out
// arguments (the runtime allocates them in the innermost scope), else null.
const Submit* runtime_allocating_submit(const Stmt& s, const Program& program) {
  auto* a = s.as<AssignStmt>();
  auto* sub = a ? a->value->as<Submit>() : nullptr;
  if (!sub) return nullptr;
  FunctionPtr f = program.get(sub->callee);
  return f && sub->args.size() < f->params.size() ? sub : nullptr;
}

// `stmt` (a runtime_allocating_submit) with each omitted Out argument passed explicitly as a
// `pl.create_tensor` of the parameter's type, appended to `creates`; null when a parameter's
// shape is not made of literals (the kernel's own symbols mean nothing in the caller).
//   t = pl.submit(self.k, x)   ==>   y_out = pl.create_tensor([64, 64], dtype=pl.FP32)   (creates)
//                                    t = pl.submit(self.k, x, y_out)
StmtPtr pass_runtime_outputs_explicitly(const AssignStmt& stmt, const Program& program,
                                        std::vector<StmtPtr>* creates) {
  auto* sub = stmt.value->as<Submit>();
  FunctionPtr f = program.get(sub->callee);
  std::vector<ExprPtr> args = sub->args;
  std::vector<ArgDirection> dirs = sub->arg_directions;
  std::vector<StmtPtr> made;
  for (size_t i = args.size(); i < f->params.size(); ++i) {
    auto* tt = f->params[i]->type->as<TensorType>();
    if (!tt || f->param_directions[i] != ParamDirection::Out) return nullptr;
    for (auto& d : tt->shape)
      if (!d->is<ConstInt>()) return nullptr;
    Attrs attrs{{"dtype", std::string(to_string(tt->dtype))}};
    if (tt->layout != Layout::ND) attrs["layout"] = std::string(to_string(tt->layout));
    ExprPtr create = Call::make_op("tensor.create", {MakeTuple::make(tt->shape, stmt.span)}, attrs, stmt.span);
    VarPtr v = Var::make(f->params[i]->name + "_out", create->type, stmt.span);
    made.push_back(AssignStmt::make(v, create, stmt.span));
    args.push_back(v);
    if (!dirs.empty()) dirs.push_back(ArgDirection::Out);
  }
  auto* tt = sub->type->as<TupleType>();
  std::vector<TypePtr> rets(tt->elements.begin(), tt->elements.end() - 1);   // minus the TaskId
  ExprPtr out = Submit::make(sub->callee, args, rets, sub->deps, sub->core_num, sub->sync_start,
                             sub->allow_early_resolve, sub->timing_slot, sub->predicate, dirs, sub->span);
  if (!compiler_dep_edges(*sub).empty()) out = with_compiler_dep_edges(out, compiler_dep_edges(*sub));
  if (!dump_vars(*sub).empty()) out = with_dump_vars(out, dump_vars(*sub));
  creates->insert(creates->end(), made.begin(), made.end());
  return AssignStmt::make(stmt.var, out, stmt.span);
}

}  // namespace

EscapeSplit SplitEscapingAllocations(const std::vector<StmtPtr>& stmts, const BufferRoots& roots,
                                     const Program& program, const char* what) {
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
  std::vector<bool> explicit_outs(stmts.size(), false);   // runtime-allocating submits whose output escapes
  if (y) {
    for (auto& v : y->values) {
      for (const Var* r : roots.of(v)) {
        auto it = top.find(r);
        if (it != top.end() && is_create(*stmts[it->second])) {
          lift[it->second] = true;
        } else if (it != top.end() && runtime_allocating_submit(*stmts[it->second], program)) {
          explicit_outs[it->second] = true;
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
  // A runtime-allocated output that escapes would be reclaimed at the end of the body's scope
  // while the carry / if result still names it: allocate it before the scope like a create.
  std::vector<StmtPtr> creates;
  std::vector<StmtPtr> rewritten(stmts.size());
  for (size_t k = 0; k < stmts.size(); ++k) {
    if (!explicit_outs[k]) continue;
    rewritten[k] = pass_runtime_outputs_explicitly(*stmts[k]->as<AssignStmt>(), program, &creates);
    if (!rewritten[k]) {   // no literal shape to allocate it with: the enclosing scope keeps the body's tensors
      out.scope_ok = false;
      out.rest = stmts;
      return out;
    }
  }
  for (size_t k = 0; k < stmts.size(); ++k) {
    if (lift[k]) out.lifted.push_back(stmts[k]);
    else out.rest.push_back(rewritten[k] ? rewritten[k] : stmts[k]);
  }
  out.lifted.insert(out.lifted.end(), creates.begin(), creates.end());
  return out;
}

}  // namespace pypto::transforms
