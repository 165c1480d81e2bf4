// Structural equality and hashing of IR (see structural_equal.h).
//
// Variables are matched through a bijection built at definition sites (params, assignment
// targets, loop vars, iter_args, return vars, scope task-id / block vars, the program's
// dynamic dims in order); a use of a var not yet defined compares by pointer. Statement
// bodies compare as flattened lists, so SeqStmts nesting does not matter. Spans and var names
// are ignored. The hash numbers vars by definition order so that equal IRs hash equally.
#include "pypto/ir/structural_equal.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <unordered_map>

#include "describe.h"
#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"

namespace pypto::ir {

using detail::describe;

namespace {

std::string quote(const std::string& s) { return "'" + s + "'"; }

bool double_eq(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

class Equal {
 public:
  explicit Equal(bool explain) : explain_(explain) {}
  std::string why;

  bool program(const Program& a, const Program& b) {
    if (a.name != b.name) return fail("program name " + quote(a.name) + " vs " + quote(b.name));
    if (a.dynamic_dims.size() != b.dynamic_dims.size()) {
      return fail("dynamic dim count " + std::to_string(a.dynamic_dims.size()) + " vs " + std::to_string(b.dynamic_dims.size()));
    }
    for (size_t i = 0; i < a.dynamic_dims.size(); ++i) {
      Path p(this, "dynamic_dims[" + std::to_string(i) + "]");
      if (!def(a.dynamic_dims[i], b.dynamic_dims[i])) return false;
    }
    if (a.functions.size() != b.functions.size()) {
      return fail("function count " + std::to_string(a.functions.size()) + " vs " + std::to_string(b.functions.size()));
    }
    for (size_t i = 0; i < a.functions.size(); ++i) {
      // A function a rewrite left untouched (the same node) equals itself: skip the deep walk,
      // which dominated the fixed-point checks of the pass pipeline on long programs.
      if (a.functions[i] == b.functions[i]) continue;
      if (!function(*a.functions[i], *b.functions[i])) return false;
    }
    return true;
  }

  bool function(const Function& a, const Function& b) {
    Path p(this, "function " + a.name);
    if (a.name != b.name) return fail("function name " + quote(a.name) + " vs " + quote(b.name));
    if (a.type != b.type) return fail(std::string("function type ") + to_string(a.type) + " vs " + to_string(b.type));
    if (a.level != b.level) return fail(std::string("level ") + to_string(a.level) + " vs " + to_string(b.level));
    if (a.role != b.role) return fail(std::string("role ") + to_string(a.role) + " vs " + to_string(b.role));
    if (a.core_type != b.core_type) {
      return fail(std::string("core_type ") + to_string(a.core_type) + " vs " + to_string(b.core_type));
    }
    if (a.group_sync != b.group_sync) return fail("group_sync differs");
    if (a.param_slots != b.param_slots) return fail("param_slots differ");
    if (a.returned_params != b.returned_params) return fail("returned_params differ");
    if (a.group_kernels != b.group_kernels) return fail("group_kernels differ");
    if (a.task_statements != b.task_statements) {
      return fail("task_statements " + std::to_string(a.task_statements) + " vs " + std::to_string(b.task_statements));
    }
    if (a.params.size() != b.params.size()) {
      return fail("param count " + std::to_string(a.params.size()) + " vs " + std::to_string(b.params.size()));
    }
    for (size_t i = 0; i < a.params.size(); ++i) {
      Path q(this, "param " + std::to_string(i) + " (" + a.params[i]->name + ")");
      if (a.param_directions[i] != b.param_directions[i]) {
        return fail(std::string("direction ") + to_string(a.param_directions[i]) + " vs " + to_string(b.param_directions[i]));
      }
      if (!def(a.params[i], b.params[i])) return false;
    }
    {
      Path q(this, "return_types");
      if (!types(a.return_types, b.return_types)) return false;
    }
    {
      Path q(this, "attrs");
      if (!attrs(a.attrs, b.attrs)) return false;
    }
    {
      Path q(this, "body");
      if (!stmt(a.body, b.body)) return false;
    }
    if (!task_ids(a.task_ids, b.task_ids)) return false;
    if (!var_list("batched_creates", a.batched_creates, b.batched_creates)) return false;
    {
      Path r(this, "array_backings");
      if (a.array_backings.size() != b.array_backings.size()) {
        return fail("count " + std::to_string(a.array_backings.size()) + " vs " + std::to_string(b.array_backings.size()));
      }
      for (size_t i = 0; i < a.array_backings.size(); ++i) {
        if (!use(a.array_backings[i].version.get(), b.array_backings[i].version.get())) return false;
        if (!use(a.array_backings[i].backing.get(), b.array_backings[i].backing.get())) return false;
      }
    }
    return var_list("non_negative_vars", a.non_negative_vars, b.non_negative_vars) &&
           var_list("call_operands", a.call_operands, b.call_operands) && var_list("open_calls", a.open_calls, b.open_calls) &&
           var_list("cut_calls", a.cut_calls, b.cut_calls) &&
           var_list("carried_operands", a.carried_operands, b.carried_operands);
  }

  // A Function stamp listing body Vars (batched_creates, non_negative_vars, call_operands),
  // compared after the body has mapped its Vars.
  bool var_list(const char* field, const std::vector<VarPtr>& a, const std::vector<VarPtr>& b) {
    Path p(this, field);
    if (a.size() != b.size()) return fail("count " + std::to_string(a.size()) + " vs " + std::to_string(b.size()));
    for (size_t i = 0; i < a.size(); ++i) {
      if (!use(a[i].get(), b[i].get())) return false;
    }
    return true;
  }

  // Function::task_ids (ResolveTaskIds), compared after the body has mapped its Vars.
  bool task_ids(const std::vector<TaskIdInfo>& a, const std::vector<TaskIdInfo>& b) {
    Path p(this, "task_ids");
    if (a.size() != b.size()) return fail("count " + std::to_string(a.size()) + " vs " + std::to_string(b.size()));
    for (size_t i = 0; i < a.size(); ++i) {
      if (!use(a[i].var.get(), b[i].var.get())) return false;
      if (!a[i].same_facts(b[i])) return fail("task_ids entry '" + a[i].var->name + "' has other facts");
      if (a[i].submit && !use(a[i].submit.get(), b[i].submit.get())) return false;
    }
    return true;
  }

  // A statement position: both sides compare as flattened statement lists.
  bool stmt(const StmtPtr& a, const StmtPtr& b) {
    auto la = flatten_stmts(a), lb = flatten_stmts(b);
    if (la.size() != lb.size()) {
      return fail("statement count " + std::to_string(la.size()) + " vs " + std::to_string(lb.size()));
    }
    bool indexed = la.size() != 1 || (a && a->is<SeqStmts>()) || (b && b->is<SeqStmts>());
    for (size_t i = 0; i < la.size(); ++i) {
      Path p(this, indexed ? "[" + std::to_string(i) + "]" : "");
      if (!single(la[i], lb[i])) return false;
    }
    return true;
  }

  bool expr(const ExprPtr& a, const ExprPtr& b) {
    if (!a || !b) return (!a && !b) || fail(std::string("expr ") + (a ? "present" : "None") + " vs " + (b ? "present" : "None"));
    if (a->kind != b->kind) return fail(std::string("expr kind ") + to_string(a->kind) + " vs " + to_string(b->kind));
    switch (a->kind) {
      case NodeKind::Var:
      case NodeKind::IterArg:
        return use(static_cast<const Var*>(a.get()), static_cast<const Var*>(b.get()));
      case NodeKind::ConstInt: {
        auto *x = a->as<ConstInt>(), *y = b->as<ConstInt>();
        if (x->value != y->value) return fail("ConstInt " + std::to_string(x->value) + " vs " + std::to_string(y->value));
        return type(a->type, b->type);
      }
      case NodeKind::ConstFloat: {
        auto *x = a->as<ConstFloat>(), *y = b->as<ConstFloat>();
        if (!double_eq(x->value, y->value)) return fail("ConstFloat " + describe(a) + " vs " + describe(b));
        return type(a->type, b->type);
      }
      case NodeKind::ConstBool:
        if (a->as<ConstBool>()->value != b->as<ConstBool>()->value) return fail("ConstBool " + describe(a) + " vs " + describe(b));
        return true;
      case NodeKind::BinaryExpr: {
        auto *x = a->as<BinaryExpr>(), *y = b->as<BinaryExpr>();
        if (x->op != y->op) return fail(std::string("BinaryExpr.op '") + to_string(x->op) + "' vs '" + to_string(y->op) + "'");
        return field("BinaryExpr.a", x->a, y->a) && field("BinaryExpr.b", x->b, y->b);
      }
      case NodeKind::UnaryExpr: {
        auto *x = a->as<UnaryExpr>(), *y = b->as<UnaryExpr>();
        if (x->op != y->op) return fail(std::string("UnaryExpr.op '") + to_string(x->op) + "' vs '" + to_string(y->op) + "'");
        return field("UnaryExpr.a", x->a, y->a);
      }
      case NodeKind::Cast: {
        if (!type(a->type, b->type)) return false;
        return field("Cast.value", a->as<Cast>()->value, b->as<Cast>()->value);
      }
      case NodeKind::Call: {
        auto *x = a->as<Call>(), *y = b->as<Call>();
        if (x->is_op != y->is_op) return fail(std::string("Call.is_op ") + (x->is_op ? "op" : "function") + " vs " + (y->is_op ? "op" : "function"));
        if (x->callee != y->callee) return fail("Call.callee " + quote(x->callee) + " vs " + quote(y->callee));
        if (!exprs("Call.args", x->args, y->args)) return false;
        if (!arg_dirs("Call.arg_directions", x->arg_directions, y->arg_directions)) return false;
        if (!exprs("Call.compiler_manual_dep_edges", x->compiler_manual_dep_edges, y->compiler_manual_dep_edges)) return false;
        if (!exprs("Call.dump_vars", x->dump_vars, y->dump_vars)) return false;
        if (!exprs("Call.manual_dep_edges", x->manual_dep_edges, y->manual_dep_edges)) return false;
        if (x->shares_source_tile != y->shares_source_tile) return fail("Call.shares_source_tile differ");
        if (x->reads_in_place != y->reads_in_place) return fail("Call.reads_in_place differ");
        if (x->task_ref != y->task_ref) {
          auto text = [&](const TaskRef& r) {
            return quote(r.task) + (r.slot >= 0 ? " slot=" + std::to_string(r.slot) : "") + (r.every_iteration ? " every_iteration" : "");
          };
          return fail("Call.task_ref " + text(x->task_ref) + " vs " + text(y->task_ref));
        }
        if (x->cpu_base != y->cpu_base) return fail("Call.cpu_base " + std::to_string(x->cpu_base) + " vs " + std::to_string(y->cpu_base));
        if (x->peer_base != y->peer_base) {
          return fail("Call.peer_base " + std::to_string(x->peer_base) + " vs " + std::to_string(y->peer_base));
        }
        {
          Path p(this, "Call.attrs");
          if (!attrs(x->attrs, y->attrs)) return false;
        }
        Path p(this, "Call.type");
        return type(a->type, b->type);
      }
      case NodeKind::Submit: {
        auto *x = a->as<Submit>(), *y = b->as<Submit>();
        if (x->callee != y->callee) return fail("Submit.callee " + quote(x->callee) + " vs " + quote(y->callee));
        if (!exprs("Submit.args", x->args, y->args)) return false;
        if (!arg_dirs("Submit.arg_directions", x->arg_directions, y->arg_directions)) return false;
        if (!exprs("Submit.deps", x->deps, y->deps)) return false;
        if (!exprs("Submit.compiler_manual_dep_edges", x->compiler_manual_dep_edges, y->compiler_manual_dep_edges)) return false;
        if (!exprs("Submit.dump_vars", x->dump_vars, y->dump_vars)) return false;
        if (!field("Submit.core_num", x->core_num, y->core_num)) return false;
        if (x->sync_start != y->sync_start) return fail("Submit.sync_start differs");
        if (x->allow_early_resolve != y->allow_early_resolve) return fail("Submit.allow_early_resolve differs");
        if (x->timing_slot != y->timing_slot) {
          return fail("Submit.timing_slot " + std::to_string(x->timing_slot) + " vs " + std::to_string(y->timing_slot));
        }
        if (!field("Submit.predicate", x->predicate, y->predicate)) return false;
        Path p(this, "Submit.type");
        return type(a->type, b->type);
      }
      case NodeKind::MakeTuple:
        return exprs("MakeTuple.elements", a->as<MakeTuple>()->elements, b->as<MakeTuple>()->elements);
      case NodeKind::TupleGetItem: {
        auto *x = a->as<TupleGetItem>(), *y = b->as<TupleGetItem>();
        if (x->index != y->index) return fail("TupleGetItem.index " + std::to_string(x->index) + " vs " + std::to_string(y->index));
        return field("TupleGetItem.tuple", x->tuple, y->tuple);
      }
      // The other node category (no `default:`: -Wswitch flags an unhandled new kind).
#define PYPTO_STMT_NODE(Name) case NodeKind::Name:
#include "pypto/ir/node_kinds.def"
        break;
    }
    PYPTO_CHECK(false, "structural_equal: unhandled expr kind " << to_string(a->kind));
    return false;
  }

  bool type(const TypePtr& a, const TypePtr& b) {
    bool saved = explain_;
    explain_ = false;
    bool ok = type_silent(a, b);
    explain_ = saved;
    return ok || fail("type " + describe(a) + " vs " + describe(b));
  }

 private:
  struct Path {
    Equal* e;
    bool pushed;
    Path(Equal* eq, std::string s) : e(eq), pushed(eq->explain_ && !s.empty()) {
      if (pushed) e->path_.push_back(std::move(s));
    }
    ~Path() {
      if (pushed) e->path_.pop_back();
    }
  };

  bool fail(const std::string& msg) {
    if (explain_ && why.empty()) {
      std::string p;
      for (auto& s : path_) {
        if (!p.empty() && s[0] != '[') p += ": ";
        p += s;
      }
      why = p.empty() ? msg : p + ": " + msg;
    }
    return false;
  }

  bool field(const char* name, const ExprPtr& a, const ExprPtr& b) {
    Path p(this, name);
    return expr(a, b);
  }

  bool exprs(const std::string& name, const std::vector<ExprPtr>& a, const std::vector<ExprPtr>& b) {
    Path p(this, name);
    if (a.size() != b.size()) return fail("length " + std::to_string(a.size()) + " vs " + std::to_string(b.size()));
    for (size_t i = 0; i < a.size(); ++i) {
      Path q(this, "[" + std::to_string(i) + "]");
      if (!expr(a[i], b[i])) return false;
    }
    return true;
  }

  bool arg_dirs(const char* name, const std::vector<ArgDirection>& a, const std::vector<ArgDirection>& b) {
    if (a == b) return true;
    Path p(this, name);
    std::string sa, sb;
    for (auto d : a) sa += std::string(sa.empty() ? "" : ",") + to_string(d);
    for (auto d : b) sb += std::string(sb.empty() ? "" : ",") + to_string(d);
    return fail("[" + sa + "] vs [" + sb + "]");
  }

  bool types(const std::vector<TypePtr>& a, const std::vector<TypePtr>& b) {
    if (a.size() != b.size()) return fail("count " + std::to_string(a.size()) + " vs " + std::to_string(b.size()));
    for (size_t i = 0; i < a.size(); ++i) {
      if (!type(a[i], b[i])) return false;
    }
    return true;
  }

  bool type_silent(const TypePtr& a, const TypePtr& b) {
    if (!a || !b) return !a && !b;
    if (a->kind != b->kind) return false;
    switch (a->kind) {
      case TypeKind::Scalar:
        return a->as<ScalarType>()->dtype == b->as<ScalarType>()->dtype;
      case TypeKind::Tensor: {
        auto *x = a->as<TensorType>(), *y = b->as<TensorType>();
        return x->dtype == y->dtype && x->layout == y->layout && shape(x->shape, y->shape);
      }
      case TypeKind::Tile: {
        auto *x = a->as<TileType>(), *y = b->as<TileType>();
        return x->dtype == y->dtype && x->memory == y->memory && shape(x->shape, y->shape) &&
               shape(x->valid_shape, y->valid_shape);
      }
      case TypeKind::Tuple: {
        auto *x = a->as<TupleType>(), *y = b->as<TupleType>();
        if (x->elements.size() != y->elements.size()) return false;
        for (size_t i = 0; i < x->elements.size(); ++i) {
          if (!type_silent(x->elements[i], y->elements[i])) return false;
        }
        return true;
      }
      case TypeKind::Array: {
        auto *x = a->as<ArrayType>(), *y = b->as<ArrayType>();
        return x->size == y->size && x->dtype == y->dtype;
      }
    }
    return false;
  }

  bool shape(const std::vector<ExprPtr>& a, const std::vector<ExprPtr>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!expr(a[i], b[i])) return false;
    }
    return true;
  }

