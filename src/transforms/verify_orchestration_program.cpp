// VerifyOrchestrationProgram
//
// What: checks every chip-level Orchestration function of a prepared program against what the
//   L2 orchestration code generator can express; the program comes back unchanged, or the first
//   violation is a UserError at the offending node. VerifyOrchestrationFunction (verify_program.h)
//   checks one function; GenerateOrchestration calls it first, so both report the same error.
//       @pl.function(type=pl.FunctionType.Orchestration)
//       def main(self, x, y: pl.Out[...]):           ==>  UserError "operation 'tile.add' is not
//           t = pl.add(pl.load(x, ...), ...)                supported in an orchestration function"
//   A valid program ==> the same program (OrchestrationProgramVerified).
// Input invariants: the codegen preconditions (the orchestration properties the default
//   pipeline establishes, declared as the pass's required properties).
// Output invariants: OrchestrationProgramVerified; nothing changes.
// Why: program validity is decided by a pass, before any backend prints; the generator raises
//   InternalError only.
//
// What the L2 orchestration code generator (src/codegen/orchestration) can express, checked
// before it prints. The walk follows the
// generator's statement order, so the first violation reported is the one it would meet
// first. Messages, spans and help lines are the user-facing contract (test_diagnostics*.py).
//
//   entry       the function exists, is Orchestration; no TaskId parameter
//   statements  expression statements are tasks; assignments are tasks, supported ops, Var
//               copies, tuple elements or scalar expressions (no tuple values)
//   tasks       callee is a kernel or Group; scalar arguments are numbers (not TaskIds);
//               runtime-allocated outputs hold numbers; predicate= is `t[i, j] <cmp> literal`
//   Groups      one AIC and/or one AIV kernel
//   carries     loop carries and if results are tensors, scalars or arrays (a TaskId array
//               if result is the pre-if array or a phi array, like any other array)
//   expressions scalar expressions only; dynamic dims declared by a tensor parameter
//   lifetimes   a value is used only while the blocks its C++ text names are open (a runtime-
//               allocated output dies with its scope); a TaskId named by deps=, a carry, a
//               yield or an array op is still alive (OrchestrationScopeModel)
#include <algorithm>
#include <cstring>
#include <set>
#include <sstream>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "pypto/codegen/orchestration.h"
#include "pypto/ir/attrs.h"
#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"
#include "pypto/transforms/passes.h"
#include "pypto/ir/structural_equal.h"
#include "pypto/transforms/verifier.h"
#include "orchestration_scope_model.h"
#include "pypto/transforms/array_backing.h"
#include "pypto/transforms/return_lineage.h"
#include "pypto/transforms/scope_carries.h"
#include "pypto/transforms/verify_program.h"
#include "verify_array_versions.h"
#include "verify_scalar_exprs.h"

namespace pypto::transforms {

using namespace ir;

namespace {

// The ops an orchestration body may assign from (src/codegen/orchestration op handlers).
const std::set<std::string>& SupportedOrchestrationOps() {
  static const std::set<std::string> ops = {
      "tensor.create",      "tensor.read",  "tensor.slice",      "tensor.transpose",
      "tensor.dim",         "tensor.assemble", "system.task_dummy", "system.task_invalid",
      "array.create",       "array.get_element", "array.update_element", "tensor.reshape",
      "tensor.write"};
  return ops;
}

const char* kPredicateHelp = "write predicate=(t[i, j] > 0): one tensor element compared with an integer literal";

// The tensor.read of a predicate operand (through an optional Cast), or null.
const Call* predicate_read(const ExprPtr& e) {
  const Expr* x = e.get();
  if (auto* c = x->as<Cast>()) x = c->value.get();
  auto* call = x->as<Call>();
  return (call && call->is_op && call->callee == "tensor.read") ? call : nullptr;
}

// Literal integer (ConstInt, or -ConstInt, through casts).
bool int_literal(const ExprPtr& e) {
  if (e->is<ConstInt>()) return true;
  if (auto* u = e->as<UnaryExpr>(); u && u->op == UnaryOp::Neg && u->a->is<ConstInt>()) return true;
  if (auto* k = e->as<Cast>()) return int_literal(k->value);
  return false;
}

bool is_comparison(BinaryOp op) {
  return op == BinaryOp::Eq || op == BinaryOp::Ne || op == BinaryOp::Gt || op == BinaryOp::Lt || op == BinaryOp::Ge ||
         op == BinaryOp::Le;
}

constexpr size_t kMaxTensorRank = 8;   // PTO2_MAX_DIMS (runtime/include/pto2/types.h)

class OrchestrationVerifier {
 public:
  OrchestrationVerifier(const Program& program, const Function& fn)
      : program_(program), fn_(fn), exprs_(kOrchestrationWording), m_(fn), arrays_(fn) {
    exprs_.on_var = [this](const Var* v, const Span&) { ref(v); };
    for (const VarPtr& v : fn.batched_creates) batch_stamps_.insert(v.get());
  }

  void Run() {
    m_.push();   // the entry function's block: parameters and dynamic-dim symbols
    for (auto& p : fn_.params) {
      m_.declare(p.get());
      if (auto* tt = p->type->as<TensorType>()) {
        for (auto& d : tt->shape) {
          if (const Var* sym = as_var(d)) {
            declared_dims_.insert(sym);
            m_.declare(sym);
          }
        }
      }
    }
    for (auto& p : fn_.params) {
      tensor_rank(p->type, "parameter '" + p->name + "'", p->span);
      auto* st = p->type->as<ScalarType>();
      PYPTO_USER_CHECK(!st || st->dtype != DataType::TASK_ID, p->span,
                       "orchestration parameter '" << p->name << "' cannot be a TaskId", "");
    }
    block_body(fn_.body);
  }

 private:
  using TaskIdRef = OrchestrationScopeModel::TaskIdRef;

