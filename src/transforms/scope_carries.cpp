// TaskIds carried out of a runtime scope (include/pypto/transforms/scope_carries.h).
#include "pypto/transforms/scope_carries.h"

#include <unordered_map>

#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"

namespace pypto::transforms {

using namespace ir;

const YieldStmt* TrailingYield(const std::vector<StmtPtr>& stmts) {
  return stmts.empty() ? nullptr : stmts.back()->as<YieldStmt>();
}

StmtPtr YieldEndingScope(const RuntimeScopeStmt& scope) {
  std::vector<StmtPtr> inner = flatten_stmts(scope.body);
  if (inner.empty()) return nullptr;
  if (auto* nested = inner.back()->as<RuntimeScopeStmt>()) return YieldEndingScope(*nested);
  return inner.back()->is<YieldStmt>() ? inner.back() : nullptr;
}

const RuntimeScopeStmt* ScopeHoldingYield(const std::vector<StmtPtr>& stmts) {
  auto* r = stmts.empty() ? nullptr : stmts.back()->as<RuntimeScopeStmt>();
  if (!r || stmts.size() == 1) return r;
  return YieldEndingScope(*r) ? r : nullptr;
}

std::vector<ScopeTaskIdCarry> TaskIdsCarriedOutOfScope(const RuntimeScopeStmt& scope, const YieldStmt& next_yield) {
  // Top-level definitions of the scope body that a yield could carry out.
  std::unordered_map<const Var*, ScopeTaskIdCarry> defs;
  std::unordered_map<const Var*, const Submit*> submits;   // tuple Var -> its pl.submit
  // The statements at the top level of the body and of the scopes nested there (their C++
  // blocks are inside this one, so a TaskId they define leaves them through this block's yield).
  std::vector<StmtPtr> stmts = flatten_stmts(scope.body);
  for (size_t k = 0; k < stmts.size(); ++k) {
    if (auto* inner = stmts[k]->as<RuntimeScopeStmt>()) {
      std::vector<StmtPtr> more = flatten_stmts(inner->body);
      stmts.insert(stmts.end(), more.begin(), more.end());
    }
  }
  for (const StmtPtr& s : stmts) {
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
    } else if (auto* br = s->as<IfStmt>()) {
      // A TaskId both branches yield (`if c: out, t = pl.submit(...) else: ...`): the result's
      // own C++ variable, declared before the block instead of before the if. (A phi array's
      // slot count is ResolveTaskIds' to fill in.)
      for (const VarPtr& rv : br->return_vars) {
        if (is_task_id(rv->type) && !rv->type->is<ArrayType>()) defs[rv.get()] = ScopeTaskIdCarry{rv, 0};
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

ScopeCarriedValue LocateScopeExit(const RuntimeScopeStmt& scope, const Var& value) {
  for (const StmtPtr& s : flatten_stmts(scope.body)) {
    if (auto* a = s->as<AssignStmt>()) {
      if (a->var.get() == &value) return {a, 0, &value, &value};
    } else if (auto* f = s->as<ForStmt>()) {
      for (size_t i = 0; i < f->return_vars.size() && i < f->iter_args.size(); ++i) {
        if (f->return_vars[i].get() == &value) return {f, i, &value, f->iter_args[i].get()};
      }
    } else if (auto* br = s->as<IfStmt>()) {
      for (size_t i = 0; i < br->return_vars.size(); ++i) {
        if (br->return_vars[i].get() == &value) return {br, i, &value, &value};
      }
    } else if (auto* inner = s->as<RuntimeScopeStmt>()) {
      for (size_t i = 0; i < inner->exit_values.size(); ++i) {
        if (inner->exit_values[i].get() == &value) return {inner, i, &value, &value};
      }
    }
  }
  PYPTO_CHECK(false, "exit value '" << value.name << "' is defined by no assignment / loop / if / nested scope at "
                                       "the top level of its scope");
  return {};
}

}  // namespace pypto::transforms