  bool attr_value(const AttrValue& a, const AttrValue& b) {
    if (a.index() != b.index()) return fail("attr value kinds differ");
    if (auto* x = std::get_if<bool>(&a)) return *x == std::get<bool>(b) || fail("bool attr differs");
    if (auto* x = std::get_if<int64_t>(&a)) {
      return *x == std::get<int64_t>(b) || fail(std::to_string(*x) + " vs " + std::to_string(std::get<int64_t>(b)));
    }
    if (auto* x = std::get_if<double>(&a)) return double_eq(*x, std::get<double>(b)) || fail("float attr differs");
    if (auto* x = std::get_if<std::string>(&a)) {
      return *x == std::get<std::string>(b) || fail(quote(*x) + " vs " + quote(std::get<std::string>(b)));
    }
    if (auto* x = std::get_if<ExprPtr>(&a)) return expr(*x, std::get<ExprPtr>(b));
    return exprs("", std::get<std::vector<ExprPtr>>(a), std::get<std::vector<ExprPtr>>(b));
  }

  bool attrs(const Attrs& a, const Attrs& b) {
    auto ia = a.begin();
    auto ib = b.begin();
    for (; ia != a.end() && ib != b.end(); ++ia, ++ib) {
      if (ia->first != ib->first) return fail("attr " + quote(ia->first) + " vs " + quote(ib->first));
      Path p(this, ia->first);
      if (!attr_value(ia->second, ib->second)) return false;
    }
    if (ia != a.end()) return fail("attr " + quote(ia->first) + " only on the left");
    if (ib != b.end()) return fail("attr " + quote(ib->first) + " only on the right");
    return true;
  }