  // A use of `v`'s C++ text (the generator's Emitter::ref).
  void ref(const Var* v) const {
    if (!m_.bound(v)) return check_dim_use(v);   // any other unbound Var is an internal error there
    PYPTO_USER_CHECK(!is_task_id(v->type) || m_.visible(v), stmt_span_.known() ? stmt_span_ : v->span,
                     "TaskId '" << v->name << "' (produced at line " << v->span.line
                                << ") is used outside the runtime scope that produced it: a TaskId lives in the "
                                   "PTO2_SCOPE it is produced in",
                     "keep the use in the producer's scope, or carry the TaskId out through a loop "
                     "(pl.yield_ / a reassigned name in a pl.range body)");
    const bool runtime_allocated = v->type->is<TensorType>() && m_.root_of(v).second >= 0;
    PYPTO_USER_CHECK(m_.visible(v) || !runtime_allocated, stmt_span_.known() ? stmt_span_ : v->span,
                     "'" << v->name << "' is used outside the runtime scope that produced it (line " << v->span.line
                         << "): the tensor the runtime allocated for it is reclaimed when that scope ends",
                     "create it before the scope with pl.create_tensor(...) and pass it as the Out argument, "
                     "or move this use into the scope");
    // Any other value: its C++ variable is declared inside the block (only values assigned,
    // loop-carried or yielded by an if at the top level of a block, or of a block nested there,
    // get an exit slot).
    PYPTO_USER_CHECK(m_.visible(v), stmt_span_.known() ? stmt_span_ : v->span,
                     "'" << v->name << "' (defined at line " << v->span.line
                         << ") is used outside the runtime scope that defines it: its C++ variable is declared "
                            "inside that PTO2_SCOPE block",
                     "move this use into the scope, or define the value at the top level of the scope (not in a "
                     "loop or if body there)");
  }

  static std::string line_of(const Span& s) {
    if (!s.known()) return "an unknown line";
    return (s.file.empty() ? std::string("line ") : s.file + ":") + std::to_string(s.line);
  }

  // deps= / a barrier's manual_dep_edges: each user edge must name a live TaskId.
  void user_edges(const std::vector<ExprPtr>& edges, const Span& where) const {
    std::unordered_set<const Var*> seen;
    for (auto& d : edges) {
      const Var* v = as_var(d);
      if (!v || !seen.insert(v).second) continue;
      if (m_.resolve(v)) continue;
      throw DependencyError("deps= names TaskId '" + v->name + "' (produced at " + line_of(v->span) +
                                "), whose scope has already closed here",
                            where,
                            "a TaskId lives in the PTO2_SCOPE it is produced in (every pl.range / pl.parallel / if "
                            "body is one): keep the consumer in the producer's scope, or carry the TaskId out through "
                            "the loop");
    }
  }

  // tensor.create results whose shape is known at the start of a block are declared there.
  static const Call* as_create(const StmtPtr& s) {
    auto* a = s->as<AssignStmt>();
    auto* c = a ? a->value->as<Call>() : nullptr;
    return (c && c->is_op && c->callee == "tensor.create") ? c : nullptr;
  }

  // The generator's emit_block_body: the block's stamped allocations first (Function::
  // batched_creates, StampAllocationBatches decided which), in `block`, then the statements.
  void hoist_creates(const StmtPtr& body, int block) {
    for (auto& st : flatten_stmts(body)) {
      const Call* c = as_create(st);
      const Var* v = c ? st->as<AssignStmt>()->var.get() : nullptr;
      if (!c || batched_.count(v) || !batch_stamps_.count(v)) continue;
      op(*c, *v);
      runtime_tensor(v, block);
      batched_.insert(v);
    }
  }

  void block_body(const StmtPtr& body) {
    hoist_creates(body, m_.current());
    for (auto& st : flatten_stmts(body)) stmt(st);
  }
  // A dynamic dimension the body names must come from a tensor parameter's shape.
  void check_dim_use(const Var* v) const {
    if (declared_dims_.count(v)) return;
    bool is_dyn = false;
    for (auto& dd : program_.dynamic_dims) is_dyn = is_dyn || dd.get() == v;
    PYPTO_USER_CHECK(!is_dyn, v->span,
                     "dynamic dimension '" << v->name << "' is used in orchestration function '" << fn_.name
                                           << "' but none of its tensor parameters declares it",
                     "declare a parameter whose shape uses '" + v->name + "', e.g. pl.Tensor[[" + v->name +
                         ", 16], pl.FP32]");
  }

  // The runtime's tensors have at most kMaxTensorRank dims (PTO2_MAX_DIMS): a rank-9 parameter
  // or pl.create_tensor compiled and failed at run time with an unlocated "invalid rank" (fuzz28).
  static void tensor_rank(const TypePtr& t, const std::string& what, const Span& span) {
    auto* tt = t ? t->as<TensorType>() : nullptr;
    if (!tt || tt->shape.size() <= kMaxTensorRank) return;
    throw UserError(what + " is a tensor of rank " + std::to_string(tt->shape.size()) +
                        ": the runtime's tensors have at most " + std::to_string(kMaxTensorRank) + " dimensions",
                    span, "merge axes (pl.reshape) to at most " + std::to_string(kMaxTensorRank) + " dimensions");
  }

  void no_task_id_tensor(DataType d, const Span& span) const {
    if (d != DataType::TASK_ID) return;
    throw UserError(std::string("a tensor of ") + to_string(d) + " elements cannot be created in orchestration code", span,
                    "TaskIds live in pl.array.create(N, pl.TASK_ID), not in tensors");
  }

  static bool value_array(const TypePtr& t) {
    auto* a = t->as<ArrayType>();
    return a && a->dtype != DataType::TASK_ID;
  }
  // Tensors, scalars and (§13) arrays of numbers / bools.
  static bool carry_type_ok(const TypePtr& t) { return t->is<TensorType>() || t->is<ScalarType>() || value_array(t); }

