// Expression factories: each `make` checks the node's invariants and infers its type.
// Compiler misuse (null operands, bad dtype for a constant) is an InternalError; what a DSL
// user can get wrong (a tensor in scalar arithmetic, an unknown op, a bad dep) is a UserError
// carrying the node's span.
#include "pypto/ir/expr.h"

#include <algorithm>
#include <set>

#include "describe.h"
#include "pypto/ir/error.h"
#include "pypto/ir/node_pool.h"
#include "pypto/ir/op_registry.h"

namespace pypto::ir {

using detail::describe;

const char* to_string(NodeKind k) {
  switch (k) {
#define PYPTO_EXPR_NODE(Name) case NodeKind::Name: return #Name;
#define PYPTO_STMT_NODE(Name) case NodeKind::Name: return #Name;
#include "pypto/ir/node_kinds.def"
  }
  return "<invalid NodeKind>";
}

namespace {

const Span& best_span(const ExprPtr& e, const Span& fallback) {
  return (e && e->span.known()) ? e->span : fallback;
}

bool is_comparison(BinaryOp op) {
  return op == BinaryOp::Eq || op == BinaryOp::Ne || op == BinaryOp::Lt || op == BinaryOp::Le ||
         op == BinaryOp::Gt || op == BinaryOp::Ge;
}

}  // namespace

DataType PromoteScalarDTypes(DataType a, DataType b) {
  if (a == b) return a == DataType::BOOL ? DataType::INDEX : a;
  if (is_float(a) || is_float(b)) {
    if (!is_float(b)) return a;
    if (!is_float(a)) return b;
    if (bit_width(a) != bit_width(b)) return bit_width(a) > bit_width(b) ? a : b;
    return DataType::FP32;  // FP16 with BF16
  }
  if (a == DataType::BOOL) return b;
  if (b == DataType::BOOL) return a;
  if (a == DataType::INDEX || b == DataType::INDEX) return DataType::INDEX;
  if (bit_width(a) != bit_width(b)) return bit_width(a) > bit_width(b) ? a : b;
  return is_signed(a) ? a : b;
}

std::shared_ptr<const Var> Var::make(std::string name, TypePtr type, Span span) {
  PYPTO_CHECK(type, "Var '" << name << "' needs a type");
  return make_node<Var>(std::move(name), std::move(type), std::move(span));
}

std::shared_ptr<const IterArg> IterArg::make(std::string name, TypePtr type, ExprPtr init, Span span) {
  PYPTO_CHECK(type, "IterArg '" << name << "' needs a type");
  PYPTO_CHECK(init, "IterArg '" << name << "' needs an init value");
  return make_node<IterArg>(std::move(name), std::move(type), std::move(init), std::move(span));
}

std::shared_ptr<const ConstInt> ConstInt::make(int64_t v, DataType dtype, Span span) {
  PYPTO_CHECK(is_integer(dtype), "ConstInt needs an integer dtype, got " << to_string(dtype));
  return make_node<ConstInt>(v, ScalarType::make(dtype), std::move(span));
}

std::shared_ptr<const ConstFloat> ConstFloat::make(double v, DataType dtype, Span span) {
  PYPTO_CHECK(is_float(dtype), "ConstFloat needs a float dtype, got " << to_string(dtype));
  return make_node<ConstFloat>(v, ScalarType::make(dtype), std::move(span));
}

std::shared_ptr<const ConstBool> ConstBool::make(bool v, Span span) {
  return make_node<ConstBool>(v, ScalarType::make(DataType::BOOL), std::move(span));
}

std::shared_ptr<const BinaryExpr> BinaryExpr::make(BinaryOp op, ExprPtr a, ExprPtr b, Span span) {
  PYPTO_CHECK(a && b, "BinaryExpr '" << to_string(op) << "' needs two operands");
  const ScalarType* sa = a->type->as<ScalarType>();
  const ScalarType* sb = b->type->as<ScalarType>();
  for (const ExprPtr* e : {&a, &b}) {
    PYPTO_USER_CHECK((*e)->type->is<ScalarType>(), span,
                     "operator '" << to_string(op) << "' expects scalar operands, got " << describe((*e)->type),
                     "use the tile ops (pl.add, pl.mul, ...) on tiles, and index tensors with pl.tensor.read");
  }
  DataType result;
  if (is_comparison(op) || op == BinaryOp::And || op == BinaryOp::Or) {
    result = DataType::BOOL;
  } else {
    for (const ScalarType* s : {sa, sb}) {
      PYPTO_USER_CHECK(s->dtype != DataType::TASK_ID, span,
                       "operator '" << to_string(op) << "' is not defined on a TaskId (Scalar[TASK_ID])",
                       "TaskIds can only be passed to deps= or stored in a TaskId array");
    }
    if (is_bitwise(op)) {
      for (const ScalarType* s : {sa, sb}) {
        PYPTO_USER_CHECK(is_integer(s->dtype), span,
                         "operator '" << to_string(op) << "' needs integer operands, got " << to_string(s->dtype),
                         s->dtype == DataType::BOOL ? "use and / or / not on conditions"
                                                    : "pl.cast a float to an integer dtype first");
      }
    }
    result = PromoteScalarDTypes(sa->dtype, sb->dtype);
    if (op == BinaryOp::Div && !is_float(result)) result = DataType::FP32;
  }
  return make_node<BinaryExpr>(op, std::move(a), std::move(b), ScalarType::make(result), std::move(span));
}

std::shared_ptr<const UnaryExpr> UnaryExpr::make(UnaryOp op, ExprPtr a, Span span) {
  PYPTO_CHECK(a, "UnaryExpr '" << to_string(op) << "' needs an operand");
  auto* s = a->type->as<ScalarType>();
  PYPTO_USER_CHECK(s, span, "operator '" << to_string(op) << "' expects a scalar operand, got " << describe(a->type),
                   op == UnaryOp::Neg ? "use pl.neg on tiles" : "");
  TypePtr t = op == UnaryOp::Not ? ScalarType::make(DataType::BOOL) : a->type;
  if (op == UnaryOp::Neg) {
    PYPTO_USER_CHECK(s->dtype != DataType::TASK_ID && s->dtype != DataType::BOOL, span,
                     "operator '-' is not defined on " << describe(a->type), "");
  }
  if (op == UnaryOp::BitNot) {
    PYPTO_USER_CHECK(is_integer(s->dtype), span, "operator '~' needs an integer operand, got " << describe(a->type),
                     s->dtype == DataType::BOOL ? "use not on a condition" : "pl.cast a float to an integer dtype first");
  }
  return make_node<UnaryExpr>(op, std::move(a), std::move(t), std::move(span));
}

std::shared_ptr<const Cast> Cast::make(ExprPtr value, DataType dtype, Span span) {
  PYPTO_CHECK(value, "Cast needs a value");
  PYPTO_USER_CHECK(value->type->is<ScalarType>(), span,
                   "pl.cast on a scalar expects a scalar value, got " << describe(value->type),
                   "use pl.cast(tile, dtype) (tile.cast) for tiles");
  PYPTO_USER_CHECK(dtype != DataType::TASK_ID && value->type->as<ScalarType>()->dtype != DataType::TASK_ID, span,
                   "cannot cast to or from TASK_ID", "");
  return make_node<Cast>(std::move(value), ScalarType::make(dtype), std::move(span));
}

std::shared_ptr<const Call> Call::make_op(std::string op, std::vector<ExprPtr> args, Attrs attrs, Span span) {
  for (auto& a : args) PYPTO_CHECK(a, "op call '" << op << "' has a null argument");
  const OpInfo* info = OpRegistry::global().get(op);
  PYPTO_USER_CHECK(info, span, "unknown op '" << op << "'", "see docs/dsl.md for the ops the DSL provides");
  const size_t min_args = std::min(info->min_args, info->arg_names.size());
  if (args.size() < min_args || args.size() > info->arg_names.size()) {
    std::string names;
    for (size_t i = 0; i < info->arg_names.size(); ++i) names += (i ? ", " : "") + info->arg_names[i];
    const std::string count = min_args == info->arg_names.size()
                                  ? std::to_string(min_args)
                                  : std::to_string(min_args) + " to " + std::to_string(info->arg_names.size());
    throw UserError("op '" + op + "' expects " + count + " argument" +
                        (info->arg_names.size() == 1 ? "" : "s") + " (" + names + "), got " + std::to_string(args.size()),
                    span, info->doc);
  }
  for (const auto& kv : attrs) {
    bool known = std::find(info->attr_names.begin(), info->attr_names.end(), kv.first) != info->attr_names.end();
    if (!known) {
      std::string names;
      for (size_t i = 0; i < info->attr_names.size(); ++i) names += (i ? ", " : "") + info->attr_names[i];
      throw UserError("op '" + op + "' has no parameter '" + kv.first + "'", span,
                      names.empty() ? "it takes no keyword parameters" : "its keyword parameters are: " + names);
    }
  }
  TypePtr t = info->infer(args, attrs, span);
  PYPTO_CHECK(t, "type inference of op '" << op << "' returned no type");
  // A barrier's edges (checked by type inference) are a typed field, not an attr.
  std::vector<ExprPtr> edges;
  if (auto it = attrs.find("manual_dep_edges"); op == "system.task_dummy" && it != attrs.end()) {
    edges = std::get<std::vector<ExprPtr>>(it->second);
    attrs.erase(it);
  }
  // A task_ref's target (checked by type inference) is a typed field, not attrs.
  TaskRef ref;
  if (op == "system.task_ref") {
    ref.task = std::get<std::string>(attrs.at("task"));
    if (auto* k = attr_get<int64_t>(attrs, "slot")) ref.slot = *k;
    if (auto* e = attr_get<bool>(attrs, "every_iteration")) ref.every_iteration = *e;
    for (const char* k : {"task", "slot", "every_iteration"}) attrs.erase(k);
  }
  auto c = make_node<Call>(std::move(op), true, std::move(args), std::move(attrs), std::vector<ArgDirection>{},
                                  std::move(t), std::move(span));
  c->manual_dep_edges = std::move(edges);
  c->task_ref = std::move(ref);
  return c;
}

std::shared_ptr<const Call> Call::make_func(std::string callee, std::vector<ExprPtr> args, TypePtr result,
                                            std::vector<ArgDirection> dirs, Span span, Attrs attrs) {
  PYPTO_CHECK(!callee.empty(), "function call needs a callee name");
  PYPTO_CHECK(result, "function call to '" << callee << "' needs a result type");
  for (auto& a : args) PYPTO_CHECK(a, "call to '" << callee << "' has a null argument");
  PYPTO_CHECK(dirs.empty() || dirs.size() == args.size(),
              "call to '" << callee << "': " << dirs.size() << " arg directions for " << args.size() << " args");
  return make_node<Call>(std::move(callee), false, std::move(args), std::move(attrs), std::move(dirs),
                                std::move(result), std::move(span));
}

ExprPtr with_compiler_dep_edges(const ExprPtr& task, std::vector<ExprPtr> edges) {
  for (auto& d : edges) {
    PYPTO_CHECK(d && is_task_id(d->type), "compiler_manual_dep_edges entries must be TaskIds");
  }
  if (auto* c = task->as<Call>()) {
    PYPTO_CHECK(!c->is_op, "compiler_manual_dep_edges on op call '" << c->callee << "'");
    auto n = make_node<Call>(*c);
    n->compiler_manual_dep_edges = std::move(edges);
    return n;
  }
  auto* s = task->as<Submit>();
  PYPTO_CHECK(s, "compiler_manual_dep_edges on a " << to_string(task->kind));
  auto n = make_node<Submit>(*s);
  n->compiler_manual_dep_edges = std::move(edges);
  return n;
}

ExprPtr with_shares_source_tile(const ExprPtr& call, bool shares) {
  auto* c = call->as<Call>();
  PYPTO_CHECK(c && c->is_op && c->callee == "tile.move", "shares_source_tile on a " << to_string(call->kind)
                                                             << " that is not a tile.move call");
  if (c->shares_source_tile == shares) return call;
  auto n = make_node<Call>(*c);
  n->shares_source_tile = shares;
  return n;
}

ExprPtr with_reads_in_place(const ExprPtr& call, bool in_place) {
  auto* c = call->as<Call>();
  PYPTO_CHECK(c && c->is_op && c->callee == "tile.load", "reads_in_place on a " << to_string(call->kind)
                                                             << " that is not a tile.load call");
  if (c->reads_in_place == in_place) return call;
  auto n = make_node<Call>(*c);
  n->reads_in_place = in_place;
  return n;
}

ExprPtr with_cpu_base(const ExprPtr& call, int64_t cpu_base) {
  auto* c = call->as<Call>();
  PYPTO_CHECK(c && c->is_op && (c->callee == "system.reserve_buffer" || c->callee == "system.import_peer_buffer"),
              "cpu_base on a " << to_string(call->kind) << " that is not a system.reserve_buffer / import_peer_buffer call");
  PYPTO_CHECK(cpu_base >= -1, "cpu_base " << cpu_base << " is no address (>= 0, or -1: unstamped)");
  if (c->cpu_base == cpu_base) return call;
  auto n = make_node<Call>(*c);
  n->cpu_base = cpu_base;
  return n;
}

ExprPtr with_peer_base(const ExprPtr& call, int64_t base) {
  auto* c = call->as<Call>();
  PYPTO_CHECK(c && c->is_op && c->callee == "system.import_peer_buffer",
              "peer_base on a " << to_string(call->kind) << " that is not a system.import_peer_buffer call");
  PYPTO_CHECK(base >= Call::kNoPeerBase, "peer_base " << base << " is no base (>= 0, -1: pl.AUTO, -2: unstamped)");
  if (c->peer_base == base) return call;
  auto n = make_node<Call>(*c);
  n->peer_base = base;
  return n;
}

ExprPtr with_pass_results_of(const ExprPtr& call, const Call& from) {
  auto* c = call->as<Call>();
  PYPTO_CHECK(c && c->is_op && from.is_op && c->callee == from.callee,
              "with_pass_results_of: '" << from.callee << "' results onto a call that is not the same op");
  if (c->shares_source_tile == from.shares_source_tile && c->reads_in_place == from.reads_in_place &&
      c->cpu_base == from.cpu_base && c->peer_base == from.peer_base) {
    return call;
  }
  auto n = make_node<Call>(*c);
  n->shares_source_tile = from.shares_source_tile;
  n->reads_in_place = from.reads_in_place;
  n->cpu_base = from.cpu_base;
  n->peer_base = from.peer_base;
  return n;
}

const std::vector<ExprPtr>& compiler_dep_edges(const Expr& task) {
  static const std::vector<ExprPtr> kNone;
  if (auto* c = task.as<Call>()) return c->compiler_manual_dep_edges;
  if (auto* s = task.as<Submit>()) return s->compiler_manual_dep_edges;
  return kNone;
}

ExprPtr with_dump_vars(const ExprPtr& task, const std::vector<ExprPtr>& vars) {
  auto* c = task->as<Call>();
  auto* s = task->as<Submit>();
  PYPTO_CHECK(c || s, "dump_vars on a " << to_string(task->kind));
  PYPTO_CHECK(!c || !c->is_op, "dump_vars on op call '" << c->callee << "'");
  const auto& args = c ? c->args : s->args;
  const std::string& callee = c ? c->callee : s->callee;
  // Keep argument order and drop duplicates, so codegen's dump(...) lists each tensor once.
  std::vector<ExprPtr> kept;
  for (auto& v : vars) {
    PYPTO_CHECK(v && v->type && v->type->as<TensorType>(), "dump_vars of '" << callee << "': only tensors can be dumped");
    bool is_arg = false;
    for (auto& a : args) is_arg |= a.get() == v.get();
    PYPTO_CHECK(is_arg, "dump_vars of '" << callee << "': a dumped tensor must be an argument of the task");
  }
  for (auto& a : args) {
    bool marked = false;
    for (auto& v : vars) marked |= a.get() == v.get();
    bool seen = false;
    for (auto& k : kept) seen |= k.get() == a.get();
    if (marked && !seen) kept.push_back(a);
  }
  if (c) {
    auto n = make_node<Call>(*c);
    n->dump_vars = std::move(kept);
    return n;
  }
  auto n = make_node<Submit>(*s);
  n->dump_vars = std::move(kept);
  return n;
}

const std::vector<ExprPtr>& dump_vars(const Expr& task) {
  static const std::vector<ExprPtr> kNone;
  if (auto* c = task.as<Call>()) return c->dump_vars;
  if (auto* s = task.as<Submit>()) return s->dump_vars;
  return kNone;
}

std::shared_ptr<const Submit> Submit::make(std::string callee, std::vector<ExprPtr> args, std::vector<TypePtr> callee_returns,
                                           std::vector<ExprPtr> deps, ExprPtr core_num, bool sync_start,
                                           bool allow_early_resolve, int timing_slot, ExprPtr predicate,
                                           std::vector<ArgDirection> dirs, Span span) {
  PYPTO_CHECK(!callee.empty(), "Submit needs a callee name");
  for (auto& a : args) PYPTO_CHECK(a, "submit of '" << callee << "' has a null argument");
  for (auto& t : callee_returns) PYPTO_CHECK(t, "submit of '" << callee << "' has a null return type");
  PYPTO_CHECK(dirs.empty() || dirs.size() == args.size(),
              "submit of '" << callee << "': " << dirs.size() << " arg directions for " << args.size() << " args");
  for (auto& d : deps) {
    PYPTO_CHECK(d, "submit of '" << callee << "' has a null dep (None deps are dropped by the parser)");
    PYPTO_USER_CHECK(is_task_id(d->type), best_span(d, span),
                     "deps= entries must be TaskIds (from pl.submit, pl.at ... as tid, pl.system.task_dummy, a TaskId "
                     "loop carry or array slot, or None), got "
                         << describe(d->type),
                     "deps= never takes tensors: dependencies on data are derived automatically");
  }
  PYPTO_USER_CHECK(timing_slot >= -1 && timing_slot <= 15, span,
                   "timing_slot must be in 0..15, got " << timing_slot, "omit timing_slot for no timing slot");
  if (core_num) {
    auto* s = core_num->type->as<ScalarType>();
    PYPTO_USER_CHECK(s && is_integer(s->dtype), best_span(core_num, span),
                     "core_num must be an integer scalar, got " << describe(core_num->type), "");
    if (auto* c = core_num->as<ConstInt>()) {
      PYPTO_USER_CHECK(c->value > 0, best_span(core_num, span), "core_num must be positive, got " << c->value, "");
    }
  }
  if (predicate) {
    PYPTO_USER_CHECK(predicate->type->is<ScalarType>(), best_span(predicate, span),
                     "predicate must be a scalar condition, got " << describe(predicate->type),
                     "write e.g. predicate=(rc[0, 0] > 0)");
  }
  std::vector<TypePtr> elems = std::move(callee_returns);
  elems.push_back(ScalarType::make(DataType::TASK_ID));
  return make_node<Submit>(std::move(callee), std::move(args), std::move(dirs), std::move(deps), std::move(core_num),
                                  sync_start, allow_early_resolve, timing_slot, std::move(predicate),
                                  TupleType::make(std::move(elems)), std::move(span));
}

std::shared_ptr<const MakeTuple> MakeTuple::make(std::vector<ExprPtr> elements, Span span) {
  std::vector<TypePtr> types;
  types.reserve(elements.size());
  for (auto& e : elements) {
    PYPTO_CHECK(e, "MakeTuple has a null element");
    types.push_back(e->type);
  }
  return make_node<MakeTuple>(std::move(elements), TupleType::make(std::move(types)), std::move(span));
}

std::shared_ptr<const TupleGetItem> TupleGetItem::make(ExprPtr tuple, int index, Span span) {
  PYPTO_CHECK(tuple, "TupleGetItem needs a tuple");
  auto* tt = tuple->type->as<TupleType>();
  PYPTO_USER_CHECK(tt, span, "cannot index a value of type " << describe(tuple->type) << " like a tuple",
                   "only multi-result calls produce tuples");
  PYPTO_USER_CHECK(index >= 0 && index < static_cast<int>(tt->elements.size()), span,
                   "tuple index " << index << " out of range for " << describe(tuple->type), "");
  TypePtr t = tt->elements[static_cast<size_t>(index)];
  return make_node<TupleGetItem>(std::move(tuple), index, std::move(t), std::move(span));
}

}  // namespace pypto::ir