  // A definition site: map a <-> b (both new) after comparing kinds, types and IterArg inits.
  bool def(const VarPtr& a, const VarPtr& b) {
    if (!a || !b) return (!a && !b) || fail(std::string("var ") + (a ? a->name : "None") + " vs " + (b ? b->name : "None"));
    if (a->kind != b->kind) return fail(std::string("var kind ") + to_string(a->kind) + " vs " + to_string(b->kind));
    auto it = fwd_.find(a.get());
    if (it != fwd_.end()) {
      return it->second == b.get() || fail("var '" + a->name + "' is bound to a different var than '" + b->name + "'");
    }
    if (bwd_.count(b.get())) return fail("var '" + b->name + "' on the right is already bound to another var");
    if (auto* ia = a->as<IterArg>()) {
      Path p(this, "IterArg " + a->name + ".init");
      if (!expr(ia->init, b->as<IterArg>()->init)) return false;
    }
    {
      Path p(this, "var " + a->name);
      if (!type(a->type, b->type)) return false;
    }
    fwd_[a.get()] = b.get();
    bwd_[b.get()] = a.get();
    return true;
  }

  bool use(const Var* a, const Var* b) {
    auto it = fwd_.find(a);
    if (it != fwd_.end()) {
      return it->second == b || fail("var '" + a->name + "' vs '" + b->name + "' (different definitions)");
    }
    if (bwd_.count(b)) return fail("var '" + a->name + "' vs '" + b->name + "' (different definitions)");
    return a == b || fail("free var '" + a->name + "' vs '" + b->name + "' (different variables)");
  }

