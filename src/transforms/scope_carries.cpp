// TaskIds carried out of a runtime scope (include/pypto/transforms/scope_carries.h).
#include "pypto/transforms/scope_carries.h"

#include <unordered_map>

#include "pypto/ir/mutator.h"
#include "pypto/ir/visitor.h"

namespace pypto::transforms {

using namespace ir;

const YieldStmt* TrailingYield(const std::vector<StmtPtr>& stmts) {
  return stmts.empty() ? nullptr : stmts.back()->as<YieldStmt>();
}

std::vector<ScopeTaskIdCarry> TaskIdsCarriedOutOfScope(const RuntimeScopeStmt& scope, const YieldStmt& next_yield) {
  // Top-level definitions of the scope body that a yield could carry out.
  std::unordered_map<const Var*, ScopeTaskIdCarry> defs;
  std::unordered_map<const Var*, const Submit*> submits;   // tuple Var -> its pl.submit
  for (const StmtPtr& s : flatten_stmts(scope.body)) {
    if (auto* a = s->as<AssignStmt>()) {
      if (auto* sub = a->value->as<Submit>()) submits[a->var.get()] = sub;
      auto* g = a->value->as<TupleGetItem>();
      const Var* tv = g ? as_var(g->tuple) : nullptr;
      auto* tt = g ? g->tuple->type->as<TupleType>() : nullptr;
      if (tv && submits.count(tv) && tt && g->index + 1 == static_cast<int>(tt->elements.size())) {
        defs[a->var.get()] = ScopeTaskIdCarry{a->var, 0};
      }
    } else if (auto* f = s->as<ForStmt>()) {
      for (size_t i = 0; i < f->return_vars.size() && i < f->carries.size(); ++i) {
        const LoopCarry& c = f->carries[i];
        if (!c.rebind || !is_task_id(f->iter_args[i]->type) || f->iter_args[i]->type->is<ArrayType>()) continue;
        defs[f->return_vars[i].get()] = ScopeTaskIdCarry{f->iter_args[i], c.slots};
      }
    }
  }
  std::vector<ScopeTaskIdCarry> out;
  for (const ExprPtr& v : next_yield.values) {
    auto it = defs.find(as_var(v));
    if (it != defs.end()) out.push_back(it->second);
  }
  return out;
}

namespace {

// Counts each Var read (definitions count too, consistently inside and outside a scope).
struct ReadCounter : IRVisitor {
  std::unordered_map<const Var*, int>& reads;
  explicit ReadCounter(std::unordered_map<const Var*, int>& r) : reads(r) {}
  void visit_(const Var* op) override { ++reads[op]; }
  void visit_(const IterArg* op) override { ++reads[op]; }
  void visit_(const ReturnStmt*) override {}
};

bool exit_slot_type(const TypePtr& t) {
  if (t->is<TensorType>()) return true;
  auto* s = t->as<ScalarType>();
  return s && s->dtype != DataType::TASK_ID;
}

}  // namespace

std::vector<ScopeCarriedValue> ValuesCarriedOutOfScopes::Of(const RuntimeScopeStmt& scope) const {
  std::vector<ScopeCarriedValue> candidates;
  for (const StmtPtr& s : flatten_stmts(scope.body)) {
    if (auto* f = s->as<ForStmt>()) {
      for (size_t i = 0; i < f->return_vars.size() && i < f->carries.size(); ++i) {
        if (f->carries[i].rebind && exit_slot_type(f->iter_args[i]->type)) {
          candidates.push_back({f, i, f->return_vars[i].get(), f->iter_args[i].get()});
        }
      }
    } else if (auto* br = s->as<IfStmt>()) {
      for (size_t i = 0; i < br->return_vars.size(); ++i) {
        const Var* rv = br->return_vars[i].get();
        if (exit_slot_type(rv->type)) candidates.push_back({br, i, rv, rv});
      }
    }
  }
  if (candidates.empty()) return candidates;
  if (!counted_) {
    ReadCounter(reads_).visit_stmt(fn_.body);
    counted_ = true;
  }
  std::unordered_map<const Var*, int> inside;
  ReadCounter(inside).visit_stmt(scope.body);
  std::vector<ScopeCarriedValue> out;
  for (const ScopeCarriedValue& c : candidates) {
    auto all = reads_.find(c.result);
    if (all != reads_.end() && all->second > inside[c.result]) out.push_back(c);
  }
  return out;
}

}  // namespace pypto::transforms
