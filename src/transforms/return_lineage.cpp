// Return lineage (see include/pypto/transforms/return_lineage.h): which parameter's storage
// a function's return value is. The tracer follows definitions by Var pointer; names are
// never compared.
#include "pypto/transforms/return_lineage.h"

#include <map>
#include <unordered_map>

#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"

namespace pypto::transforms {

using namespace ir;

const ReturnStmt* FindReturn(const Function& fn) {
  const ReturnStmt* found = nullptr;
  std::vector<StmtPtr> work = flatten_stmts(fn.body);
  for (auto it = work.rbegin(); it != work.rend() && !found; ++it) {
    if (auto* r = (*it)->as<ReturnStmt>()) found = r;
    else if (auto* rs = (*it)->as<RuntimeScopeStmt>()) {
      auto inner = flatten_stmts(rs->body);
      if (!inner.empty()) found = inner.back()->as<ReturnStmt>();
    }
    if (!found) break;   // only the trailing statement may be the return
  }
  return found;
}

std::vector<int> ExplicitReturnedParamIndices(const Function& fn) {
  std::vector<int> out;
  const ReturnStmt* ret = FindReturn(fn);
  if (!ret) return out;
  for (auto& v : ret->values) {
    int idx = -1;
    for (size_t i = 0; i < fn.params.size(); ++i) {
      if (v.get() == fn.params[i].get()) idx = static_cast<int>(i);
    }
    out.push_back(idx);
  }
  return out;
}

namespace {

void collect_defs(const StmtPtr& s, VarDefs& out) {
  if (!s) return;
  if (auto* seq = s->as<SeqStmts>()) {
    for_each_prefetched(seq->stmts, [&](const StmtPtr& c) { collect_defs(c, out); });
  } else if (auto* a = s->as<AssignStmt>()) {
    out.set(a->var.get(), VarDef{VarDef::Assign, a});
  } else if (auto* f = s->as<ForStmt>()) {
    out.loops.push_back(f);
    for (size_t i = 0; i < f->iter_args.size(); ++i) out.set(f->iter_args[i].get(), VarDef{VarDef::ForIter, nullptr, f, nullptr, i});
    for (size_t i = 0; i < f->return_vars.size(); ++i) {
      out.set(f->return_vars[i].get(), VarDef{VarDef::ForReturn, nullptr, f, nullptr, i});
    }
    collect_defs(f->body, out);
  } else if (auto* i = s->as<IfStmt>()) {
    for (size_t k = 0; k < i->return_vars.size(); ++k) out.set(i->return_vars[k].get(), VarDef{VarDef::IfReturn, nullptr, nullptr, i, k});
    collect_defs(i->then_body, out);
    collect_defs(i->else_body, out);
  } else if (auto* sc = s->as<ScopeStmt>()) {
    collect_defs(sc->body, out);
  } else if (auto* rs = s->as<RuntimeScopeStmt>()) {
    collect_defs(rs->body, out);
  }
}

class Tracer {
 public:
  explicit Tracer(const Program& p) : program_(p) {}

  std::vector<int> function_returns(const Function& fn) {
    auto memo = fn_memo_.find(&fn);
    if (memo != fn_memo_.end()) return memo->second;
    fn_memo_[&fn] = {};   // recursion guard: a recursive callee traces to nothing
    FnState st;
    st.fn = &fn;
    st.defs = CollectVarDefs(fn.body);
    for (size_t i = 0; i < fn.params.size(); ++i) st.params[fn.params[i].get()] = static_cast<int>(i);
    std::vector<int> out;
    if (const ReturnStmt* ret = FindReturn(fn)) {
      // A value may be written inline (`return pl.store(t, [0, 0], c)`): traced as a definition.
      for (auto& v : ret->values) out.push_back(trace_value(st, v, 0));
    }
    fn_memo_[&fn] = out;
    return out;
  }

 private:
  struct FnState {
    const Function* fn = nullptr;
    VarDefs defs;
    std::unordered_map<const Var*, int> params;
    std::unordered_map<const Var*, int> memo;   // kInProgress while being traced
  };
  static constexpr int kInProgress = -2;

  // Param index a call's result position `pos` writes back, mapped to the caller's arg.
  int trace_call_result(FnState& st, const std::string& callee, const std::vector<ExprPtr>& args, size_t pos) {
    FunctionPtr f = program_.get(callee);
    if (!f) return -1;
    auto rets = function_returns(*f);
    if (pos >= rets.size() || rets[pos] < 0 || static_cast<size_t>(rets[pos]) >= args.size()) return -1;
    return trace(st, args[rets[pos]]);
  }