  bool defs(const std::string& name, const std::vector<VarPtr>& a, const std::vector<VarPtr>& b) {
    Path p(this, name);
    if (a.size() != b.size()) return fail("count " + std::to_string(a.size()) + " vs " + std::to_string(b.size()));
    for (size_t i = 0; i < a.size(); ++i) {
      if (!def(a[i], b[i])) return false;
    }
    return true;
  }

  bool single(const StmtPtr& a, const StmtPtr& b) {
    if (a->kind != b->kind) return fail(std::string("statement kind ") + to_string(a->kind) + " vs " + to_string(b->kind));
    switch (a->kind) {
      case NodeKind::AssignStmt: {
        auto *x = a->as<AssignStmt>(), *y = b->as<AssignStmt>();
        if (!field("AssignStmt.value", x->value, y->value)) return false;
        Path p(this, "AssignStmt.var");
        return def(x->var, y->var);
      }
      case NodeKind::EvalStmt:
        return field("EvalStmt.expr", a->as<EvalStmt>()->expr, b->as<EvalStmt>()->expr);
      case NodeKind::ForStmt: {
        auto *x = a->as<ForStmt>(), *y = b->as<ForStmt>();
        if (x->for_kind != y->for_kind) return fail(std::string("ForStmt.kind ") + to_string(x->for_kind) + " vs " + to_string(y->for_kind));
        if (!field("ForStmt.start", x->start, y->start) || !field("ForStmt.stop", x->stop, y->stop) ||
            !field("ForStmt.step", x->step, y->step)) {
          return false;
        }
        {
          Path p(this, "ForStmt.loop_var");
          if (!def(x->loop_var, y->loop_var)) return false;
        }
        std::vector<VarPtr> ia(x->iter_args.begin(), x->iter_args.end()), ib(y->iter_args.begin(), y->iter_args.end());
        if (!defs("ForStmt.iter_args", ia, ib)) return false;
        {
          Path p(this, "ForStmt.attrs");
          if (!attrs(x->attrs, y->attrs)) return false;
        }
        if (x->trip_count != y->trip_count) {
          return fail("ForStmt.trip_count " + std::to_string(x->trip_count) + " vs " + std::to_string(y->trip_count));
        }
        if (x->carries.size() != y->carries.size()) {
          return fail("ForStmt.carries count " + std::to_string(x->carries.size()) + " vs " + std::to_string(y->carries.size()));
        }
        for (size_t k = 0; k < x->carries.size(); ++k) {
          if (x->carries[k] != y->carries[k]) {
            auto text = [](const LoopCarry& c) {
              return !c.rebind ? std::string("alias") : c.slots ? "slots(" + std::to_string(c.slots) + ")" : std::string("rebind");
            };
            return fail("ForStmt.carries[" + std::to_string(k) + "] " + text(x->carries[k]) + " vs " + text(y->carries[k]));
          }
        }
        if (x->inplace_carries != y->inplace_carries) return fail("ForStmt.inplace_carries differ");
        if (x->lent_inits != y->lent_inits) return fail("ForStmt.lent_inits differ");
        if (x->counted != y->counted) return fail(std::string("ForStmt.counted ") + (x->counted ? "true vs false" : "false vs true"));
        if (x->loop_origin != y->loop_origin) {
          return fail(std::string("ForStmt.loop_origin ") + to_string(x->loop_origin) + " vs " + to_string(y->loop_origin));
        }
        if (x->chunk != y->chunk) {
          return fail("ForStmt.chunk " + std::to_string(x->chunk.chunk) + "/" + to_string(x->chunk.policy) + " vs " +
                      std::to_string(y->chunk.chunk) + "/" + to_string(y->chunk.policy));
        }
        if (x->chunk_stride != y->chunk_stride) {
          return fail("ForStmt.chunk_stride " + std::to_string(x->chunk_stride) + " vs " + std::to_string(y->chunk_stride));
        }
        {
          Path p(this, "ForStmt.body");
          if (!stmt(x->body, y->body)) return false;
        }
        return defs("ForStmt.return_vars", x->return_vars, y->return_vars);
      }
      case NodeKind::IfStmt: {
        auto *x = a->as<IfStmt>(), *y = b->as<IfStmt>();
        if (!field("IfStmt.cond", x->cond, y->cond)) return false;
        {
          Path p(this, "IfStmt.then");
          if (!stmt(x->then_body, y->then_body)) return false;
        }
        {
          Path p(this, "IfStmt.else");
          if (!x->else_body != !y->else_body) return fail("else branch present on one side only");
          if (x->else_body && !stmt(x->else_body, y->else_body)) return false;
        }
        return defs("IfStmt.return_vars", x->return_vars, y->return_vars);
      }
      case NodeKind::YieldStmt:
        return exprs("YieldStmt.values", a->as<YieldStmt>()->values, b->as<YieldStmt>()->values);
      case NodeKind::ReturnStmt:
        return exprs("ReturnStmt.values", a->as<ReturnStmt>()->values, b->as<ReturnStmt>()->values);
      case NodeKind::ScopeStmt: {
        auto *x = a->as<ScopeStmt>(), *y = b->as<ScopeStmt>();
        if (x->scope_kind != y->scope_kind) {
          return fail(std::string("ScopeStmt.kind ") + to_string(x->scope_kind) + " vs " + to_string(y->scope_kind));
        }
        {
          Path p(this, "ScopeStmt.attrs");
          if (!attrs(x->attrs, y->attrs)) return false;
        }
        {
          const ScopeOptions &ox = x->options, &oy = y->options;
          if (!exprs("ScopeStmt.options.deps", ox.deps, oy.deps)) return false;
          {
            Path p(this, "ScopeStmt.options.predicate");
            if (!expr(ox.predicate, oy.predicate)) return false;
          }
          if (!exprs("ScopeStmt.options.no_dep_args", ox.no_dep_args, oy.no_dep_args)) return false;
          if (ox.sync_start != oy.sync_start) return fail("ScopeStmt.options.sync_start differ");
          if (ox.allow_early_resolve != oy.allow_early_resolve) return fail("ScopeStmt.options.allow_early_resolve differ");
        }
        {
          Path p(this, "ScopeStmt.block_var");
          if (!def(x->block_var, y->block_var)) return false;
        }
        {
          Path p(this, "ScopeStmt.body");
          if (!stmt(x->body, y->body)) return false;
        }
        Path p(this, "ScopeStmt.task_id_var");
        return def(x->task_id_var, y->task_id_var);
      }
      case NodeKind::RuntimeScopeStmt: {
        auto *x = a->as<RuntimeScopeStmt>(), *y = b->as<RuntimeScopeStmt>();
        if (x->mode != y->mode) return fail(std::string("RuntimeScopeStmt.mode ") + to_string(x->mode) + " vs " + to_string(y->mode));
        {
          Path p(this, "RuntimeScopeStmt.body");
          if (!stmt(x->body, y->body)) return false;
        }
        // carried_task_ids (ResolveTaskIds) name body Vars: compared once the body mapped them.
        {
          Path p(this, "RuntimeScopeStmt.carried_task_ids");
          if (x->carried_task_ids.size() != y->carried_task_ids.size()) {
            return fail("count " + std::to_string(x->carried_task_ids.size()) + " vs " +
                        std::to_string(y->carried_task_ids.size()));
          }
          for (size_t i = 0; i < x->carried_task_ids.size(); ++i) {
            const ScopeTaskIdCarry &cx = x->carried_task_ids[i], &cy = y->carried_task_ids[i];
            if (!use(cx.var.get(), cy.var.get())) return false;
            if (cx.slots != cy.slots) return fail("entry '" + cx.var->name + "' has other slots");
          }
        }
        // exit_values (StampScopeExits) name body Vars too.
        Path p(this, "RuntimeScopeStmt.exit_values");
        if (x->exit_values.size() != y->exit_values.size()) {
          return fail("count " + std::to_string(x->exit_values.size()) + " vs " + std::to_string(y->exit_values.size()));
        }
        for (size_t i = 0; i < x->exit_values.size(); ++i) {
          if (!use(x->exit_values[i].get(), y->exit_values[i].get())) return false;
        }
        return true;
      }
      // The other node category (no `default:`: -Wswitch flags an unhandled new kind).
      case NodeKind::SeqStmts:   // callers flatten SeqStmts before comparing single statements
#define PYPTO_EXPR_NODE(Name) case NodeKind::Name:
#include "pypto/ir/node_kinds.def"
        break;
    }
    PYPTO_CHECK(false, "structural_equal: unhandled stmt kind " << to_string(a->kind));
    return false;
  }

