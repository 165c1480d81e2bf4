// VerifyArrayVersions (see verify_array_versions.h). A forward walk that keeps, per C array
// (ArrayBacking), the set of SSA versions that still name its current contents.
#include "verify_array_versions.h"

#include <map>
#include <set>

#include "pypto/ir/error.h"
#include "pypto/ir/visitor.h"
#include "pypto/transforms/array_backing.h"

namespace pypto::transforms {

using namespace ir;

namespace {

// Arrays of every dtype: numbers, bools and TaskIds are all updated in place.
bool value_array(const Var* v) { return v && v->type && v->type->is<ArrayType>(); }

bool task_id_array(const Var* v) {
  auto* a = v && v->type ? v->type->as<ArrayType>() : nullptr;
  return a && a->dtype == DataType::TASK_ID;
}

// Backings a statement writes: update_element targets, and carries / if-results a yield fills
// from another array (a slot copy).
struct WriteScan : IRVisitor {
  const ArrayBacking& ab;
  std::set<const Var*> written;
  explicit WriteScan(const ArrayBacking& a) : ab(a) {}
  void visit_(const Call* op) override {
    if (op->is_op && op->callee == "array.update_element") {
      if (const Var* a = as_var(op->args[0]); a && value_array(a)) written.insert(ab.Backing(a));
    }
    IRVisitor::visit_(op);
  }
  void visit_(const ForStmt* op) override {
    const YieldStmt* y = BodyYield(op->body);
    for (size_t k = 0; y && k < op->iter_args.size() && k < y->values.size(); ++k) {
      const Var* v = as_var(y->values[k]);
      if (value_array(op->iter_args[k].get()) && v && ab.Backing(v) != ab.Backing(op->iter_args[k].get()))
        written.insert(ab.Backing(op->iter_args[k].get()));
    }
    IRVisitor::visit_(op);
  }
};

// The array versions an expression reads: operands, deps= (a Submit's deps, a task_dummy's
// Call::manual_dep_edges), predicates. Compiler-derived edges are not the user's reads (they are
// best-effort ordering that ResolveTaskIds may drop), so they are not checked.
struct ReadScan : IRVisitor {
  std::vector<const Var*> vars;
  void visit_(const Var* op) override {
    if (value_array(op)) vars.push_back(op);
  }
  void visit_(const IterArg* op) override {
    if (value_array(op)) vars.push_back(op);
  }
  void visit_(const Call* op) override {
    for (auto& a : op->args) visit_expr(a);
    for (auto& d : op->manual_dep_edges) if (d) visit_expr(d);   // a task_dummy's deps=
    for (const auto& kv : op->attrs) {
      if (auto* e = std::get_if<ExprPtr>(&kv.second); e && *e) visit_expr(*e);
      if (auto* l = std::get_if<std::vector<ExprPtr>>(&kv.second)) {
        for (auto& x : *l) if (x) visit_expr(x);
      }
    }
  }
  void visit_(const Submit* op) override {
    for (auto& a : op->args) visit_expr(a);
    for (auto& d : op->deps) visit_expr(d);
    if (op->core_num) visit_expr(op->core_num);
    if (op->predicate) visit_expr(op->predicate);
  }
};

class Checker {
 public:
  explicit Checker(const Function& fn) : ab_(fn) {}

  void block(const StmtPtr& s) {
    if (!s) return;
    if (auto* q = s->as<SeqStmts>()) {
      for_each_prefetched(q->stmts, [&](const StmtPtr& c) { block(c); });
    } else if (auto* a = s->as<AssignStmt>()) {
      reads(a->value, a->span);
      const Var* v = a->var.get();
      if (!value_array(v)) return;
      const Var* b = ab_.Backing(v);
      auto* c = a->value->as<Call>();
      if (c && c->is_op && c->callee == "array.update_element") {
        supersede(b, a->span);
        live_[b] = {v};
      } else if (as_var(a->value)) {
        live_[b].insert(v);
      } else {
        live_[b] = {v};
      }
    } else if (auto* f = s->as<ForStmt>()) {
      loop(*f);
    } else if (auto* i = s->as<IfStmt>()) {
      branch(*i);
    } else if (auto* r = s->as<RuntimeScopeStmt>()) {
      block(r->body);
    } else if (auto* sc = s->as<ScopeStmt>()) {
      block(sc->body);
    } else if (auto* e = s->as<EvalStmt>()) {
      reads(e->expr, e->span);
    } else if (auto* y = s->as<YieldStmt>()) {
      for (auto& v : y->values) reads(v, y->span);
    } else if (auto* ret = s->as<ReturnStmt>()) {
      for (auto& v : ret->values) reads(v, ret->span);
    }
  }

 private:
  void loop(const ForStmt& f) {
    reads(f.start, f.span);
    reads(f.stop, f.span);
    reads(f.step, f.span);
    for (auto& ia : f.iter_args) reads(ia->init, f.span);
    WriteScan w(ab_);
    w.visit_stmt(f.body);
    w.visit_(&f);
    // From the second iteration on, a written array holds the previous iteration's values.
    for (const Var* b : w.written) supersede(b, f.span);
    for (auto& ia : f.iter_args) {
      if (value_array(ia.get())) live_[ab_.Backing(ia.get())].insert(ia.get());
    }
    block(f.body);
    for (size_t k = 0; k < f.return_vars.size(); ++k) {
      if (!value_array(f.return_vars[k].get())) continue;
      const Var* b = ab_.Backing(f.return_vars[k].get());
      if (w.written.count(b)) live_[b] = {};
      live_[b].insert(f.return_vars[k].get());
    }
  }

  void branch(const IfStmt& s) {
    reads(s.cond, s.span);
    auto before = live_;
    block(s.then_body);
    auto after_then = live_;
    live_ = before;
    block(s.else_body);
    for (auto& [b, vars] : live_) {   // a version stays current only if both branches kept it
      auto t = after_then.find(b);
      std::set<const Var*> keep;
      for (const Var* v : vars)
        if (t != after_then.end() && t->second.count(v)) keep.insert(v);
      vars = keep;
    }
    for (auto& [b, vars] : after_then)
      if (!live_.count(b)) live_[b] = {};
    for (auto& rv : s.return_vars) {
      if (value_array(rv.get())) live_[ab_.Backing(rv.get())].insert(rv.get());
    }
  }

  void supersede(const Var* backing, const Span& where) {
    for (const Var* v : live_[backing]) superseded_.emplace(v, where);
  }

  void reads(const ExprPtr& e, const Span& where) {
    if (!e) return;
    ReadScan r;
    r.visit_expr(e);
    for (const Var* v : r.vars) {
      auto it = live_.find(ab_.Backing(v));
      if (it == live_.end() || it->second.count(v)) continue;
      auto s = superseded_.find(v);
      const int line = s != superseded_.end() ? s->second.line : 0;
      throw UserError(std::string(task_id_array(v) ? "TaskId array '" : "array '") + v->name +
                          "' is read after an in-place update (line " + std::to_string(line) +
                          ") replaced its contents: arrays are updated in place, so this older version no longer "
                          "exists",
                      where,
                      "read the array's latest name (the one the update or the loop assigned), or copy the slot "
                      "to a scalar before updating: x = " + v->name + "[k]");
    }
  }

  ArrayBacking ab_;
  std::map<const Var*, std::set<const Var*>> live_;   // backing -> versions naming its contents
  std::map<const Var*, Span> superseded_;            // version -> the update that replaced it
};

}  // namespace

void VerifyArrayVersions(const Function& fn) { Checker(fn).block(fn.body); }

}  // namespace pypto::transforms