  void stmt(const StmtPtr& s) {
    if (!s->is<SeqStmts>()) stmt_span_ = s->span;
    switch (s->kind) {
      case NodeKind::SeqStmts:
        for (auto& c : s->as<SeqStmts>()->stmts) stmt(c);
        return;
      case NodeKind::AssignStmt: {
        auto* a = s->as<AssignStmt>();
        assign(*a);
        exit_value(a->var.get(), a->var);   // when it is read after its runtime scope
        return;
      }
      case NodeKind::EvalStmt: {
        const ExprPtr& e = s->as<EvalStmt>()->expr;
        auto* c = e->as<Call>();
        if (c && c->is_op && c->callee == "system.assert") {   // pto2_assert(condition, ...)
          exprs_.check(c->args.at(0));
          return;
        }
        PYPTO_USER_CHECK(e->is<Submit>() || (c && !c->is_op), s->span,
                         "this expression statement has no effect in an orchestration function",
                         "assign the result of an op to a variable");
        task(*e, nullptr);
        return;
      }
      case NodeKind::ForStmt: loop(*s->as<ForStmt>()); return;
      case NodeKind::IfStmt: branch(*s->as<IfStmt>()); return;
      case NodeKind::YieldStmt: yield(*s->as<YieldStmt>()); return;
      case NodeKind::RuntimeScopeStmt: runtime_scope(*s->as<RuntimeScopeStmt>()); return;
      case NodeKind::ReturnStmt: return;
      case NodeKind::ScopeStmt:   // outlined by OutlineIncoreScopes / OutlineClusterScopes
#define PYPTO_EXPR_NODE(Name) case NodeKind::Name:   // no expression is a statement
#include "pypto/ir/node_kinds.def"
        PYPTO_CHECK(false, "VerifyOrchestrationProgram: unexpected statement " << to_string(s->kind));
    }
  }

  void runtime_scope(const RuntimeScopeStmt& s) {
    // A MANUAL scope's allocations are declared before its block (the generator's hoisting).
    if (s.mode == RuntimeScopeMode::Manual) hoist_creates(s.body, m_.current());
    // TaskIds the following yield carries out are declared before the block (ResolveTaskIds'
    // stamp, as the generator's emit_runtime_scope prints them).
    for (const ScopeTaskIdCarry& c : s.carried_task_ids) {
      m_.declare(c.var.get());
      hoisted_.insert(c.var.get());
    }
    // Loop carries read after the block get an exit slot declared before it (the generator's
    // emit_runtime_scope); the loop result names that slot after the block.
    std::vector<const Var*> exits;
    for (const VarPtr& value : s.exit_values) {
      // The loop / if the value comes from, through nested scopes; its value must outlive the
      // outermost block it leaves (visited first, so an inner block does not override it).
      ScopeCarriedValue c = LocateScopeExit(s, *value);
      while (auto* inner = c.stmt->as<RuntimeScopeStmt>()) c = LocateScopeExit(*inner, *value);
      exit_carries_.emplace(c.carry, m_.current());
      exits.push_back(c.result);
    }
    m_.push();
    block_body(s.body);
    m_.pop();
    for (const Var* rv : exits) {
      if (rv->type->is<TensorType>()) m_.redeclare_with_aliases(rv);   // the generator reuses its name
      else m_.declare(rv);
      if (rv->type->is<ArrayType>()) m_.declare(arrays_.Backing(rv));   // later versions: in the exit slot
    }
  }

  // A pl.create_tensor result: declared in `block`, its storage the runtime's, owned by the
  // PTO2_SCOPE open there (alloc_tensors) and reclaimed when that scope ends.
  void runtime_tensor(const Var* v, int block) {
    m_.bind(v, {block}, {v, 0});
    allocated_in_[{v, 0}] = {block};
  }

  // The storage `v` names: its root, or for a view (slice, reshape, transpose) its base's.
  OrchestrationScopeModel::Root storage_root(const Var* v) const {
    OrchestrationScopeModel::Root r = m_.root_of(v);
    for (auto it = storage_of_.find(r); it != storage_of_.end(); it = storage_of_.find(r)) r = it->second;
    return r;
  }

  // A loop carry, if result or assigned value that leaves its runtime scope through an exit slot
  // must not hold a tensor the runtime allocated inside that scope (reclaimed when the scope ends).
  void exit_value(const Var* carry, const ExprPtr& value) const {
    auto it = exit_carries_.find(carry);
    const Var* v = as_var(value);
    if (it == exit_carries_.end() || !v || !m_.bound(v)) return;
    const OrchestrationScopeModel::Root storage = storage_root(v);
    auto alloc = allocated_in_.find(storage);
    if (storage.second < 0 || alloc == allocated_in_.end() || m_.outlives(alloc->second, it->second)) return;
    const std::string view = storage == m_.root_of(v) ? "" : "a view of ";
    const std::string what =
        carry == v ? "'" + carry->name + "' is read after the runtime scope that defines it, but it is " + view
                   : std::string(carry->is<IterArg>() ? "loop-carried '" : "if result '") + carry->name +
                         "' is read after the runtime scope around its " + (carry->is<IterArg>() ? "loop" : "if") +
                         ", but the value it takes here is " + view;
    throw UserError(what + "a tensor the runtime allocated inside that scope: it is reclaimed when the scope ends",
                    value->span.known() ? value->span : stmt_span_,
                    "create it before the scope with pl.create_tensor(...) and pass it as the Out argument");
  }