  bool explain_;
  std::vector<std::string> path_;
  std::unordered_map<const Var*, const Var*> fwd_, bwd_;
};

// ---- hashing: mirrors Equal ----

class Hasher {
 public:
  size_t h = 0x12345;

  void mix(uint64_t v) { h ^= std::hash<uint64_t>()(v) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); }
  void mix_str(const std::string& s) { mix(std::hash<std::string>()(s)); }

  void program(const Program& p) {
    mix_str(p.name);
    mix(p.dynamic_dims.size());
    for (auto& d : p.dynamic_dims) def(d);
    mix(p.functions.size());
    for (auto& f : p.functions) function(*f);
  }

  void function(const Function& f) {
    mix_str(f.name);
    mix(static_cast<uint64_t>(f.type));
    mix(static_cast<uint64_t>(f.level));
    mix(static_cast<uint64_t>(f.role));
    mix(static_cast<uint64_t>(f.core_type));
    for (const auto* v : {&f.param_slots, &f.group_sync.waits, &f.group_sync.signals}) {
      mix(v->size());
      for (int64_t x : *v) mix(static_cast<uint64_t>(x));
    }
    mix(f.returned_params.size());
    for (int64_t p : f.returned_params) mix(static_cast<uint64_t>(p + 1));
    mix(f.params.size());
    for (size_t i = 0; i < f.params.size(); ++i) {
      mix(static_cast<uint64_t>(f.param_directions[i]));
      def(f.params[i]);
    }
    mix(f.return_types.size());
    for (auto& t : f.return_types) type(t);
    attrs(f.attrs);
    stmt(f.body);
    mix_str(f.group_kernels.aic);
    mix_str(f.group_kernels.aiv);
    mix(static_cast<uint64_t>(f.task_statements));
    mix(f.task_ids.size());
    for (auto& t : f.task_ids) {
      auto it = index_.find(t.var.get());
      mix(it == index_.end() ? 0xdead : it->second);
      mix(static_cast<uint64_t>(t.slots) * 4 + (t.fresh ? 2 : 0) + (t.read ? 1 : 0));
      if (t.submit) {
        auto st = index_.find(t.submit.get());
        mix(st == index_.end() ? 0xbeef : st->second);
      }
    }
    mix(f.batched_creates.size());
    for (auto& v : f.batched_creates) {
      auto it = index_.find(v.get());
      mix(it == index_.end() ? 0xdead : it->second);
    }
    mix(f.array_backings.size());
    for (auto& e : f.array_backings) {
      for (const Var* v : {e.version.get(), e.backing.get()}) {
        auto it = index_.find(v);
        mix(it == index_.end() ? 0xdead : it->second);
      }
    }
    for (const std::vector<VarPtr>* list : {&f.non_negative_vars, &f.call_operands, &f.open_calls, &f.cut_calls,
                                                 &f.carried_operands}) {
      mix(list->size());
      for (auto& v : *list) {
        auto it = index_.find(v.get());
        mix(it == index_.end() ? 0xdead : it->second);
      }
    }
  }

