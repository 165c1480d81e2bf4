// Shared pieces of the scope outlining passes (scope_outlining.h).
#include "scope_outlining.h"

#include <functional>

#include "pypto/ir/structural_equal.h"
#include "pypto/ir/visitor.h"
#include "pypto/transforms/return_lineage.h"
#include "buffer_roots.h"

namespace pypto::transforms::outlining {

using namespace ir;

namespace {

struct UseDefCollector : IRVisitor {
  UseDef out;
  void use(const ExprPtr& e) {
    VarPtr v = as_var_ptr(e);
    if (!v) return;
    if (out.uses[v.get()]++ == 0) out.use_order.push_back(v);
  }
  void def(const VarPtr& v) {
    if (v && out.defs.insert(v.get()).second) out.def_order.push_back(v);
  }
  void visit_(const Var* op) override {}
  void visit_(const IterArg* op) override {}
  void visit_expr(const ExprPtr& e) override {
    if (!e) return;
    if (as_var(e)) {
      use(e);
      return;
    }
    IRVisitor::visit_expr(e);
  }
  void visit_(const AssignStmt* op) override {
    visit_expr(op->value);
    def(op->var);
  }
  void visit_(const ForStmt* op) override {
    visit_expr(op->start);
    visit_expr(op->stop);
    visit_expr(op->step);
    def(op->loop_var);
    for (auto& ia : op->iter_args) {
      visit_expr(ia->init);
      def(ia);
    }
    visit_stmt(op->body);
    for (auto& rv : op->return_vars) def(rv);
  }
  void visit_(const IfStmt* op) override {
    visit_expr(op->cond);
    visit_stmt(op->then_body);
    if (op->else_body) visit_stmt(op->else_body);
    for (auto& rv : op->return_vars) def(rv);
  }
  void visit_(const ScopeStmt* op) override {
    for (auto& [k, v] : op->attrs) {
      if (auto* e = std::get_if<ExprPtr>(&v)) visit_expr(*e);
      if (auto* l = std::get_if<std::vector<ExprPtr>>(&v)) {
        for (auto& x : *l) visit_expr(x);
      }
    }
    for (const ExprPtr& e : op->options.exprs()) visit_expr(e);
    def(op->block_var);
    visit_stmt(op->body);
    def(op->task_id_var);
  }
  void visit_(const Call* op) override {
    for (auto& a : op->args) visit_expr(a);
    for (auto& [k, v] : op->attrs) {
      if (auto* e = std::get_if<ExprPtr>(&v)) visit_expr(*e);
      if (auto* l = std::get_if<std::vector<ExprPtr>>(&v)) {
        for (auto& x : *l) visit_expr(x);
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

}  // namespace

UseDef CollectUseDef(const StmtPtr& s) {
  UseDefCollector c;
  if (s) c.visit_stmt(s);
  return c.out;
}

ScopeCaptures AnalyzeScopeBody(const Program& program, const StmtPtr& body) {
  UseDef ud = CollectUseDef(body);
  ScopeCaptures c;
  std::unordered_map<const Var*, size_t> index;
  for (auto& v : ud.use_order) {
    if (ud.defs.count(v.get())) continue;
    index[v.get()] = c.captures.size();
    c.captures.push_back(v);
  }
  c.written.assign(c.captures.size(), false);
  c.read.assign(c.captures.size(), false);
  c.chain = index;
  auto root = [&](const ExprPtr& e) -> long {
    const Var* v = as_var(e);
    if (!v) return -1;
    auto it = c.chain.find(v);
    return it == c.chain.end() ? -1 : static_cast<long>(it->second);
  };
  // Statements in order: a write target's result joins the target's chain; every other
  // mention of a chain Var is a read.
  std::function<void(const StmtPtr&)> walk = [&](const StmtPtr& s) {
    if (!s) return;
    auto mark_reads = [&](const ExprPtr& e, const std::unordered_set<const Expr*>& skip) {
      UseDef u = CollectUseDef(EvalStmt::make(e));
      for (auto& v : u.use_order) {
        long r = root(v);
        if (r >= 0 && !skip.count(v.get())) c.read[r] = true;
      }
    };
    if (auto* seq = s->as<SeqStmts>()) {
      for_each_prefetched(seq->stmts, [&](const StmtPtr& x) { walk(x); });
      return;
    }
    // A write into a capture (tile.store, tensor.assemble, tensor.write, tile.mscatter): marks
    // it written and returns its index; the target is written, not read, so only the other
    // arguments are reads. -1 for anything else.
    auto write_of = [&](const Expr* e) -> long {
      auto* call = e->as<Call>();
      int w = call && call->is_op ? WrittenTensorArg(call->callee) : -1;
      long target = w >= 0 && static_cast<size_t>(w) < call->args.size() ? root(call->args[w]) : -1;
      if (target < 0) return -1;
      c.written[target] = true;
      for (size_t i = 0; i < call->args.size(); ++i) {
        if (static_cast<int>(i) != w) mark_reads(call->args[i], {});
      }
      return target;
    };
    // The capture every branch's (or the body's) trailing yield hands on at position i, or -1.
    auto yielded_root = [&](const StmtPtr& body, size_t i) -> long {
      auto stmts = flatten_stmts(body);
      auto* y = stmts.empty() ? nullptr : stmts.back()->as<YieldStmt>();
      return y && i < y->values.size() ? root(y->values[i]) : -1;
    };
    if (auto* a = s->as<AssignStmt>()) {
      std::unordered_set<const Expr*> skip;
      const Expr* value = a->value.get();
      if (long target = write_of(value); target >= 0) {
        c.chain[a->var.get()] = static_cast<size_t>(target);
        return;
      }
      if (auto* call = value->as<Call>()) {
        if (!call->is_op) {
          FunctionPtr f = program.get(call->callee);
          if (f) {
            for (size_t i = 0; i < call->args.size() && i < f->params.size(); ++i) {
              long r = root(call->args[i]);
              if (r < 0) continue;
              if (f->param_directions[i] != ParamDirection::In) c.written[r] = true;
              if (f->param_directions[i] != ParamDirection::Out) c.read[r] = true;
            }
            auto rets = ReturnedParamIndices(program, *f);
            if (rets.size() == 1 && rets[0] >= 0 && static_cast<size_t>(rets[0]) < call->args.size()) {
              long r = root(call->args[rets[0]]);
              if (r >= 0) c.chain[a->var.get()] = static_cast<size_t>(r);
            }
            return;
          }
        }
      }
      if (as_var(a->value)) {   // a copy stays on its source's chain
        long r = root(a->value);
        if (r >= 0) c.chain[a->var.get()] = static_cast<size_t>(r);
        return;
      }
      mark_reads(a->value, skip);
      return;
    }
    if (auto* f = s->as<ForStmt>()) {
      for (auto& ia : f->iter_args) {
        long r = root(ia->init);
        if (r >= 0) c.chain[ia.get()] = static_cast<size_t>(r);
      }
      walk(f->body);
      // The loop's result is the capture's storage when the body hands that storage on (the
      // capture, or a write into it); a carry the body ends with a computed value is a value
      // of its own, even when the body wrote the capture first.
      for (size_t i = 0; i < f->return_vars.size() && i < f->iter_args.size(); ++i) {
        long r = root(f->iter_args[i]);
        if (r >= 0 && yielded_root(f->body, i) == r) {
          c.chain[f->return_vars[i].get()] = static_cast<size_t>(r);
        }
      }
      return;
    }
    if (auto* i = s->as<IfStmt>()) {
      mark_reads(i->cond, {});
      walk(i->then_body);
      walk(i->else_body);
      // A result both branches hand on from one capture (written or not) is its storage.
      for (size_t k = 0; k < i->return_vars.size(); ++k) {
        long r = yielded_root(i->then_body, k);
        if (r >= 0 && i->else_body && yielded_root(i->else_body, k) == r) {
          c.chain[i->return_vars[k].get()] = static_cast<size_t>(r);
        }
      }
      return;
    }
    if (auto* sc = s->as<ScopeStmt>()) {
      walk(sc->body);
      return;
    }
    if (auto* rs = s->as<RuntimeScopeStmt>()) {
      walk(rs->body);
      return;
    }
    if (s->is<YieldStmt>()) return;   // yields pass storage along; not a read of the data
    if (auto* ev = s->as<EvalStmt>()) {
      if (write_of(ev->expr.get()) < 0) mark_reads(ev->expr, {});
      return;
    }
  };
  walk(body);
  return c;
}

void VarSubstituter::fresh_defs(const StmtPtr& body) {
  for (auto& v : CollectUseDef(body).def_order) {
    if (v->is<IterArg>() || var_remap_.count(v.get())) continue;
    add(v, Var::make(v->name, v->type, v->span));
  }
}

StmtPtr VarSubstituter::mutate_(const AssignStmt* op, const StmtPtr& self) {
  ExprPtr value = mutate_expr(op->value);
  VarPtr var = mutate_def(op->var);
  if (var->type != value->type && !structural_equal(var->type, value->type)) {
    // The value is typed in the function's terms where the caller's were substituted (a dynamic
    // dim the body reads, `pl.create_tensor([M, 16])`, is the function's parameter M_1): the
    // fresh Var takes its value's type. (A kernel call keeps its callee's declared type.)
    var = Var::make(op->var->name, value->type, op->var->span);
    var_remap_[op->var.get()] = {op->var, var};
  }
  if (var == op->var && value == op->value) return self;
  return AssignStmt::make(std::move(var), std::move(value), op->span);
}

OutlinedSignature MakeOutlinedSignature(const ScopeCaptures& c, const Var* skip,
                                        const std::function<void(const VarPtr&)>& check) {
  OutlinedSignature sig;
  std::vector<size_t> written;   // parameter indices, in return order
  for (size_t i = 0; i < c.captures.size(); ++i) {
    const VarPtr& x = c.captures[i];
    if (skip && x.get() == skip) continue;
    check(x);
    VarPtr p = Var::make(x->name, x->type, x->span);
    sig.sub.add(x, p);
    sig.params.push_back(p);
    sig.args.push_back(x);
    ParamDirection d = ParamDirection::In;
    if (x->type->is<TensorType>() && c.written[i]) {
      d = c.read[i] ? ParamDirection::InOut : ParamDirection::Out;
      sig.result_of[i] = written.size();
      written.push_back(sig.params.size() - 1);
    }
    sig.param_directions.push_back(d);
  }
  for (size_t w : written) {
    sig.return_types.push_back(sig.params[w]->type);
    sig.return_values.push_back(sig.params[w]);
  }
  return sig;
}

bool UsedAfterScope(const Var* v, const UseDef& fn_uses, const UseDef& body_ud) {
  auto a = fn_uses.uses.find(v);
  auto b = body_ud.uses.find(v);
  int total = a == fn_uses.uses.end() ? 0 : a->second;
  int inside = b == body_ud.uses.end() ? 0 : b->second;
  return total > inside;
}

std::vector<std::pair<VarPtr, size_t>> ScopeResults(const UseDef& fn_uses, const UseDef& body_ud,
                                                    const ScopeCaptures& c, const OutlinedSignature& sig,
                                                    const std::function<size_t(const VarPtr&)>& other) {
  std::vector<std::pair<VarPtr, size_t>> results;
  for (auto& v : body_ud.def_order) {
    if (!UsedAfterScope(v.get(), fn_uses, body_ud)) continue;
    auto ch = c.chain.find(v.get());
    if (ch == c.chain.end()) {
      results.emplace_back(v, other(v));
    } else if (sig.result_of.count(ch->second)) {
      results.emplace_back(v, sig.result_of.at(ch->second));
    }   // else the capture itself, unwritten: UnchangedCaptureResults
  }
  return results;
}

std::vector<StmtPtr> UnchangedCaptureResults(const UseDef& fn_uses, const UseDef& body_ud, const ScopeCaptures& c,
                                             const OutlinedSignature& sig) {
  std::vector<StmtPtr> out;
  for (auto& v : body_ud.def_order) {
    auto ch = c.chain.find(v.get());
    if (ch == c.chain.end() || sig.result_of.count(ch->second) || !UsedAfterScope(v.get(), fn_uses, body_ud)) continue;
    out.push_back(AssignStmt::make(v, c.captures[ch->second], v->span));
  }
  return out;
}

void BindTupleResults(const VarPtr& tuple, const std::vector<std::pair<VarPtr, size_t>>& results,
                      std::vector<StmtPtr>* out) {
  for (auto& [v, k] : results) {
    out->push_back(AssignStmt::make(v, TupleGetItem::make(tuple, static_cast<int>(k), v->span), v->span));
  }
}

StmtPtr CallOutlined(const std::string& callee, const OutlinedSignature& sig, const std::vector<ArgDirection>& dirs,
                     const std::vector<std::pair<VarPtr, size_t>>& results, const Span& span,
                     const std::vector<ExprPtr>& dumps) {
  std::vector<StmtPtr> out;
  const auto& rets = sig.return_types;
  TypePtr rt = rets.empty() ? TupleType::unit() : rets.size() == 1 ? rets[0] : TypePtr(TupleType::make(rets));
  ExprPtr call = Call::make_func(callee, sig.args, rt, dirs, span);
  if (!dumps.empty()) call = with_dump_vars(call, dumps);
  if (rets.empty()) return EvalStmt::make(call, span);
  VarPtr tmp = Var::make(callee + "_out", rt, span);
  out.push_back(AssignStmt::make(tmp, call, span));
  for (auto& [v, k] : results) {
    ExprPtr val = rets.size() == 1 ? ExprPtr(tmp) : ExprPtr(TupleGetItem::make(tmp, static_cast<int>(k), v->span));
    out.push_back(AssignStmt::make(v, val, v->span));
  }
  return make_seq(out, span);
}

ProgramPtr OutlineInOrchestrationFunctions(const ProgramPtr& program, const FunctionOutliner& outline) {
  ProgramPtr out = program;
  std::unordered_set<std::string> taken;
  for (const FunctionPtr& fn : program->functions) {
    if (fn->type != FunctionType::Orchestration && fn->type != FunctionType::Opaque) continue;
    std::vector<FunctionPtr> new_fns;
    FunctionPtr nf = outline(fn, &new_fns, &taken);
    if (nf == fn) continue;
    for (auto& k : new_fns) out = out->with_function(k);
    out = out->with_function(nf);
  }
  return out;
}

std::string ScopeOutliner::OutlinedName(const Attrs& attrs, const std::string& unhinted_suffix, bool strip_spmd) {
  const std::string* hint_attr = attr_get<std::string>(attrs, "name_hint");
  std::string name;
  if (!hint_attr || hint_attr->empty()) {
    name = FreshFunctionName(program_, *taken_, fn_.name + unhinted_suffix);
  } else {
    std::string hint = *hint_attr;
    const std::string kSpmd = "_spmd";
    if (strip_spmd && hint.size() > kSpmd.size() && hint.compare(hint.size() - kSpmd.size(), kSpmd.size(), kSpmd) == 0) {
      hint.resize(hint.size() - kSpmd.size());
    }
    auto it = hints_.find(hint);
    if (it == hints_.end()) {
      std::string base = taken_->count(hint) ? fn_.name + "_" + hint : hint;
      it = hints_.emplace(hint, std::make_pair(base, 0)).first;
    }
    int uses = it->second.second++;
    std::string want = uses == 0 ? it->second.first : it->second.first + "_" + std::to_string(uses - 1);
    name = FreshFunctionName(program_, *taken_, want);
  }
  taken_->insert(name);
  return name;
}

std::string FreshFunctionName(const Program& program, const std::unordered_set<std::string>& taken,
                              const std::string& base) {
  std::string name = base;
  for (int k = 1; program.get(name) || taken.count(name); ++k) name = base + "_" + std::to_string(k);
  return name;
}

}  // namespace pypto::transforms::outlining