  void assign(const AssignStmt& a) {
    const ExprPtr& value = a.value;
    const Var* var = a.var.get();
    tensor_rank(var->type, "'" + var->name + "'", value->span);
    if (auto* c = value->as<Call>()) {
      if (!c->is_op) return task(*c, var);
      if (c->callee == "tensor.create" && batched_.count(var)) return;
      PYPTO_USER_CHECK(SupportedOrchestrationOps().count(c->callee), value->span,
                       "operation '" << c->callee << "' is not supported in an orchestration function",
                       "tile operations belong in kernels (FunctionType.InCore / AIC / AIV); orchestration supports "
                       "tensor.create/read/write/slice/reshape/transpose/dim/assemble");
      op(*c, *var);
      if (c->callee == "tensor.create") runtime_tensor(var, m_.current());
      if (!m_.bound(var)) m_.declare(var);
      if (c->callee == "tensor.slice" && c->args.size() > 2 && c->args[2]->is<MakeTuple>()) {
        views_[m_.root_of(var)] = View{m_.root_of(as_var(c->args[0])), c->args[2]->as<MakeTuple>()->elements};
      }
      const bool view = c->callee == "tensor.slice" || c->callee == "tensor.reshape" || c->callee == "tensor.transpose";
      if (const Var* base = view && !c->args.empty() ? as_var(c->args[0]) : nullptr) {
        storage_of_[m_.root_of(var)] = storage_root(base);
      }
      return;
    }
    if (value->is<Submit>()) return task(*value, var);
    if (auto* g = value->as<TupleGetItem>()) return tuple_element(var, *g);
    if (auto* src = as_var(value)) return m_.alias(var, src);
    if (value->is<MakeTuple>()) {
      throw UserError("tuple values are not supported in orchestration functions", value->span,
                      "unpack the results of a multi-output call directly: a, b = self.kernel(...)");
    }
    PYPTO_USER_CHECK(a.var->type->is<ScalarType>(), value->span, "unsupported assignment in an orchestration function",
                     "");
    exprs_.check(value);
    m_.declare(var);
  }

  // tensor.assemble(target, source, offs): `source` must be `target`'s view at `offs`, written
  // in place (orchestration code cannot copy tensor data).
  void in_place_assemble(const Call& c) const {
    const Var* target = as_var(c.args[0]);
    const Var* source = as_var(c.args[1]);
    auto* offs = c.args.size() > 2 ? c.args[2]->as<MakeTuple>() : nullptr;
    if (!offs) return;   // an internal error in the generator
    auto it = views_.find(m_.root_of(source));
    bool in_place = it != views_.end() && it->second.base == m_.root_of(target) &&
                    it->second.offsets.size() == offs->elements.size();
    for (size_t i = 0; in_place && i < offs->elements.size(); ++i) {
      in_place = structural_equal(it->second.offsets[i], offs->elements[i]);
    }
    PYPTO_USER_CHECK(in_place, c.span,
                     "tensor.assemble: '" << source->name << "' is not a view of '" << target->name
                                          << "' at these offsets, and orchestration code cannot copy tensor data",
                     "write the block in place: v = pl.tensor.slice(" + target->name + ", shape, offsets); "
                         "v = self.kernel(..., v); " + target->name + " = pl.tensor.assemble(" + target->name +
                         ", v, offsets)");
  }

  void tuple_element(const Var* target, const TupleGetItem& g) {
    const Var* tv = as_var(g.tuple);
    auto it = tv ? tuples_.find(tv) : tuples_.end();
    if (it == tuples_.end()) return;   // an internal error in the generator
    size_t i = static_cast<size_t>(g.index);
    if (i < it->second.size()) return m_.bind(target, it->second[i].first, it->second[i].second);
    if (!hoisted_.count(target)) m_.declare(target);   // the TaskId of a pl.submit
  }

  void tensor_arg(const Call& c, size_t i) const {
    const Var* v = i < c.args.size() ? as_var(c.args[i]) : nullptr;
    PYPTO_USER_CHECK(v, c.span, c.callee << ": argument " << i << " must be a tensor variable",
                     "assign it to a variable first");
  }

  void list_exprs(const Call& c, size_t i) const {
    if (i >= c.args.size()) return;
    if (auto* t = c.args[i]->as<MakeTuple>()) {
      for (auto& x : t->elements) exprs_.check(x);
    }
  }

  void op(const Call& c, const Var& result) {
    const std::string& name = c.callee;
    if (name == "tensor.create") {
      list_exprs(c, 0);
      if (auto* tt = result.type->as<TensorType>()) no_task_id_tensor(tt->dtype, c.span);
    } else if (name == "tensor.read" || name == "tensor.write") {
      tensor_arg(c, 0);
      ref(as_var(c.args[0]));
      list_exprs(c, 1);
      if (name == "tensor.write" && c.args.size() > 2) exprs_.check(c.args[2]);   // the stored value
      // The written tensor itself (codegen binds the result to it), as tensor.assemble's: a use
      // after the runtime scope of the write is a use of the tensor.
      if (name == "tensor.write") m_.alias(&result, as_var(c.args[0]));
    } else if (name == "tensor.slice") {
      tensor_arg(c, 0);
      ref(as_var(c.args[0]));
      list_exprs(c, 1);
      list_exprs(c, 2);
      if (c.args.size() > 3) list_exprs(c, 3);   // valid_shape (§10): metadata, not emitted
    } else if (name == "tensor.transpose") {
      tensor_arg(c, 0);
      ref(as_var(c.args[0]));
    } else if (name == "tensor.reshape") {
      tensor_arg(c, 0);
      ref(as_var(c.args[0]));
      list_exprs(c, 1);
    } else if (name == "tensor.dim") {
      tensor_arg(c, 0);
    } else if (name == "tensor.assemble") {
      tensor_arg(c, 0);
      tensor_arg(c, 1);
      in_place_assemble(c);
      m_.alias(&result, as_var(c.args[0]));
    } else if (name == "system.task_dummy") {
      user_edges(c.manual_dep_edges, c.span);
      m_.declare(&result);
    } else if (name == "array.get_element") {
      const Var* arr = c.args.empty() ? nullptr : as_var(c.args[0]);
      PYPTO_USER_CHECK(arr, c.span, name << " needs an array variable", "");
      if (is_task_id(arr->type)) {
        PYPTO_USER_CHECK(m_.resolve(arr), c.span, "TaskId array '" << arr->name << "' is out of scope here", "");
      }
      if (c.args.size() > 1) exprs_.check(c.args[1]);
      ref(arr);
    } else if (name == "array.update_element") {
      const Var* arr = c.args.empty() ? nullptr : as_var(c.args[0]);
      PYPTO_USER_CHECK(arr, c.span, name << " needs an array variable", "");
      if (const Var* v = c.args.size() > 2 ? as_var(c.args[2]) : nullptr; v && is_task_id(v->type)) {
        std::optional<TaskIdRef> r = m_.resolve(v);
        PYPTO_USER_CHECK(r && r->array_size == 0, c.span, "TaskId '" << v->name << "' is out of scope here", "");
      } else if (c.args.size() > 2) {
        exprs_.check(c.args[2]);
      }
      if (c.args.size() > 1) exprs_.check(c.args[1]);
      ref(arr);
      m_.alias(&result, arr);
    }
  }

