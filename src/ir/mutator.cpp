// Default IRMutator: rebuild a node only when one of its children changed, so unchanged
// subtrees keep their identity (see mutator.h for the def/use remapping rules).
#include "pypto/ir/mutator.h"

#include "pypto/ir/error.h"
#include "pypto/ir/node_pool.h"
#include "pypto/ir/structural_equal.h"

namespace pypto::ir {

ExprPtr IRMutator::mutate_expr(const ExprPtr& e) {
  if (statements_only_) return e;
  PYPTO_CHECK(e, "mutate_expr on a null expr");
  switch (e->kind) {
#define PYPTO_EXPR_NODE(Name) \
  case NodeKind::Name:        \
    return mutate_(static_cast<const Name*>(e.get()), e);
#include "pypto/ir/node_kinds.def"
#define PYPTO_STMT_NODE(Name) case NodeKind::Name:
#include "pypto/ir/node_kinds.def"
      break;
  }
  PYPTO_CHECK(false, "IRMutator: no mutate for expr kind " << to_string(e->kind));
  return nullptr;
}

StmtPtr IRMutator::mutate_stmt(const StmtPtr& s) {
  PYPTO_CHECK(s, "mutate_stmt on a null stmt");
  switch (s->kind) {
#define PYPTO_STMT_NODE(Name) \
  case NodeKind::Name:        \
    return mutate_(static_cast<const Name*>(s.get()), s);
#include "pypto/ir/node_kinds.def"
#define PYPTO_EXPR_NODE(Name) case NodeKind::Name:
#include "pypto/ir/node_kinds.def"
      break;
  }
  PYPTO_CHECK(false, "IRMutator: no mutate for stmt kind " << to_string(s->kind));
  return nullptr;
}

TypePtr IRMutator::mutate_type(const TypePtr& t) {
  if (!t) return t;
  bool changed = false;
  if (auto* tt = t->as<TensorType>()) {
    auto shape = mutate_exprs(tt->shape, &changed);
    return changed ? TensorType::make(std::move(shape), tt->dtype, tt->layout) : t;
  }
  if (auto* tl = t->as<TileType>()) {
    auto shape = mutate_exprs(tl->shape, &changed);
    auto valid = mutate_exprs(tl->valid_shape, &changed);
    return changed ? TileType::make(std::move(shape), tl->dtype, tl->memory, std::move(valid)) : t;
  }
  if (auto* tu = t->as<TupleType>()) {
    std::vector<TypePtr> els;
    els.reserve(tu->elements.size());
    for (auto& el : tu->elements) {
      els.push_back(mutate_type(el));
      changed |= els.back() != el;
    }
    return changed ? TupleType::make(std::move(els)) : t;
  }
  return t;
}

std::vector<ExprPtr> IRMutator::mutate_exprs(const std::vector<ExprPtr>& v, bool* changed) {
  std::vector<ExprPtr> out;
  if (mutate_exprs_if_changed(v, &out)) {
    *changed = true;
    return out;
  }
  return v;
}

// Most lists come back unchanged: `out` is only built (a copy of v up to the first change,
// then the mutated rest) once an element changes, so an unchanged list costs no allocation.
bool IRMutator::mutate_exprs_if_changed(const std::vector<ExprPtr>& v, std::vector<ExprPtr>* out) {
  for (size_t i = 0; i < v.size(); ++i) {
    ExprPtr n = mutate_expr(v[i]);
    if (n == v[i]) continue;
    out->reserve(v.size());
    out->assign(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(i));
    out->push_back(std::move(n));
    for (++i; i < v.size(); ++i) out->push_back(mutate_expr(v[i]));
    return true;
  }
  return false;
}

// True when attribute map `a` holds an expression (only those are mutated).
static bool has_expr_attrs(const Attrs& a) {
  for (const auto& kv : a) {
    if (std::holds_alternative<ExprPtr>(kv.second) || std::holds_alternative<std::vector<ExprPtr>>(kv.second)) return true;
  }
  return false;
}

Attrs IRMutator::mutate_attrs(const Attrs& a, bool* changed) {
  if (!has_expr_attrs(a)) return a;
  Attrs out;
  for (const auto& kv : a) {
    if (auto* e = std::get_if<ExprPtr>(&kv.second)) {
      ExprPtr n = *e ? mutate_expr(*e) : *e;
      if (n != *e) *changed = true;
      out.emplace(kv.first, n);
    } else if (auto* l = std::get_if<std::vector<ExprPtr>>(&kv.second)) {
      out.emplace(kv.first, mutate_exprs(*l, changed));
    } else {
      out.emplace(kv.first, kv.second);
    }
  }
  return out;
}

VarPtr IRMutator::mutate_def(const VarPtr& v) {
  if (!v) return v;
  if (!var_remap_.empty()) {
    auto it = var_remap_.find(v.get());
    if (it != var_remap_.end()) return it->second.second;
  }
  ExprPtr r = mutate_expr(v);
  VarPtr nv = as_var_ptr(r);
  PYPTO_CHECK(nv, "IRMutator: definition of '" << v->name << "' was mutated to a non-Var " << to_string(r->kind));
  // Only renamings are remembered: an unchanged definition's uses map to themselves anyway,
  // and a map entry per Var of a 100k-statement program costs more than the rest of most passes.
  if (nv != v) var_remap_[v.get()] = {v, nv};
  return nv;
}

FunctionPtr IRMutator::mutate_function(const FunctionPtr& f) {
  bool changed = false;
  std::vector<VarPtr> params;
  for (auto& p : f->params) {
    params.push_back(mutate_def(p));
    changed |= params.back() != p;
  }
  std::vector<TypePtr> rets;
  for (auto& t : f->return_types) {
    rets.push_back(mutate_type(t));
    changed |= rets.back() != t;
  }
  Attrs attrs = mutate_attrs(f->attrs, &changed);
  StmtPtr body = f->body ? mutate_stmt(f->body) : nullptr;
  changed |= body != f->body;
  if (!changed) return f;
  std::vector<VarPtr> batched = f->batched_creates;   // defined in the body: follow renamings
  for (VarPtr& v : batched) {
    auto it = var_remap_.find(v.get());
    if (it != var_remap_.end()) v = it->second.second;
  }
  std::vector<ArrayBackingEntry> backings = f->array_backings;   // body Vars / params: follow renamings
  for (ArrayBackingEntry& e : backings) {
    for (VarPtr* v : {&e.version, &e.backing}) {
      auto it = var_remap_.find(v->get());
      if (it != var_remap_.end()) *v = it->second.second;
    }
  }
  std::vector<VarPtr> non_negative = f->non_negative_vars;   // dim symbols / loop vars: follow renamings
  std::vector<VarPtr> operands = f->call_operands;          // body Vars: follow renamings
  std::vector<VarPtr> open_calls = f->open_calls;
  std::vector<VarPtr> cut_calls = f->cut_calls;
  std::vector<VarPtr> carried = f->carried_operands;
  for (std::vector<VarPtr>* list : {&non_negative, &operands, &open_calls, &cut_calls, &carried}) {
    for (VarPtr& v : *list) {
      auto it = var_remap_.find(v.get());
      if (it != var_remap_.end()) v = it->second.second;
    }
  }
  return Function::make(f->name, f->type, std::move(params), f->param_directions, std::move(rets), std::move(body), f->level,
                        f->role, std::move(attrs), f->span)
      ->with_core_type(f->core_type)
      ->with_group_sync(f->group_sync)
      ->with_param_slots(f->param_slots)
      ->with_task_ids(f->task_ids)
      ->with_returned_params(f->returned_params)   // stale if the body's TaskIds change: re-run ResolveTaskIds
      ->with_group_kernels(f->group_kernels)
      ->with_task_statements(f->task_statements)
      ->with_batched_creates(std::move(batched))
      ->with_array_backings(std::move(backings))
      ->with_non_negative_vars(std::move(non_negative))
      ->with_call_operands(std::move(operands))
      ->with_open_calls(std::move(open_calls))
      ->with_cut_calls(std::move(cut_calls))
      ->with_carried_operands(std::move(carried));
}

ProgramPtr IRMutator::mutate_program(const ProgramPtr& p) {
  bool changed = false;
  std::vector<VarPtr> dims;
  for (auto& d : p->dynamic_dims) {
    dims.push_back(mutate_def(d));
    changed |= dims.back() != d;
  }
  std::vector<FunctionPtr> fns;
  for (auto& f : p->functions) {
    fns.push_back(mutate_function(f));
    changed |= fns.back() != f;
  }
  if (!changed) return p;
  return Program::make(p->name, std::move(fns), std::move(dims), p->span);
}

// ---- expressions ----

ExprPtr IRMutator::mutate_(const Var* op, const ExprPtr& self) {
  if (var_remap_.empty()) return self;   // (most passes rename nothing: no hash per Var use)
  auto it = var_remap_.find(op);
  return it != var_remap_.end() ? it->second.second : self;
}

// The init is mutated by the ForStmt (once, before the loop), not at each use.
ExprPtr IRMutator::mutate_(const IterArg* op, const ExprPtr& self) {
  if (var_remap_.empty()) return self;
  auto it = var_remap_.find(op);
  return it != var_remap_.end() ? it->second.second : self;
}

ExprPtr IRMutator::mutate_(const ConstInt*, const ExprPtr& self) { return self; }
ExprPtr IRMutator::mutate_(const ConstFloat*, const ExprPtr& self) { return self; }
ExprPtr IRMutator::mutate_(const ConstBool*, const ExprPtr& self) { return self; }

ExprPtr IRMutator::mutate_(const BinaryExpr* op, const ExprPtr& self) {
  ExprPtr a = mutate_expr(op->a), b = mutate_expr(op->b);
  if (a == op->a && b == op->b) return self;
  return BinaryExpr::make(op->op, std::move(a), std::move(b), op->span);
}

ExprPtr IRMutator::mutate_(const UnaryExpr* op, const ExprPtr& self) {
  ExprPtr a = mutate_expr(op->a);
  if (a == op->a) return self;
  return UnaryExpr::make(op->op, std::move(a), op->span);
}

ExprPtr IRMutator::mutate_(const Cast* op, const ExprPtr& self) {
  ExprPtr v = mutate_expr(op->value);
  if (v == op->value) return self;
  return Cast::make(std::move(v), op->type->as<ScalarType>()->dtype, op->span);
}

// Dump marks follow their argument position: a mark on old_args[i] becomes a mark on new_args[i]
// (the mutated argument), so a substitution never detaches a mark from its argument.
static std::vector<ExprPtr> remap_dump_vars(const std::vector<ExprPtr>& marks, const std::vector<ExprPtr>& old_args,
                                            const std::vector<ExprPtr>& new_args) {
  std::vector<ExprPtr> out;
  for (auto& m : marks) {
    for (size_t i = 0; i < old_args.size() && i < new_args.size(); ++i) {
      if (old_args[i].get() == m.get()) {
        out.push_back(new_args[i]);
        break;
      }
    }
  }
  return out;
}

ExprPtr IRMutator::mutate_(const Call* op, const ExprPtr& self) {
  // Nothing is copied unless something below changed (this runs for every call in every pass).
  std::vector<ExprPtr> args, edges, user_edges;
  bool changed = mutate_exprs_if_changed(op->args, &args);
  bool attrs_changed = false;
  Attrs attrs_out;
  if (has_expr_attrs(op->attrs)) attrs_out = mutate_attrs(op->attrs, &attrs_changed);
  bool edges_changed = mutate_exprs_if_changed(op->compiler_manual_dep_edges, &edges);
  bool user_edges_changed = mutate_exprs_if_changed(op->manual_dep_edges, &user_edges);
  if (!changed && !attrs_changed && !edges_changed && !user_edges_changed) return self;
  if (!changed) args = op->args;
  if (!edges_changed) edges = op->compiler_manual_dep_edges;
  if (!user_edges_changed) user_edges = op->manual_dep_edges;
  Attrs attrs = attrs_changed ? std::move(attrs_out) : op->attrs;
  auto dumps = remap_dump_vars(op->dump_vars, op->args, args);
  if (!user_edges.empty()) attrs["manual_dep_edges"] = std::move(user_edges);   // make_op's parameter
  if (!op->task_ref.task.empty()) {   // make_op's parameters too
    attrs["task"] = op->task_ref.task;
    if (op->task_ref.slot >= 0) attrs["slot"] = op->task_ref.slot;
    if (op->task_ref.every_iteration) attrs["every_iteration"] = true;
  }
  if (!op->is_op) {
    ExprPtr c = Call::make_func(op->callee, std::move(args), op->type, op->arg_directions, op->span, std::move(attrs));
    if (!edges.empty()) c = with_compiler_dep_edges(c, std::move(edges));
    return dumps.empty() ? c : with_dump_vars(c, dumps);
  }
  auto c = Call::make_op(op->callee, std::move(args), std::move(attrs), op->span);
  ExprPtr stamped = with_pass_results_of(c, *op);   // KernelShareTileMoves / ResolvePeerBufferBases stamps survive a rewrite
  if (op->arg_directions.empty()) return stamped;
  auto d = make_node<Call>(*stamped->as<Call>());
  d->arg_directions = op->arg_directions;
  return d;
}

ExprPtr IRMutator::mutate_(const Submit* op, const ExprPtr& self) {
  bool changed = false;
  auto args = mutate_exprs(op->args, &changed);
  auto deps = mutate_exprs(op->deps, &changed);
  auto edges = mutate_exprs(op->compiler_manual_dep_edges, &changed);
  ExprPtr core_num = op->core_num ? mutate_expr(op->core_num) : nullptr;
  ExprPtr pred = op->predicate ? mutate_expr(op->predicate) : nullptr;
  changed |= core_num != op->core_num || pred != op->predicate;
  if (!changed) return self;
  auto dumps = remap_dump_vars(op->dump_vars, op->args, args);
  auto& els = op->type->as<TupleType>()->elements;
  std::vector<TypePtr> rets(els.begin(), els.end() - 1);
  ExprPtr sub = Submit::make(op->callee, std::move(args), std::move(rets), std::move(deps), std::move(core_num),
                             op->sync_start, op->allow_early_resolve, op->timing_slot, std::move(pred),
                             op->arg_directions, op->span);
  if (!edges.empty()) sub = with_compiler_dep_edges(sub, std::move(edges));
  return dumps.empty() ? sub : with_dump_vars(sub, dumps);
}

ExprPtr IRMutator::mutate_(const MakeTuple* op, const ExprPtr& self) {
  bool changed = false;
  auto els = mutate_exprs(op->elements, &changed);
  return changed ? MakeTuple::make(std::move(els), op->span) : self;
}

ExprPtr IRMutator::mutate_(const TupleGetItem* op, const ExprPtr& self) {
  ExprPtr t = mutate_expr(op->tuple);
  return t == op->tuple ? self : TupleGetItem::make(std::move(t), op->index, op->span);
}

// ---- statements ----

StmtPtr IRMutator::mutate_(const AssignStmt* op, const StmtPtr& self) {
  // A statements-only mutator leaves expressions as they are, so an assignment changes only if
  // its Var was renamed: without renamings, skip its value and Var nodes (on a long body,
  // touching them costs cache misses per statement in every such pass).
  if (statements_only_ && var_remap_.empty()) return self;
  ExprPtr value = mutate_expr(op->value);
  VarPtr var = mutate_def(op->var);
  if (var == op->var && value != op->value && var->type != value->type && !structural_equal(var->type, value->type)) {
    // The value's type changed (e.g. a shape was rewritten): re-type the target.
    var = Var::make(op->var->name, value->type, op->var->span);
    var_remap_[op->var.get()] = {op->var, var};
  }
  if (var == op->var && value == op->value) return self;
  return AssignStmt::make(std::move(var), std::move(value), op->span);
}

StmtPtr IRMutator::mutate_(const EvalStmt* op, const StmtPtr& self) {
  if (statements_only_) return self;   // its expression stays as it is
  ExprPtr e = mutate_expr(op->expr);
  return e == op->expr ? self : EvalStmt::make(std::move(e), op->span);
}

StmtPtr IRMutator::mutate_(const SeqStmts* op, const StmtPtr& self) {
  // `out` is only built from the first changed statement on (most passes change none).
  bool changed = false;
  std::vector<StmtPtr> out;
  for (size_t i = 0; i < op->stmts.size(); ++i) {
    prefetch_stmts_ahead(op->stmts, i);
    const StmtPtr& s = op->stmts[i];
    StmtPtr n = mutate_stmt(s);
    if (n == s) {
      if (changed) out.push_back(s);
      continue;
    }
    if (!changed) {
      out.reserve(op->stmts.size());
      out.assign(op->stmts.begin(), op->stmts.begin() + static_cast<std::ptrdiff_t>(i));
    }
    changed = true;
    if (!n) continue;
    if (auto* seq = n->as<SeqStmts>()) {
      out.insert(out.end(), seq->stmts.begin(), seq->stmts.end());
    } else {
      out.push_back(std::move(n));
    }
  }
  return changed ? SeqStmts::make(std::move(out), op->span) : self;
}

StmtPtr IRMutator::mutate_(const ForStmt* op, const StmtPtr& self) {
  ExprPtr start = mutate_expr(op->start), stop = mutate_expr(op->stop), step = mutate_expr(op->step);
  bool changed = start != op->start || stop != op->stop || step != op->step;
  VarPtr loop_var = mutate_def(op->loop_var);
  changed |= loop_var != op->loop_var;
  std::vector<IterArgPtr> iter_args;
  for (auto& ia : op->iter_args) {
    ExprPtr init = mutate_expr(ia->init);
    VarPtr n = mutate_def(ia);
    PYPTO_CHECK(n->kind == NodeKind::IterArg, "IRMutator: iter_arg '" << ia->name << "' was mutated to a non-IterArg");
    if (n == ia && init != ia->init) {
      // Same var, new init: rebuild it and send the loop body's uses to the new one.
      n = IterArg::make(ia->name, ia->type, init, ia->span);
      var_remap_[ia.get()] = {ia, n};
    }
    iter_args.push_back(std::static_pointer_cast<const IterArg>(n));
    changed |= n != ia;
  }
  Attrs attrs = mutate_attrs(op->attrs, &changed);
  StmtPtr body = mutate_stmt(op->body);
  changed |= body != op->body;
  std::vector<VarPtr> rvs;
  for (auto& rv : op->return_vars) {
    rvs.push_back(mutate_def(rv));
    changed |= rvs.back() != rv;
  }
  if (!changed) return self;
  auto loop = ForStmt::make(std::move(loop_var), std::move(start), std::move(stop), std::move(step), std::move(iter_args),
                            body ? body : make_seq({}, op->span), std::move(rvs), op->for_kind, std::move(attrs), op->span)
                  ->with_typed_fields_of(*op);   // the pass results and the chunk request survive a rewrite
  return loop;
}

StmtPtr IRMutator::mutate_(const IfStmt* op, const StmtPtr& self) {
  ExprPtr cond = mutate_expr(op->cond);
  StmtPtr then_body = mutate_stmt(op->then_body);
  StmtPtr else_body = op->else_body ? mutate_stmt(op->else_body) : nullptr;
  bool changed = cond != op->cond || then_body != op->then_body || else_body != op->else_body;
  std::vector<VarPtr> rvs;
  for (auto& rv : op->return_vars) {
    rvs.push_back(mutate_def(rv));
    changed |= rvs.back() != rv;
  }
  if (!changed) return self;
  return IfStmt::make(std::move(cond), then_body ? then_body : make_seq({}, op->span), std::move(else_body), std::move(rvs),
                      op->span);
}

StmtPtr IRMutator::mutate_(const YieldStmt* op, const StmtPtr& self) {
  bool changed = false;
  auto vals = mutate_exprs(op->values, &changed);
  return changed ? YieldStmt::make(std::move(vals), op->span) : self;
}

StmtPtr IRMutator::mutate_(const ReturnStmt* op, const StmtPtr& self) {
  bool changed = false;
  auto vals = mutate_exprs(op->values, &changed);
  return changed ? ReturnStmt::make(std::move(vals), op->span) : self;
}

StmtPtr IRMutator::mutate_(const ScopeStmt* op, const StmtPtr& self) {
  bool changed = false;
  Attrs attrs = mutate_attrs(op->attrs, &changed);
  ScopeOptions options = op->options;
  options.deps = mutate_exprs(op->options.deps, &changed);
  if (op->options.predicate) {
    options.predicate = mutate_expr(op->options.predicate);
    changed |= options.predicate != op->options.predicate;
  }
  options.no_dep_args = mutate_exprs(op->options.no_dep_args, &changed);
  VarPtr block_var = mutate_def(op->block_var);
  StmtPtr body = mutate_stmt(op->body);
  VarPtr tid = mutate_def(op->task_id_var);
  changed |= block_var != op->block_var || body != op->body || tid != op->task_id_var;
  if (!changed) return self;
  auto scope = ScopeStmt::make(op->scope_kind, std::move(attrs), body ? body : make_seq({}, op->span), std::move(tid),
                               std::move(block_var), op->span);
  return options.empty() ? scope : scope->with_options(std::move(options));   // the typed task options survive
}

StmtPtr IRMutator::mutate_(const RuntimeScopeStmt* op, const StmtPtr& self) {
  StmtPtr body = mutate_stmt(op->body);
  if (body == op->body) return self;
  // The carried TaskIds are defined in the body: follow their renamings.
  std::vector<ScopeTaskIdCarry> carries = op->carried_task_ids;
  for (ScopeTaskIdCarry& c : carries) {
    auto it = var_remap_.find(c.var.get());
    if (it != var_remap_.end()) c.var = it->second.second;
  }
  // So are the exit values (StampScopeExits).
  std::vector<VarPtr> exits = op->exit_values;
  for (VarPtr& v : exits) {
    auto it = var_remap_.find(v.get());
    if (it != var_remap_.end()) v = it->second.second;
  }
  auto scope = RuntimeScopeStmt::make(op->mode, body ? body : make_seq({}, op->span), op->span);
  if (!carries.empty()) scope = scope->with_carried_task_ids(std::move(carries));
  return exits.empty() ? scope : scope->with_exit_values(std::move(exits));
}

// Appends the statements of `s` to `out`, SeqStmts children inline (no list per statement).
static void append_flat(const StmtPtr& s, std::vector<StmtPtr>* out) {
  if (!s) return;
  if (auto* seq = s->as<SeqStmts>()) {
    for (size_t i = 0; i < seq->stmts.size(); ++i) {
      prefetch_stmts_ahead(seq->stmts, i);
      append_flat(seq->stmts[i], out);
    }
  } else {
    out->push_back(s);
  }
}

std::vector<StmtPtr> flatten_stmts(const StmtPtr& s) {
  std::vector<StmtPtr> out;
  if (auto* seq = s ? s->as<SeqStmts>() : nullptr) out.reserve(seq->stmts.size());
  append_flat(s, &out);
  return out;
}

// The last statement of flatten_stmts(s) (null when none), found without flattening.
static const Stmt* last_flat(const StmtPtr& s) {
  if (!s) return nullptr;
  auto* seq = s->as<SeqStmts>();
  if (!seq) return s.get();
  for (auto it = seq->stmts.rbegin(); it != seq->stmts.rend(); ++it) {
    if (const Stmt* last = last_flat(*it)) return last;
  }
  return nullptr;
}

const YieldStmt* trailing_yield(const StmtPtr& body) {
  const Stmt* last = last_flat(body);
  if (!last) return nullptr;
  if (auto* y = last->as<YieldStmt>()) return y;
  if (auto* rs = last->as<RuntimeScopeStmt>()) return trailing_yield(rs->body);
  return nullptr;
}

StmtPtr make_seq(std::vector<StmtPtr> stmts, Span span) {
  if (stmts.size() == 1) return stmts[0];
  return SeqStmts::make(std::move(stmts), std::move(span));
}

}  // namespace pypto::ir