  void stmt(const StmtPtr& s) {
    auto l = flatten_stmts(s);
    mix(0x5e9);
    mix(l.size());
    for (auto& x : l) single(x);
  }

  void type(const TypePtr& t) {
    if (!t) return mix(0xdead);
    mix(static_cast<uint64_t>(t->kind) + 100);
    switch (t->kind) {
      case TypeKind::Scalar:
        return mix(static_cast<uint64_t>(t->as<ScalarType>()->dtype));
      case TypeKind::Tensor: {
        auto* x = t->as<TensorType>();
        mix(static_cast<uint64_t>(x->dtype));
        mix(static_cast<uint64_t>(x->layout));
        mix(x->shape.size());
        for (auto& d : x->shape) expr(d);
        return;
      }
      case TypeKind::Tile: {
        auto* x = t->as<TileType>();
        mix(static_cast<uint64_t>(x->dtype));
        mix(static_cast<uint64_t>(x->memory));
        mix(x->shape.size());
        for (auto& d : x->shape) expr(d);
        mix(x->valid_shape.size());
        for (auto& d : x->valid_shape) expr(d);
        return;
      }
      case TypeKind::Tuple: {
        auto* x = t->as<TupleType>();
        mix(x->elements.size());
        for (auto& e : x->elements) type(e);
        return;
      }
      case TypeKind::Array: {
        auto* x = t->as<ArrayType>();
        mix(static_cast<uint64_t>(x->size));
        mix(static_cast<uint64_t>(x->dtype));
        return;
      }
    }
  }