  // A task's results are the tensors it writes back: result r of kernel `f` names none of its
  // Out / InOut parameters (a number, a tile, a tensor of its own), located at its return.
  [[noreturn]] static void returns_no_parameter(const Function& f, size_t r) {
    const ReturnStmt* ret = FindReturn(f);
    const bool has_value = ret && r < ret->values.size();
    // (A Var's span is where it was defined: name the return statement instead.)
    const Span where = has_value && !as_var(ret->values[r]) ? ret->values[r]->span : ret ? ret->span : f.span;
    const bool number = has_value && ret->values[r]->type->is<ScalarType>();
    throw UserError("'" + f.name + "' returns " + (number ? "a number" : "a value") + " (result " + std::to_string(r) +
                        ") that is none of its pl.Out / pl.InOut tensor parameters: a task's results are the "
                        "tensors it writes",
                    where,
                    number ? "write the number into a pl.Out tensor parameter (pl.tensor.write, or store a tile), "
                             "return that parameter, and read it in the orchestration"
                           : "store the value into a pl.Out tensor parameter and return that parameter");
  }

  void task(const Expr& e, const Var* result) {
    const Call* call = e.as<Call>();
    const Submit* sub = e.as<Submit>();
    const std::string& callee = call ? call->callee : sub->callee;
    const auto& args = call ? call->args : sub->args;
    FunctionPtr f = program_.get(callee);
    PYPTO_CHECK(f, "call to unknown function '" << callee << "'");
    PYPTO_USER_CHECK(f->is_kernel() || f->type == FunctionType::Group, e.span,
                     "orchestration function '" << fn_.name << "' calls '" << callee << "', "
                                                << (std::strchr("AEIOU", to_string(f->type)[0]) ? "an " : "a ")
                                                << to_string(f->type) << " function, which cannot be submitted as a task",
                     "call kernels (FunctionType.InCore / AIC / AIV) or Group functions from an Orchestration function");
    for (auto& a : args) {
      if (a->type->is<TensorType>() && as_var(a)) ref(as_var(a));
    }
    for (size_t i = 0; i < args.size() && i < f->params.size(); ++i) {
      if (args[i]->type->is<TensorType>()) continue;
      auto* pt = f->params[i]->type->as<ScalarType>();
      PYPTO_USER_CHECK(pt && pt->dtype != DataType::TASK_ID, args[i]->span,
                       "argument " << i << " of '" << callee << "' must be a tensor or a number",
                       "pass TaskIds through deps=, not as kernel arguments");
      exprs_.check(args[i]);
    }
    for (size_t i = args.size(); i < f->params.size(); ++i) {   // runtime-allocated trailing outputs
      if (auto* tt = f->params[i]->type->as<TensorType>()) {
        tensor_rank(f->params[i]->type, "the output '" + f->params[i]->name + "' of '" + callee + "'", e.span);
        for (auto& d : tt->shape) exprs_.check(d);
        no_task_id_tensor(tt->dtype, e.span);
      }
    }
    if (sub && sub->core_num) exprs_.check(sub->core_num);
    if (sub) user_edges(sub->deps, e.span);
    if (sub && sub->predicate) predicate(*sub->predicate);
    if (f->type == FunctionType::Group) group(*f);
    const std::vector<int64_t>& rets = f->returned_params;   // StampReturnedParams
    for (size_t r = 0; r < f->return_types.size(); ++r) {
      if (r >= rets.size() || rets[r] < 0) returns_no_parameter(*f, r);
    }
    // Results alias the arguments they write back; a runtime-allocated output lives in the
    // block of the submission's TaskOutputTensors.
    if (!result) return;
    std::vector<TupleElement> elems;
    for (size_t r = 0; r < f->return_types.size(); ++r) {
      const int64_t p = rets[r];
      if (static_cast<size_t>(p) >= args.size()) {
        elems.push_back({{m_.current()}, {&e, p}});
        allocated_in_[{&e, p}] = {m_.current()};
      } else if (const Var* v = as_var(args[p])) {
        elems.push_back({m_.binding_of(v), m_.root_of(v)});
      }
    }
    if (result->type->is<TupleType>()) {
      tuples_[result] = std::move(elems);
    } else if (!elems.empty()) {
      m_.bind(result, elems[0].first, elems[0].second);
    }
  }

  void predicate(const Expr& p) const {
    auto* cmp = p.as<BinaryExpr>();
    PYPTO_USER_CHECK(cmp, p.span, "predicate= must be a comparison", kPredicateHelp);
    const Call* read = predicate_read(cmp->a);
    if (read) {
      PYPTO_USER_CHECK(int_literal(cmp->b), p.span, "predicate= must compare with an integer literal", kPredicateHelp);
    } else {
      read = predicate_read(cmp->b);
      PYPTO_USER_CHECK(read && int_literal(cmp->a), p.span,
                       "predicate= must compare one tensor element with an integer literal", kPredicateHelp);
    }
    const Var* t = read->args.empty() ? nullptr : as_var(read->args[0]);
    PYPTO_USER_CHECK(t && t->type->is<TensorType>(), read->span, "the predicate operand must be a named tensor",
                     kPredicateHelp);
    list_exprs(*read, 1);
    ref(t);
    PYPTO_USER_CHECK(is_comparison(cmp->op), p.span, "predicate= must compare with one of == != > < >= <=",
                     kPredicateHelp);
  }