  int trace_value(FnState& st, const ExprPtr& value, size_t tuple_pos) {
    if (as_var(value)) return tuple_pos == 0 ? trace(st, value) : -1;
    if (auto* c = value->as<Call>()) {
      if (!c->is_op) return trace_call_result(st, c->callee, c->args, tuple_pos);
      if (tuple_pos != 0) return -1;
      // tensor.assemble and tensor.write return their target tensor (argument 0).
      if ((c->callee == "tensor.assemble" || c->callee == "tensor.write") && !c->args.empty()) return trace(st, c->args[0]);
      if (c->callee == "tile.store" || c->callee == "tile.mscatter") {
        // The destination is the (only) tensor-typed operand.
        for (auto& a : c->args) {
          if (a->type->is<TensorType>()) return trace(st, a);
        }
      }
      return -1;
    }
    if (auto* s = value->as<Submit>()) return trace_call_result(st, s->callee, s->args, tuple_pos);
    if (auto* g = value->as<TupleGetItem>()) {
      if (tuple_pos != 0) return -1;
      if (auto* tv = as_var(g->tuple)) {
        const VarDef* d = st.defs.find(tv);
        if (d && d->kind == VarDef::Assign) {
          return trace_value(st, d->assign->value, static_cast<size_t>(g->index));
        }
        return -1;
      }
      return trace_value(st, g->tuple, static_cast<size_t>(g->index));
    }
    return -1;
  }

  int trace(FnState& st, const ExprPtr& e) {
    const Var* v = as_var(e);
    if (!v) return -1;
    auto p = st.params.find(v);
    if (p != st.params.end()) return p->second;
    auto m = st.memo.find(v);
    if (m != st.memo.end()) return m->second;
    const VarDef* d = st.defs.find(v);
    if (!d) return -1;
    const VarDef& def = *d;
    int result = -1;
    switch (def.kind) {
      case VarDef::Assign:
        st.memo[v] = -1;
        result = trace_value(st, def.assign->value, 0);
        break;
      case VarDef::ForIter:
      case VarDef::ForReturn: {
        const IterArg* ia = def.loop->iter_args[def.index].get();
        auto im = st.memo.find(ia);
        if (im != st.memo.end()) {
          result = im->second;
          break;
        }
        // Coinductive: assume the carry is the init's param, check the yield agrees.
        int init = trace(st, ia->init);
        st.memo[ia] = init;
        if (init >= 0) {
          const YieldStmt* y = trailing_yield(def.loop->body);
          int next = (y && def.index < y->values.size()) ? trace(st, y->values[def.index]) : -1;
          if (next != init) init = -1;
        }
        st.memo[ia] = init;
        result = init;
        break;
      }
      case VarDef::IfReturn: {
        st.memo[v] = -1;
        const YieldStmt* a = trailing_yield(def.branch->then_body);
        const YieldStmt* b = def.branch->else_body ? trailing_yield(def.branch->else_body) : nullptr;
        if (a && b && def.index < a->values.size() && def.index < b->values.size()) {
          int x = trace(st, a->values[def.index]);
          int y = trace(st, b->values[def.index]);
          result = (x == y) ? x : -1;
        }
        break;
      }
    }
    st.memo[v] = result;
    return result;
  }

  const Program& program_;
  std::map<const Function*, std::vector<int>> fn_memo_;
};

}  // namespace

size_t CountVarDefs(const StmtPtr& s) {
  if (!s) return 0;
  if (auto* seq = s->as<SeqStmts>()) {
    size_t n = 0;
    for (size_t i = 0; i < seq->stmts.size(); ++i) {
      prefetch_stmts_ahead(seq->stmts, i);
      n += CountVarDefs(seq->stmts[i]);
    }
    return n;
  }
  if (s->is<AssignStmt>()) return 1;
  if (auto* f = s->as<ForStmt>()) return f->iter_args.size() + f->return_vars.size() + CountVarDefs(f->body);
  if (auto* i = s->as<IfStmt>()) return i->return_vars.size() + CountVarDefs(i->then_body) + CountVarDefs(i->else_body);
  if (auto* sc = s->as<ScopeStmt>()) return CountVarDefs(sc->body);
  if (auto* rs = s->as<RuntimeScopeStmt>()) return CountVarDefs(rs->body);
  return 0;
}

VarDefs CollectVarDefs(const StmtPtr& body) {
  VarDefs out;
  out.reserve(CountVarDefs(body));
  collect_defs(body, out);
  return out;
}

std::vector<int> ReturnedParamIndices(const Program& program, const Function& fn) {
  Tracer t(program);
  return t.function_returns(fn);
}

}  // namespace pypto::transforms
