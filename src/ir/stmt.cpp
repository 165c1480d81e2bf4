// Statement factories: each `make` checks the statement's invariants (see stmt.h for SSA).
#include "pypto/ir/stmt.h"

#include "describe.h"
#include "pypto/ir/const_integer.h"
#include "pypto/ir/error.h"
#include "pypto/ir/node_pool.h"
#include "pypto/ir/structural_equal.h"

namespace pypto::ir {

using detail::describe;

namespace {

const Span& best_span(const ExprPtr& e, const Span& fallback) {
  return (e && e->span.known()) ? e->span : fallback;
}

bool is_int_scalar(const ExprPtr& e) {
  auto* s = e->type->as<ScalarType>();
  return s && is_integer(s->dtype);
}

}  // namespace

std::shared_ptr<const AssignStmt> AssignStmt::make(VarPtr var, ExprPtr value, Span span) {
  PYPTO_CHECK(var, "AssignStmt needs a target var");
  PYPTO_CHECK(value, "AssignStmt to '" << var->name << "' needs a value");
  PYPTO_CHECK(structural_equal(var->type, value->type),
              "AssignStmt to '" << var->name << "': var type " << describe(var->type) << " differs from value type "
                                << describe(value->type));
  return make_node<AssignStmt>(std::move(var), std::move(value), std::move(span));
}

std::shared_ptr<const EvalStmt> EvalStmt::make(ExprPtr expr, Span span) {
  PYPTO_CHECK(expr, "EvalStmt needs an expression");
  return make_node<EvalStmt>(std::move(expr), std::move(span));
}

std::shared_ptr<const SeqStmts> SeqStmts::make(std::vector<StmtPtr> stmts, Span span) {
  for (auto& s : stmts) PYPTO_CHECK(s, "SeqStmts has a null statement");
  return make_node<SeqStmts>(std::move(stmts), std::move(span));
}

std::shared_ptr<const ForStmt> ForStmt::make(VarPtr loop_var, ExprPtr start, ExprPtr stop, ExprPtr step,
                                             std::vector<IterArgPtr> iter_args, StmtPtr body, std::vector<VarPtr> return_vars,
                                             ForKind kind, Attrs attrs, Span span) {
  PYPTO_CHECK(loop_var, "ForStmt needs a loop var");
  PYPTO_CHECK(start && stop && step, "ForStmt needs start, stop and step");
  PYPTO_CHECK(body, "ForStmt needs a body");
  PYPTO_CHECK(is_int_scalar(loop_var), "ForStmt loop var '" << loop_var->name << "' must be an integer scalar, got "
                                                            << describe(loop_var->type));
  const char* names[] = {"start", "stop", "step"};
  const ExprPtr* bounds[] = {&start, &stop, &step};
  for (int i = 0; i < 3; ++i) {
    PYPTO_USER_CHECK(is_int_scalar(*bounds[i]), best_span(*bounds[i], span),
                     "loop " << names[i] << " must be an integer scalar, got " << describe((*bounds[i])->type),
                     "pl.range / pl.parallel take integers or integer scalar expressions");
  }
  // A constant zero step never ends (`i += 0`; the DSL refuses it when it parses, IR built by
  // hand reached the code generators and the run hung).
  if (auto k = ConstIntegerValue(step)) {
    PYPTO_USER_CHECK(*k != 0, best_span(step, span), "loop step must not be zero", "a pl.range step is a non-zero integer");
  }
  PYPTO_CHECK(return_vars.size() == iter_args.size(),
              "ForStmt has " << iter_args.size() << " iter_args but " << return_vars.size() << " return vars");
  for (const char* k : {"chunk", "chunk_policy", "chunk_stride", "loop_origin", "counted"}) {
    PYPTO_CHECK(!attrs.count(k), "ForStmt attr '" << k << "' is a typed ForStmt field");
  }
  for (size_t i = 0; i < iter_args.size(); ++i) {
    PYPTO_CHECK(iter_args[i] && return_vars[i], "ForStmt has a null iter_arg or return var");
  }
  return make_node<ForStmt>(std::move(loop_var), std::move(start), std::move(stop), std::move(step),
                                   std::move(iter_args), std::move(body), std::move(return_vars), kind, std::move(attrs),
                                   std::move(span));
}

std::shared_ptr<const ForStmt> ForStmt::with_results(std::vector<LoopCarry> c, int64_t trips) const {
  PYPTO_CHECK(c.empty() || c.size() == iter_args.size(),
              "ForStmt has " << iter_args.size() << " iter_args but " << c.size() << " carry classifications");
  auto f = make_node<ForStmt>(*this);
  f->carries = std::move(c);
  f->trip_count = trips;
  return f;
}

std::shared_ptr<const ForStmt> ForStmt::with_inplace_carries(std::vector<int64_t> carries) const {
  for (int64_t i : carries) {
    PYPTO_CHECK(i >= 0 && i < static_cast<int64_t>(iter_args.size()),
                "inplace_carries index " << i << " out of range for " << iter_args.size() << " iter_args");
  }
  auto f = make_node<ForStmt>(*this);
  f->inplace_carries = std::move(carries);
  return f;
}

std::shared_ptr<const ForStmt> ForStmt::with_lent_inits(std::vector<int64_t> inits) const {
  for (int64_t i : inits) {
    PYPTO_CHECK(i >= 0 && i < static_cast<int64_t>(iter_args.size()),
                "lent_inits index " << i << " out of range for " << iter_args.size() << " iter_args");
  }
  auto f = make_node<ForStmt>(*this);
  f->lent_inits = std::move(inits);
  return f;
}

std::shared_ptr<const ForStmt> ForStmt::with_chunk_split(LoopOrigin origin, int64_t stride) const {
  if (stride != 0) {
    auto* m = step->as<BinaryExpr>();
    auto* c = m && m->op == BinaryOp::Mul ? m->b->as<ConstInt>() : nullptr;
    PYPTO_CHECK(stride > 1 && c && c->value == stride, "chunk_stride " << stride << " on a loop whose step is not s * " << stride);
  }
  auto f = make_node<ForStmt>(*this);
  f->loop_origin = origin;
  f->chunk_stride = stride;
  return f;
}

std::shared_ptr<const ForStmt> ForStmt::with_chunk(ChunkSpec c) const {
  PYPTO_CHECK(c.chunk >= 0, "chunk " << c.chunk << " is negative");
  PYPTO_CHECK(c.chunk > 0 || c.policy == ChunkPolicy::Guarded, "a chunk_policy without a chunk");
  auto f = make_node<ForStmt>(*this);
  f->chunk = c;
  return f;
}

std::shared_ptr<const ForStmt> ForStmt::with_counted(bool c) const {
  auto f = make_node<ForStmt>(*this);
  f->counted = c;
  return f;
}

std::shared_ptr<const ForStmt> ForStmt::with_typed_fields_of(const ForStmt& from) const {
  PYPTO_CHECK(from.carries.empty() || from.carries.size() == iter_args.size(),
              "with_typed_fields_of: " << from.carries.size() << " carries for a loop of " << iter_args.size() << " iter_args");
  for (int64_t k : from.inplace_carries) {
    PYPTO_CHECK(k >= 0 && static_cast<size_t>(k) < iter_args.size(), "with_typed_fields_of: inplace carry " << k << " out of range");
  }
  for (int64_t k : from.lent_inits) {
    PYPTO_CHECK(k >= 0 && static_cast<size_t>(k) < iter_args.size(), "with_typed_fields_of: lent init " << k << " out of range");
  }
  auto f = make_node<ForStmt>(*this);
  f->carries = from.carries;
  f->trip_count = from.trip_count;
  f->inplace_carries = from.inplace_carries;
  f->lent_inits = from.lent_inits;
  f->loop_origin = from.loop_origin;
  f->chunk_stride = from.chunk_stride;
  f->chunk = from.chunk;
  f->counted = from.counted;
  return f;
}

std::shared_ptr<const IfStmt> IfStmt::make(ExprPtr cond, StmtPtr then_body, StmtPtr else_body,
                                           std::vector<VarPtr> return_vars, Span span) {
  PYPTO_CHECK(cond, "IfStmt needs a condition");
  PYPTO_CHECK(then_body, "IfStmt needs a then body");
  PYPTO_USER_CHECK(cond->type->is<ScalarType>() && cond->type->as<ScalarType>()->dtype != DataType::TASK_ID,
                   best_span(cond, span), "if condition must be a scalar, got " << describe(cond->type),
                   "compare a scalar, e.g. `if i == 0:`");
  for (auto& v : return_vars) PYPTO_CHECK(v, "IfStmt has a null return var");
  PYPTO_CHECK(return_vars.empty() || else_body, "IfStmt with return vars needs an else body");
  return make_node<IfStmt>(std::move(cond), std::move(then_body), std::move(else_body), std::move(return_vars),
                                  std::move(span));
}

std::shared_ptr<const YieldStmt> YieldStmt::make(std::vector<ExprPtr> values, Span span) {
  for (auto& v : values) PYPTO_CHECK(v, "YieldStmt has a null value");
  return make_node<YieldStmt>(std::move(values), std::move(span));
}

std::shared_ptr<const ReturnStmt> ReturnStmt::make(std::vector<ExprPtr> values, Span span) {
  for (auto& v : values) PYPTO_CHECK(v, "ReturnStmt has a null value");
  return make_node<ReturnStmt>(std::move(values), std::move(span));
}

std::shared_ptr<const ScopeStmt> ScopeStmt::make(ScopeKind kind, Attrs attrs, StmtPtr body, VarPtr task_id_var,
                                                 VarPtr block_var, Span span) {
  PYPTO_CHECK(body, "ScopeStmt needs a body");
  if (task_id_var) {
    auto* s = task_id_var->type->as<ScalarType>();
    PYPTO_CHECK(s && s->dtype == DataType::TASK_ID,
                "ScopeStmt task id var '" << task_id_var->name << "' must be Scalar[TASK_ID], got " << describe(task_id_var->type));
  }
  if (block_var) {
    PYPTO_CHECK(is_int_scalar(block_var),
                "ScopeStmt block var '" << block_var->name << "' must be an integer scalar, got " << describe(block_var->type));
  }
  for (const char* k : {"deps", "predicate", "no_dep_args", "sync_start", "allow_early_resolve"}) {
    PYPTO_CHECK(!attrs.count(k), "ScopeStmt attr '" << k << "' is the typed ScopeStmt::options (use with_options)");
  }
  return make_node<ScopeStmt>(kind, std::move(attrs), std::move(body), std::move(task_id_var), std::move(block_var),
                                     std::move(span));
}

std::vector<ExprPtr> ScopeOptions::exprs() const {
  std::vector<ExprPtr> out = deps;
  if (predicate) out.push_back(predicate);
  out.insert(out.end(), no_dep_args.begin(), no_dep_args.end());
  return out;
}

std::shared_ptr<const ScopeStmt> ScopeStmt::with_options(ScopeOptions options) const {
  PYPTO_CHECK(scope_kind != ScopeKind::Cluster || options.empty(), "a pl.cluster() scope takes no task options");
  for (auto& d : options.deps) {
    PYPTO_CHECK(d, "ScopeStmt has a null dep (None deps are dropped by the parser)");
    PYPTO_USER_CHECK(is_task_id(d->type), best_span(d, span),
                     "deps= entries must be TaskIds (from pl.submit, pl.at ... as tid, pl.system.task_dummy, a "
                     "TaskId loop carry or array slot, or None), got "
                         << describe(d->type),
                     "deps= never takes tensors: dependencies on data are derived automatically");
  }
  for (auto& v : options.no_dep_args) {
    PYPTO_CHECK(v && v->type->is<TensorType>(), "ScopeStmt no_dep_args entry is not a tensor");
  }
  auto s = make_node<ScopeStmt>(*this);
  s->options = std::move(options);
  return s;
}

std::shared_ptr<const RuntimeScopeStmt> RuntimeScopeStmt::make(RuntimeScopeMode mode, StmtPtr body, Span span) {
  PYPTO_CHECK(body, "RuntimeScopeStmt needs a body");
  return make_node<RuntimeScopeStmt>(mode, std::move(body), std::move(span));
}

std::shared_ptr<const RuntimeScopeStmt> RuntimeScopeStmt::with_carried_task_ids(std::vector<ScopeTaskIdCarry> carries) const {
  for (const ScopeTaskIdCarry& c : carries) {
    PYPTO_CHECK(c.var && is_task_id(c.var->type), "carried_task_ids entry is not a TaskId Var");
    PYPTO_CHECK(c.slots >= 0, "carried_task_ids entry '" << c.var->name << "' has negative slots");
  }
  auto r = make_node<RuntimeScopeStmt>(*this);
  r->carried_task_ids = std::move(carries);
  return r;
}

std::shared_ptr<const RuntimeScopeStmt> RuntimeScopeStmt::with_exit_values(std::vector<VarPtr> values) const {
  for (const VarPtr& v : values) {
    PYPTO_CHECK(v, "exit_values entry is null");
    auto* s = v->type->as<ScalarType>();
    auto* a = v->type->as<ArrayType>();
    PYPTO_CHECK(v->type->is<TensorType>() || (s && s->dtype != DataType::TASK_ID) || (a && a->dtype != DataType::TASK_ID),
                "exit_values entry '" << v->name << "' is not a tensor, a number or an array of numbers");
  }
  auto r = make_node<RuntimeScopeStmt>(*this);
  r->exit_values = std::move(values);
  return r;
}

}  // namespace pypto::ir