  // A Group body calls one AIC kernel and/or one AIV kernel (MixedKernels): StampGroupKernels
  // decides (GroupKernelsProblemOf says why a Group has no stamped kernels); this reports it.
  void group(const Function& g) const {
    if (!g.group_kernels.empty()) return;
    const std::optional<GroupKernelsProblem> p = GroupKernelsProblemOf(program_, g);
    if (!p) return;
    switch (p->kind) {
      case GroupKernelsProblem::Kind::NotAKernel:
        throw UserError("Group function '" + g.name + "' calls '" + p->callee + "', which is not a kernel", g.span,
                        "a Group body calls one AIC kernel and one AIV kernel");
      case GroupKernelsProblem::Kind::TwoOnOneCore: {
        const std::string ct = to_string(p->core);
        throw UserError("Group function '" + g.name + "' calls two " + ct + " kernels ('" + p->other + "' and '" +
                            p->callee + "')",
                        g.span, "a Group body calls exactly one AIC kernel and one AIV kernel");
      }
      case GroupKernelsProblem::Kind::NoKernel:
        throw UserError("Group function '" + g.name + "' must call an AIC kernel and/or an AIV kernel", g.span,
                        "AIC: FunctionType.AIC or an InCore kernel using Left/Right/Acc/Mat tiles; AIV otherwise");
    }
  }

  void loop(const ForStmt& f) {
    std::vector<bool> printed;   // which yield values the generator prints
    std::vector<std::optional<OrchestrationScopeModel::Blocks>> results(f.iter_args.size());   // slot arrays
    for (size_t i = 0; i < f.iter_args.size(); ++i) {
      const IterArg* ia = f.iter_args[i].get();
      PYPTO_CHECK(i < f.carries.size(), "ForStmt lacks carry " << i << " (ClassifyIterArgCarry did not run)");
      const LoopCarry& carry = f.carries[i];
      printed.push_back(carry.rebind);
      if (!carry.rebind) {
        exprs_.check(ia->init);
        if (const Var* init = as_var(ia->init)) {
          m_.alias(ia, init);
        } else {
          m_.bind(ia, m_.capture(ia->init));
        }
      } else if (is_task_id(ia->type)) {
        results[i] = task_id_carry(f, i, carry.slots);
      } else if (const Var* init = value_array(ia->type) ? as_var(ia->init) : nullptr) {
        m_.alias(ia, init);   // §13: the carry is its init's C array (updated in place)
      } else {
        PYPTO_USER_CHECK(carry_type_ok(ia->type), ia->span,
                         "loop-carried value '" << ia->name << "' has an unsupported type", "");
        exprs_.check(ia->init);
        exit_value(ia, ia->init);
        m_.declare(ia);
      }
    }
    exprs_.check(f.start);
    exprs_.check(f.stop);
    exprs_.check(f.step);
    m_.push();
    m_.declare(f.loop_var.get());
    yields_.push_back(Yields{printed, &f});
    block_body(f.body);
    yields_.pop_back();
    m_.pop();
    for (size_t k = 0; k < f.return_vars.size() && k < f.iter_args.size(); ++k) {
      if (results[k]) {
        m_.bind(f.return_vars[k].get(), *results[k]);
      } else {
        m_.alias(f.return_vars[k].get(), f.iter_args[k].get());
      }
    }
  }

  // The generator's DependencyEmitter::declare_task_id_carry; returns the blocks of a slot array
  // the loop's result names (nullopt: the result names what the iter_arg names).
  std::optional<OrchestrationScopeModel::Blocks> task_id_carry(const ForStmt& loop, size_t i, int64_t array_size) {
    const IterArg* ia = loop.iter_args[i].get();
    const Var* init_var = as_var(ia->init);
    std::optional<TaskIdRef> init = init_var ? m_.resolve(init_var) : std::nullopt;
    if (init_var) {
      PYPTO_USER_CHECK(init, ia->span,
                       "loop-carried TaskId '" << ia->name << "' starts from '" << init_var->name
                                               << "', whose scope has already closed here",
                       "produce the initial TaskId in the scope that contains the loop");
    } else {
      exprs_.check(ia->init);
    }
    if (ia->type->is<ArrayType>()) {
      if (init) m_.bind(ia, init->blocks);   // updated in place: the init's storage
      return std::nullopt;
    }
    if (array_size == 0) {
      PYPTO_USER_CHECK(!init || init->array_size == 0, ia->span,
                       "loop-carried TaskId '" << ia->name << "' is a scalar but starts from an array of TaskIds",
                       "join the array first (prev = pl.system.task_dummy(deps=[prev]): one TaskId after "
                       "all of them), carry the array itself, or read one slot: prev = tids[k]");
      if (!hoisted_.count(ia)) m_.declare(ia);
      return std::nullopt;
    }
    if (!hoisted_.count(ia)) m_.declare(ia);
    // A pl.parallel loop's iterations overwrite every slot, so its init may be an array of any
    // size (the N*M of nested pl.parallel loops in an enclosing pl.range). A sequential loop's
    // array holds its init until the first yield.
    if (init && init->array_size > 0 && loop.for_kind == ForKind::Parallel && loop.trip_count == 0) {
      PYPTO_USER_CHECK(init->array_size == array_size, loop.span,
                       "this pl.parallel loop runs no iteration, so TaskId '" << ia->name << "' keeps its "
                           << init->array_size << " TaskIds from before the loop, but its iterations end with "
                           << array_size << " (an inner loop's)",
                       "remove the loop, or give it at least one iteration");
    }
    if (init && init->array_size > 0 && loop.for_kind != ForKind::Parallel) {
      PYPTO_USER_CHECK(init->array_size == array_size, loop.span,
                       "loop-carried TaskId '" << ia->name << "' is an array of " << array_size
                                               << " slots but starts from an array of " << init->array_size,
                       "a pl.range loop carries as many TaskIds as each iteration leaves: join them before the "
                       "loop, prev = pl.system.task_dummy(deps=[prev]), or carry the two fans through two names");
    }
    OrchestrationScopeModel::Blocks backing = m_.binding_of(ia);
    // Each pl.parallel iteration reads the value from before the loop.
    if (loop.for_kind == ForKind::Parallel) m_.bind(ia, init ? init->blocks : m_.capture(ia->init));
    return backing;
  }

