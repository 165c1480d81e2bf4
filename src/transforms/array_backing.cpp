// Array backing (see include/pypto/transforms/array_backing.h).
#include "pypto/transforms/array_backing.h"

#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"

namespace pypto::transforms {

using namespace ir;

namespace {

bool is_array(const Var* v) { return v && v->type && v->type->is<ArrayType>(); }

}  // namespace

const YieldStmt* BodyYield(const StmtPtr& body) {
  if (!body) return nullptr;
  std::vector<StmtPtr> stmts = flatten_stmts(body);
  if (stmts.empty()) return nullptr;
  if (auto* y = stmts.back()->as<YieldStmt>()) return y;
  if (auto* rs = stmts.back()->as<RuntimeScopeStmt>()) return BodyYield(rs->body);
  return nullptr;
}

ArrayBacking::ArrayBacking(const Function& fn) { collect(fn.body); }

void ArrayBacking::collect(const StmtPtr& s) {
  if (!s) return;
  if (auto* q = s->as<SeqStmts>()) {
    for_each_prefetched(q->stmts, [&](const StmtPtr& c) { collect(c); });
  } else if (auto* a = s->as<AssignStmt>()) {
    if (!is_array(a->var.get())) return;
    if (const Var* src = as_var(a->value)) {
      parent_[a->var.get()] = src;
    } else if (auto* c = a->value->as<Call>(); c && c->is_op && c->callee == "array.update_element") {
      if (const Var* arr = as_var(c->args[0])) parent_[a->var.get()] = arr;
    }
  } else if (auto* f = s->as<ForStmt>()) {
    for (size_t k = 0; k < f->iter_args.size(); ++k) {
      const IterArg* ia = f->iter_args[k].get();
      if (!is_array(ia)) continue;
      if (const Var* init = as_var(ia->init)) parent_[ia] = init;
      if (k < f->return_vars.size()) parent_[f->return_vars[k].get()] = ia;
    }
    collect(f->body);
  } else if (auto* i = s->as<IfStmt>()) {
    for (size_t k = 0; k < i->return_vars.size(); ++k) {
      if (is_array(i->return_vars[k].get())) if_result_[i->return_vars[k].get()] = {i, k};
    }
    collect(i->then_body);
    collect(i->else_body);
  } else if (auto* r = s->as<RuntimeScopeStmt>()) {
    collect(r->body);
  } else if (auto* sc = s->as<ScopeStmt>()) {
    collect(sc->body);
  }
}

const Var* ArrayBacking::Backing(const Var* v) const {
  if (auto m = memo_.find(v); m != memo_.end()) return m->second;
  const Var* out = v;
  if (auto p = parent_.find(v); p != parent_.end()) {
    out = Backing(p->second);
  } else if (auto r = if_result_.find(v); r != if_result_.end()) {
    const auto& [s, k] = r->second;
    if (!IfResultIsPhi(*s, k)) out = Backing(as_var(BodyYield(s->then_body)->values[k]));
  }
  memo_[v] = out;
  return out;
}

bool ArrayBacking::IfResultIsPhi(const IfStmt& s, size_t i) const {
  const YieldStmt* t = BodyYield(s.then_body);
  const YieldStmt* e = BodyYield(s.else_body);
  if (!t || !e || i >= t->values.size() || i >= e->values.size()) return true;
  const Var* a = as_var(t->values[i]);
  const Var* b = as_var(e->values[i]);
  return !a || !b || Backing(a) != Backing(b);
}

}  // namespace pypto::transforms