  void expr(const ExprPtr& e) {
    if (!e) return mix(0xbeef);
    mix(static_cast<uint64_t>(e->kind) + 1000);
    switch (e->kind) {
      case NodeKind::Var:
      case NodeKind::IterArg: {
        auto it = index_.find(e.get());
        if (it != index_.end()) return mix(it->second);
        return mix(reinterpret_cast<uintptr_t>(e.get()));
      }
      case NodeKind::ConstInt:
        mix(static_cast<uint64_t>(e->as<ConstInt>()->value));
        return type(e->type);
      case NodeKind::ConstFloat: {
        double v = e->as<ConstFloat>()->value;
        if (std::isnan(v)) {
          mix(0x7ff8);
        } else {
          if (v == 0) v = 0;  // +0 and -0 compare equal
          uint64_t bits;
          std::memcpy(&bits, &v, sizeof bits);
          mix(bits);
        }
        return type(e->type);
      }
      case NodeKind::ConstBool:
        return mix(e->as<ConstBool>()->value);
      case NodeKind::BinaryExpr: {
        auto* x = e->as<BinaryExpr>();
        mix(static_cast<uint64_t>(x->op));
        expr(x->a);
        return expr(x->b);
      }
      case NodeKind::UnaryExpr:
        mix(static_cast<uint64_t>(e->as<UnaryExpr>()->op));
        return expr(e->as<UnaryExpr>()->a);
      case NodeKind::Cast:
        type(e->type);
        return expr(e->as<Cast>()->value);
      case NodeKind::Call: {
        auto* x = e->as<Call>();
        mix(x->is_op);
        mix_str(x->callee);
        exprs(x->args);
        mix(x->arg_directions.size());
        for (auto d : x->arg_directions) mix(static_cast<uint64_t>(d));
        attrs(x->attrs);
        exprs(x->compiler_manual_dep_edges);
        exprs(x->dump_vars);
        exprs(x->manual_dep_edges);
        if (x->shares_source_tile) mix(1);   // unstamped calls hash as before
        if (x->reads_in_place) mix(3);
        if (x->cpu_base >= 0) mix(static_cast<uint64_t>(x->cpu_base) + 2);
        if (x->peer_base != Call::kNoPeerBase) mix(static_cast<uint64_t>(x->peer_base + 5) * 13);
        if (!x->task_ref.task.empty()) {
          mix_str(x->task_ref.task);
          mix(static_cast<uint64_t>(x->task_ref.slot) * 2 + x->task_ref.every_iteration);
        }
        return type(e->type);
      }
      case NodeKind::Submit: {
        auto* x = e->as<Submit>();
        mix_str(x->callee);
        exprs(x->args);
        mix(x->arg_directions.size());
        for (auto d : x->arg_directions) mix(static_cast<uint64_t>(d));
        exprs(x->deps);
        exprs(x->compiler_manual_dep_edges);
        exprs(x->dump_vars);
        expr(x->core_num);
        mix(x->sync_start);
        mix(x->allow_early_resolve);
        mix(static_cast<uint64_t>(x->timing_slot));
        expr(x->predicate);
        return type(e->type);
      }
      case NodeKind::MakeTuple:
        return exprs(e->as<MakeTuple>()->elements);
      case NodeKind::TupleGetItem:
        mix(static_cast<uint64_t>(e->as<TupleGetItem>()->index));
        return expr(e->as<TupleGetItem>()->tuple);
      // The other node category (no `default:`: -Wswitch flags an unhandled new kind).
#define PYPTO_STMT_NODE(Name) case NodeKind::Name:
#include "pypto/ir/node_kinds.def"
        break;
    }
    PYPTO_CHECK(false, "structural_hash: unhandled expr kind " << to_string(e->kind));
  }

 private:
  void exprs(const std::vector<ExprPtr>& v) {
    mix(v.size());
    for (auto& e : v) expr(e);
  }

  void attrs(const Attrs& a) {
    mix(a.size());
    for (const auto& kv : a) {
      mix_str(kv.first);
      const AttrValue& v = kv.second;
      mix(v.index());
      if (auto* x = std::get_if<bool>(&v)) {
        mix(*x);
      } else if (auto* x = std::get_if<int64_t>(&v)) {
        mix(static_cast<uint64_t>(*x));
      } else if (auto* x = std::get_if<double>(&v)) {
        mix(std::isnan(*x) ? 0x7ff8 : std::hash<double>()(*x == 0 ? 0.0 : *x));
      } else if (auto* x = std::get_if<std::string>(&v)) {
        mix_str(*x);
      } else if (auto* x = std::get_if<ExprPtr>(&v)) {
        expr(*x);
      } else {
        exprs(std::get<std::vector<ExprPtr>>(v));
      }
    }
  }

  void def(const VarPtr& v) {
    if (!v) return mix(0xf00d);
    mix(static_cast<uint64_t>(v->kind));
    if (auto* ia = v->as<IterArg>()) expr(ia->init);
    type(v->type);
    index_.emplace(v.get(), index_.size());
  }