  void branch(const IfStmt& s) {
    std::vector<const Var*> shared_arrays;   // the pre-if array itself (the generator binds it after the if)
    for (size_t k = 0; k < s.return_vars.size(); ++k) {
      const Var* rv = s.return_vars[k].get();
      if (!carry_type_ok(rv->type) && !rv->type->is<ArrayType>()) {
        throw UserError("if result '" + rv->name + "' has an unsupported type", rv->span, "");
      }
      if (rv->type->is<ArrayType>() && !arrays_.IfResultIsPhi(s, k)) {
        shared_arrays.push_back(rv);
      } else if (!hoisted_.count(rv)) {
        m_.declare(rv);   // a phi array of any dtype is declared before the if
      }
    }
    exprs_.check(s.cond);
    yields_.push_back(Yields{std::vector<bool>(s.return_vars.size(), true), nullptr, &s});
    m_.push();
    block_body(s.then_body);
    m_.pop();
    if (s.else_body) {
      m_.push();
      block_body(s.else_body);
      m_.pop();
    }
    yields_.pop_back();
    for (const Var* rv : shared_arrays) m_.alias(rv, arrays_.Backing(rv));
  }

  void yield(const YieldStmt& y) {
    PYPTO_CHECK(!yields_.empty(), "yield outside a loop or if");
    const Yields& t = yields_.back();
    for (size_t i = 0; i < y.values.size() && i < t.printed.size(); ++i) {
      if (!t.printed[i]) continue;
      const Var* carry = t.loop ? t.loop->iter_args[i].get() : nullptr;
      const bool array_carry = carry && is_task_id(carry->type) &&
                               (carry->type->is<ArrayType>() || t.loop->carries.at(i).slots > 0);
      if (array_carry) {   // the generator's emit_carry_yield
        const Var* v = as_var(y.values[i]);
        if (!v) continue;   // an internal error in the generator
        std::optional<TaskIdRef> r = m_.resolve(v);
        PYPTO_USER_CHECK(r, y.values[i]->span, "yielded TaskId '" << v->name << "' is out of scope here", "");
        if (r->array_size > 0) {
          if (t.loop->for_kind == ForKind::Parallel && !carry->type->is<ArrayType>()) {
            parallel_array_yield(*t.loop, *carry, t.loop->carries.at(i).slots, r->array_size);
          }
          continue;
        }
        PYPTO_USER_CHECK(t.loop->for_kind == ForKind::Parallel, y.values[i]->span,
                         "loop-carried TaskId '" << carry->name << "' is an array here but its next value is one TaskId",
                         "");
        continue;
      }
      exprs_.check(y.values[i]);
      if (carry) exit_value(carry, y.values[i]);
      if (t.branch) exit_value(t.branch->return_vars[i].get(), y.values[i]);
    }
  }

  // pl.parallel `loop` carries TaskId `carry` as `slots` = trip count x M (ClassifyIterArgCarry)
  // and an iteration ends with an array of `m` (an inner pl.parallel loop's): the generator copies
  // it into that iteration's M slots, so m must be M. It is not when the array is the value from
  // before the loop (a branch yielding the carry while the loop sits in a pl.range that carries
  // it): every iteration would keep all of it, which no fixed number of slots holds (fuzz28:
  // the generator copied the array over the others' slots and tasks after the loop lost edges).
  static void parallel_array_yield(const ForStmt& loop, const Var& carry, int64_t slots, int64_t m) {
    const int64_t per = slots / std::max<int64_t>(loop.trip_count, 1);
    PYPTO_USER_CHECK(per == m, loop.span,
                     "TaskId '" << carry.name << "' is carried through this pl.parallel loop as "
                                << (per <= 1 ? std::string("one TaskId") : std::to_string(per) + " TaskIds")
                                << " per iteration, but an iteration ends with an array of " << m << " TaskIds",
                     "join the TaskIds into one before the loop carries them: "
                     "prev = pl.system.task_dummy(deps=[prev]) before the end of the iteration");
  }

  struct Yields {
    std::vector<bool> printed;
    const ForStmt* loop;              // null for an if
    const IfStmt* branch = nullptr;   // null for a loop
  };