  void single(const StmtPtr& s) {
    mix(static_cast<uint64_t>(s->kind) + 2000);
    switch (s->kind) {
      case NodeKind::AssignStmt:
        expr(s->as<AssignStmt>()->value);
        return def(s->as<AssignStmt>()->var);
      case NodeKind::EvalStmt:
        return expr(s->as<EvalStmt>()->expr);
      case NodeKind::ForStmt: {
        auto* x = s->as<ForStmt>();
        mix(static_cast<uint64_t>(x->for_kind));
        expr(x->start);
        expr(x->stop);
        expr(x->step);
        def(x->loop_var);
        mix(x->iter_args.size());
        for (auto& ia : x->iter_args) def(ia);
        attrs(x->attrs);
        mix(static_cast<uint64_t>(x->trip_count));
        mix(x->carries.size());
        for (auto& c : x->carries) mix(static_cast<uint64_t>(c.rebind) * 1000003u + static_cast<uint64_t>(c.slots));
        mix(x->inplace_carries.size());
        for (int64_t c : x->inplace_carries) mix(static_cast<uint64_t>(c));
        if (!x->lent_inits.empty()) {   // unstamped loops hash as before
          mix(x->lent_inits.size() + 17);
          for (int64_t c : x->lent_inits) mix(static_cast<uint64_t>(c));
        }
        if (x->chunk_stride) mix(static_cast<uint64_t>(x->chunk_stride));   // unsplit loops hash as before
        if (x->counted) mix(0x636f756e74ULL);   // uncounted loops hash as before
        if (x->loop_origin != LoopOrigin::User) mix(static_cast<uint64_t>(x->loop_origin) + 7);
        if (x->chunk.chunk) mix(static_cast<uint64_t>(x->chunk.chunk) * 3 + static_cast<uint64_t>(x->chunk.policy) + 11);
        stmt(x->body);
        mix(x->return_vars.size());
        for (auto& rv : x->return_vars) def(rv);
        return;
      }
      case NodeKind::IfStmt: {
        auto* x = s->as<IfStmt>();
        expr(x->cond);
        stmt(x->then_body);
        mix(x->else_body != nullptr);
        if (x->else_body) stmt(x->else_body);
        mix(x->return_vars.size());
        for (auto& rv : x->return_vars) def(rv);
        return;
      }
      case NodeKind::YieldStmt:
        return exprs(s->as<YieldStmt>()->values);
      case NodeKind::ReturnStmt:
        return exprs(s->as<ReturnStmt>()->values);
      case NodeKind::ScopeStmt: {
        auto* x = s->as<ScopeStmt>();
        mix(static_cast<uint64_t>(x->scope_kind));
        attrs(x->attrs);
        if (!x->options.empty()) {   // scopes without task options hash as before
          exprs(x->options.deps);
          expr(x->options.predicate);
          exprs(x->options.no_dep_args);
          mix(static_cast<uint64_t>(x->options.sync_start) * 2 + static_cast<uint64_t>(x->options.allow_early_resolve));
        }
        def(x->block_var);
        stmt(x->body);
        return def(x->task_id_var);
      }
      case NodeKind::RuntimeScopeStmt: {
        auto* r = s->as<RuntimeScopeStmt>();
        mix(static_cast<uint64_t>(r->mode));
        stmt(r->body);
        mix(r->carried_task_ids.size());
        for (const ScopeTaskIdCarry& c : r->carried_task_ids) {
          auto it = index_.find(c.var.get());
          mix(it == index_.end() ? 0xdead : it->second);
          mix(static_cast<uint64_t>(c.slots));
        }
        mix(r->exit_values.size());
        for (const VarPtr& v : r->exit_values) {
          auto it = index_.find(v.get());
          mix(it == index_.end() ? 0xdead : it->second);
        }
        return;
      }
      // The other node category (no `default:`: -Wswitch flags an unhandled new kind).
      case NodeKind::SeqStmts:   // callers flatten SeqStmts before comparing single statements
#define PYPTO_EXPR_NODE(Name) case NodeKind::Name:
#include "pypto/ir/node_kinds.def"
        break;
    }
    PYPTO_CHECK(false, "structural_hash: unhandled stmt kind " << to_string(s->kind));
  }

  std::unordered_map<const Expr*, uint64_t> index_;
};

}  // namespace

bool structural_equal(const ProgramPtr& a, const ProgramPtr& b) {
  if (!a || !b) return !a && !b;
  return Equal(false).program(*a, *b);
}

bool structural_equal(const FunctionPtr& a, const FunctionPtr& b) {
  if (!a || !b) return !a && !b;
  return Equal(false).function(*a, *b);
}

bool structural_equal(const StmtPtr& a, const StmtPtr& b) {
  if (!a || !b) return !a && !b;
  return Equal(false).stmt(a, b);
}

bool structural_equal(const ExprPtr& a, const ExprPtr& b) { return Equal(false).expr(a, b); }

bool structural_equal(const TypePtr& a, const TypePtr& b) { return Equal(false).type(a, b); }

bool structural_equal_explain(const ProgramPtr& a, const ProgramPtr& b, std::string* why) {
  if (!a || !b) {
    if (why && (a || b)) *why = "one program is null";
    return !a && !b;
  }
  Equal eq(true);
  bool ok = eq.program(*a, *b);
  if (why) *why = ok ? "" : eq.why;
  return ok;
}

size_t structural_hash(const ProgramPtr& p) {
  Hasher h;
  if (p) h.program(*p);
  return h.h;
}

size_t structural_hash(const FunctionPtr& f) {
  Hasher h;
  if (f) h.function(*f);
  return h.h;
}

size_t structural_hash(const StmtPtr& s) {
  Hasher h;
  h.stmt(s);
  return h.h;
}

size_t structural_hash(const ExprPtr& e) {
  Hasher h;
  h.expr(e);
  return h.h;
}

size_t structural_hash(const TypePtr& t) {
  Hasher h;
  h.type(t);
  return h.h;
}

}  // namespace pypto::ir