  const Program& program_;
  const Function& fn_;
  ScalarExprChecker exprs_;
  std::unordered_set<const Var*> declared_dims_;
  std::vector<Yields> yields_;
  OrchestrationScopeModel m_;
  ArrayBacking arrays_;   // which C array each pl.Array version lives in (the generator's)
  Span stmt_span_;
  std::unordered_set<const Var*> batched_;        // creates hoisted so far
  std::unordered_set<const Var*> batch_stamps_;   // Function::batched_creates (StampAllocationBatches)
  std::unordered_set<const Var*> hoisted_;          // TaskIds declared before their PTO2_SCOPE
  std::unordered_map<const Var*, int> exit_carries_;   // iter_arg -> the block its exit slot is in
  using TupleElement = std::pair<OrchestrationScopeModel::Blocks, OrchestrationScopeModel::Root>;
  std::unordered_map<const Var*, std::vector<TupleElement>> tuples_;
  struct View {
    OrchestrationScopeModel::Root base;
    std::vector<ExprPtr> offsets;
  };
  std::map<OrchestrationScopeModel::Root, View> views_;   // tensor.slice results by C++ identity
  // A view's root -> the root of the tensor it views (tensor.slice, reshape, transpose).
  std::map<OrchestrationScopeModel::Root, OrchestrationScopeModel::Root> storage_of_;
  // A runtime-allocated tensor (a submission's output, a pl.create_tensor) -> the block it was
  // allocated in (its storage lives until the PTO2_SCOPE open there ends).
  std::map<OrchestrationScopeModel::Root, OrchestrationScopeModel::Blocks> allocated_in_;
};

}  // namespace

namespace {

// The name of a tensor parameter of `fn` that the returned value `v` rebinds (`y` for a Var `y`,
// `y_1`, `y_2` ...: the parser's SSA versions of it), else nullptr.
const std::string* RebindsParameterName(const Function& fn, const ExprPtr& v) {
  const Var* var = as_var(v);
  if (!var) return nullptr;
  std::string base = var->name;
  for (const VarPtr& p : fn.params) {
    if (!p->type->is<TensorType>() || p.get() == var) continue;
    const std::string& n = p->name;
    if (base == n) return &p->name;
    if (base.size() > n.size() + 1 && base.compare(0, n.size(), n) == 0 && base[n.size()] == '_' &&
        base.find_first_not_of("0123456789", n.size() + 1) == std::string::npos)
      return &p->name;
  }
  return nullptr;
}

// An orchestration function's results are the tensors it writes back to its caller: its pl.Out /
// pl.InOut (or In) parameters. A tensor it allocates would reach no caller (the run's results
// are the caller's arrays): refused at the return instead of silently dropped.
void VerifyReturnsParameters(const Program& program, const Function& fn) {
  const ReturnStmt* ret = FindReturn(fn);
  if (!ret) return;
  const std::vector<int> params = ExplicitReturnedParamIndices(fn);
  for (size_t k = 0; k < ret->values.size(); ++k) {
    // (A number is left alone: it is how a program whose results are scalars keeps them live for
    // the code generator; the entry's call returns its Out tensors.)
    if ((k < params.size() && params[k] >= 0) || ret->values[k]->type->is<ScalarType>()) continue;
    // A kernel that never stores to its pl.Out parameter (its tensor-level result went to an
    // output of its own) is the root cause: name it first.
    for (const FunctionPtr& f : program.functions) {
      if (f->is_kernel() && f->body) VerifyKernelOutParamsWritten(program, *f);
    }
    const ExprPtr& v = ret->values[k];
    std::string help =
        "declare a parameter `out: pl.Out[pl.Tensor[...]]`, pass it as the kernel's output instead of the allocated "
        "tensor, and return it";
    // `y = pl.add(x, x)` in a pl.at body, `y` a pl.Out parameter: the name now holds a new tensor
    // (the help above asked for a parameter the user had; session 54 tester G #4).
    if (const std::string* param = RebindsParameterName(fn, v)) {
      help = "'" + *param + "' is a parameter, but `" + *param + " = ...` binds the name to a new tensor instead of "
             "writing into it: write the value into the parameter with `" + *param + " = pl.assemble(" + *param +
             ", value, [0, ...])`, or pass " + *param + " as the kernel's output";
    }
    throw UserError("orchestration function '" + fn.name + "' returns a tensor it allocates (result " +
                        std::to_string(k) +
                        "): its results are the tensors it writes into its parameters, so this value would be lost",
                    as_var(v) ? ret->span : v->span, help);
  }
}

}  // namespace

void VerifyOrchestrationFunction(const ProgramPtr& program, const std::string& func_name) {
  PYPTO_CHECK(program, "VerifyOrchestrationFunction: null program");
  FunctionPtr fn = program->get(func_name);
  PYPTO_USER_CHECK(fn, program->span, "program '" << program->name << "' has no function named '" << func_name << "'",
                   "pass the name of an @pl.function(type=pl.FunctionType.Orchestration) method");
  PYPTO_USER_CHECK(fn->type == FunctionType::Orchestration, fn->span,
                   "function '" << func_name << "' is " << to_string(fn->type) << ", not Orchestration",
                   "generate orchestration code for an @pl.function(type=pl.FunctionType.Orchestration) method");
  auto problems = VerifyCodegenPreconditions(program, func_name);
  if (!problems.empty()) {
    std::ostringstream os;
    for (auto& p : problems) os << "\n  " << p;
    PYPTO_CHECK(false, "orchestration codegen preconditions do not hold (run the default pipeline first):" << os.str());
  }
  VerifyArrayVersions(*fn);   // anchor_features §13: no read of an array version an update replaced
  VerifyReturnsParameters(*program, *fn);
  OrchestrationVerifier(*program, *fn).Run();
}

Pass VerifyOrchestrationProgram() {
  return Pass{"VerifyOrchestrationProgram",
          {IRProperty::ReturnParamsExplicit, IRProperty::CallDirectionsDerived, IRProperty::RuntimeScopesMaterialized,
           IRProperty::IterArgCarryClassified, IRProperty::TaskIdsResolved, IRProperty::ReturnedParamsStamped,
           IRProperty::TaskStatementsCounted, IRProperty::AllocationBatchesStamped, IRProperty::ArrayBackingsStamped,
           IRProperty::ScopeExitsStamped, IRProperty::NonNegativeVarsStamped, IRProperty::CallOperandsStamped,
           IRProperty::CountedLoopsStamped},
          {IRProperty::OrchestrationProgramVerified},
          [](const ProgramPtr& program) {
            for (const FunctionPtr& fn : program->functions) {
              if (fn->type == FunctionType::Orchestration && fn->level != Level::HOST) VerifyOrchestrationFunction(program, fn->name);
            }
            return program;
          },
          /*invalidated=*/{}};
}

}  // namespace pypto::transforms
