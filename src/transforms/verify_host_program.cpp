// VerifyHostProgram
//
// What: checks every HOST-level Orchestration function of a prepared program against what the
//   HOST code generator can express; the program comes back unchanged, or the first violation
//   is a UserError at the offending node. VerifyHostFunction (verify_program.h) checks one
//   function; GenerateHostOrchestration calls it first, so both report the same error.
//       @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST)
//       def host_main(self, x, y: pl.Out[...]):     ==>  UserError "a HOST-level orchestration can
//           r = self.k(x, y)      # k is InCore           only submit chip-level Orchestration
//                                                         functions; 'k' is InCore"
//   A valid program ==> the same program (HostProgramVerified).
// Input invariants: the codegen preconditions (declared as the pass's required properties).
// Output invariants: HostProgramVerified; nothing changes.
// Why: program validity is decided by a pass, before any backend prints; the HOST generator
//   raises InternalError only.
//
// What the HOST code generator (src/codegen/host) can express, checked before it prints. The walk follows the generator's statement order and
// tracks the two facts its checks read: which Vars have a value at each point (definition
// before use, runtime scopes flattened) and which TaskId Vars stand for an array of handles
// (TaskId arrays and pl.parallel fences). Messages are the user-facing contract.
//
//   entry       the function exists, is a HOST-level Orchestration; no TaskId parameter
//   statements  submits, TaskId forms (task_invalid / task_dummy / arrays), Var copies, tuple
//               elements and scalar expressions; nothing else (no pl.at / tile ops)
//   submits     a chip-level Orchestration callee, every argument passed, only deps=, tensor
//               arguments are tensor Vars, results are the callee's tensor parameters
//   TaskIds     deps= entries are TaskIds; an array slot holds one TaskId; carries and yields
//               agree on one TaskId versus an array of them (and on the array's size)
#include <algorithm>
#include <map>
#include <sstream>
#include <unordered_set>
#include <vector>

#include "pypto/codegen/host.h"
#include "pypto/codegen/orchestration.h"
#include "pypto/ir/attrs.h"
#include "pypto/ir/error.h"
#include "pypto/transforms/passes.h"
#include "pypto/transforms/verifier.h"
#include "pypto/transforms/verify_program.h"
#include "verify_scalar_exprs.h"

namespace pypto::transforms {

using namespace ir;
using codegen::GetSSABaseName;

namespace {

const char* kHostHelp =
    "a HOST-level orchestration submits chip-level orchestration functions (pl.submit) and "
    "loops / branches over them; everything else belongs in the chip-level function";
const char* kDepsHelp =
    "deps= takes task ids from pl.submit, pl.system.task_dummy results, loop carries of them, "
    "TaskId array slots (tids[k]), TaskId arrays (pl.array.create(N, pl.TASK_ID)) or None";

bool is_tid_scalar(const TypePtr& t) {
  auto* s = t ? t->as<ScalarType>() : nullptr;
  return s && s->dtype == DataType::TASK_ID;
}

int64_t array_size_of(const TypePtr& t) {
  auto* at = t ? t->as<ArrayType>() : nullptr;
  return at ? at->size : 0;
}

class HostVerifier {
 public:
  HostVerifier(const Program& program, const Function& fn)
      : program_(program), fn_(fn), targets_(codegen::HostTargetIds(program)), exprs_(kHostWording) {
    exprs_.on_var = [this](const Var* v, const Span& span) { use(v, span); };
  }

  void Run() {
    for (auto& p : fn_.params) {
      has_value_.insert(p.get());
      if (auto* tt = p->type->as<TensorType>()) {
        for (auto& d : tt->shape) {
          if (const Var* sym = as_var(d)) has_value_.insert(sym);
        }
      }
    }
    for (auto& p : fn_.params) {
      PYPTO_USER_CHECK(!is_tid_scalar(p->type), p->span,
                       "HOST orchestration parameter '" << p->name << "' cannot be a TaskId", "");
      const auto* tt = p->type->as<TensorType>();
      PYPTO_USER_CHECK(!tt || tt->shape.size() <= 8, p->span,   // PTO2_MAX_DIMS, as the L2 verifier's check
                       "parameter '" << p->name << "' is a tensor of rank " << (tt ? tt->shape.size() : 0)
                                     << ": the runtime's tensors have at most 8 dimensions",
                       "merge axes (pl.reshape) to at most 8 dimensions");
    }
    stmt(fn_.body);
  }

 private:
  struct Target {
    int64_t array_size = 0;
    bool fence = false;   // a pl.parallel fence: one TaskId per iteration fills its slot
    bool phi = false;     // a TaskId phi array of an if: one TaskId fills every slot
    const ForStmt* loop = nullptr;   // the fence's loop (where a mismatch is reported)
  };

  void use(const Var* v, const Span& span) const {
    if (has_value_.count(v)) return;
    throw UserError("'" + GetSSABaseName(v->name) + "' has no value in this HOST-level orchestration", span,
                    "HOST orchestration code can use its parameters, loop variables and the results of pl.submit");
  }

  // Handles a TaskId Var stands for: an array's size, a fence's slots, 0 for one handle.
  int64_t handles(const Var* v) const {
    if (auto* at = v->type ? v->type->as<ArrayType>() : nullptr) return at->dtype == DataType::TASK_ID ? at->size : 0;
    auto it = fences_.find(v);
    return it == fences_.end() ? 0 : it->second;
  }

  void stmt(const StmtPtr& s) {
    if (!s) return;
    switch (s->kind) {
      case NodeKind::SeqStmts:
        for (auto& x : s->as<SeqStmts>()->stmts) stmt(x);
        return;
      case NodeKind::RuntimeScopeStmt: stmt(s->as<RuntimeScopeStmt>()->body); return;
      case NodeKind::AssignStmt: assign(*s->as<AssignStmt>()); return;
      case NodeKind::EvalStmt: {
        const ExprPtr& e = s->as<EvalStmt>()->expr;
        if (auto* c = e->as<Call>(); c && c->is_op && c->callee == "system.assert") {   // pto2_assert(condition, ...)
          exprs_.check(c->args.at(0));
          return;
        }
        if (!(e->is<Submit>() || (e->is<Call>() && !e->as<Call>()->is_op))) {
          throw UserError("this statement is not supported in a HOST-level orchestration", s->span, kHostHelp);
        }
        submit(*e, nullptr);
        return;
      }
      case NodeKind::ForStmt: loop(*s->as<ForStmt>()); return;
      case NodeKind::IfStmt: branch(*s->as<IfStmt>()); return;
      case NodeKind::YieldStmt: {
        auto* y = s->as<YieldStmt>();
        PYPTO_CHECK(!targets_stack_.empty(), "HOST codegen: yield outside a loop or branch");
        const std::vector<Target> targets = targets_stack_.back();
        PYPTO_CHECK(targets.size() == y->values.size(), "HOST codegen: yield arity mismatch");
        for (size_t k = 0; k < targets.size(); ++k) yield(targets[k], y->values[k]);
        return;
      }
      case NodeKind::ReturnStmt: return;
      case NodeKind::ScopeStmt:   // outlined by OutlineIncoreScopes / OutlineClusterScopes
#define PYPTO_EXPR_NODE(Name) case NodeKind::Name:   // no expression is a statement
#include "pypto/ir/node_kinds.def"
        PYPTO_CHECK(false, "VerifyHostProgram: unexpected statement " << to_string(s->kind));
    }
  }

  void assign(const AssignStmt& a) {
    const Var* var = a.var.get();
    const ExprPtr& v = a.value;
    if (v->is<Submit>()) return submit(*v, var);
    if (auto* c = v->as<Call>()) {
      if (!c->is_op) return submit(*v, var);
      if (c->callee == "system.task_invalid" || c->callee == "array.create") {
        has_value_.insert(var);
        return;
      }
      if (c->callee == "system.task_dummy") {
        dep_waits(c->manual_dep_edges);
        has_value_.insert(var);
        return;
      }
      if (c->callee == "array.get_element" || c->callee == "array.update_element") return array_op(var, *c);
      throw UserError("'" + c->callee + "' is not supported in a HOST-level orchestration", v->span, kHostHelp);
    }
    if (v->is<TupleGetItem>()) {
      has_value_.insert(var);
      return;
    }
    if (auto* src = as_var(v)) {
      use(src, v->span);
      has_value_.insert(var);
      if (auto it = fences_.find(src); it != fences_.end()) fences_[var] = it->second;
      return;
    }
    auto* st = var->type ? var->type->as<ScalarType>() : nullptr;
    if (st && st->dtype != DataType::TASK_ID) {
      exprs_.check(v);
      has_value_.insert(var);
      return;
    }
    throw UserError("this assignment is not supported in a HOST-level orchestration", a.span, kHostHelp);
  }

  void array_op(const Var* result, const Call& call) {
    const Var* arr = as_var(call.args.at(0));
    PYPTO_USER_CHECK(arr && arr->type && arr->type->is<ArrayType>(), call.span, call.callee << " needs an array variable",
                     "name the array: tids = pl.array.create(N, pl.TASK_ID), then tids[k]");
    use(arr, call.span);
    if (call.callee == "array.update_element") {
      const ExprPtr& value = call.args.at(2);
      if (auto* v = as_var(value); v && is_task_id(v->type)) {
        PYPTO_USER_CHECK(handles(v) == 0, value->span,
                         "a TaskId array slot holds one TaskId, but '" << GetSSABaseName(v->name)
                                                                       << "' is an array of them",
                         "store one task id: tids[k] = tid");
        use(v, value->span);
      } else {
        exprs_.check(value);
      }
    }
    exprs_.check(call.args.at(1));
    has_value_.insert(result);
  }

  void dep_waits(const std::vector<ExprPtr>& deps) const {
    for (auto& d : deps) {
      auto* dv = as_var(d);
      PYPTO_USER_CHECK(dv && is_task_id(d->type), d->span, "this deps= entry is not a TaskId", kDepsHelp);
      use(dv, d->span);
    }
  }

  void submit(const Expr& e, const Var* result) {
    const std::vector<ExprPtr>* args = nullptr;
    std::string callee;
    auto* sub = e.as<Submit>();
    if (sub) {
      callee = sub->callee;
      args = &sub->args;
      PYPTO_USER_CHECK(!sub->core_num && !sub->sync_start, e.span,
                       "pl.spmd_submit is not available in a HOST-level orchestration",
                       "a HOST-level orchestration submits to the L3 runtime, which supports only deps=");
      PYPTO_USER_CHECK(!sub->allow_early_resolve && sub->timing_slot < 0 && !sub->predicate, e.span,
                       "only deps= is supported by pl.submit in a HOST-level orchestration",
                       "a HOST-level orchestration submits to the L3 runtime, which supports only deps=");
    } else {
      callee = e.as<Call>()->callee;
      args = &e.as<Call>()->args;
    }
    FunctionPtr fn = program_.get(callee);
    PYPTO_USER_CHECK(fn && targets_.count(callee), e.span,
                     "a HOST-level orchestration can only submit chip-level Orchestration functions; '"
                         << callee << "' is " << (fn ? to_string(fn->type) : std::string("unknown")),
                     "wrap the kernel calls in an @pl.function(type=pl.FunctionType.Orchestration) function and "
                     "submit that");
    PYPTO_USER_CHECK(args->size() == fn->params.size(), e.span,
                     "the HOST-level submit of '" << callee << "' must pass every argument (" << fn->params.size()
                                                  << "), got " << args->size(),
                     "the L3 runtime allocates no output tensors: pass the pl.Out arguments too");
    std::vector<bool> tensor_arg(args->size(), false);
    for (size_t i = 0; i < args->size(); ++i) {
      const ExprPtr& x = (*args)[i];
      if (fn->params[i]->type->is<TensorType>()) {
        auto* xv = as_var(x);
        PYPTO_USER_CHECK(xv && x->type && x->type->is<TensorType>(), x->span,
                         "argument " << i << " of '" << callee << "' must be a tensor", "");
        use(xv, x->span);
        tensor_arg[i] = true;
      } else if (fn->params[i]->type->is<ScalarType>()) {
        exprs_.check(x);
      } else {
        throw UserError("parameter '" + fn->params[i]->name + "' of '" + callee +
                            "' has a type a next-level task cannot take",
                        x->span, "pass tensors and scalars");
      }
    }
    if (sub) dep_waits(sub->deps);
    // The callee's results alias the arguments passed for the parameters it returns.
    for (size_t k = 0; k < fn->return_types.size(); ++k) {
      const int64_t idx = k < fn->returned_params.size() ? fn->returned_params[k] : -1;   // StampReturnedParams
      PYPTO_USER_CHECK(idx >= 0 && tensor_arg[idx], e.span,
                       "result " << k << " of '" << callee << "' is not one of its tensor parameters",
                       "a chip-level orchestration submitted from HOST must return its pl.Out / pl.InOut parameters");
    }
    // A Submit's (or multi-result Call's) value is a tuple: only its elements have values.
    if (result && !(sub || fn->return_types.size() != 1)) has_value_.insert(result);
  }

  void carry_type(const Var* v, const Span& span) const {
    const TypePtr& t = v->type;
    if (t && (t->is<ArrayType>() || t->is<TensorType>() || t->is<ScalarType>())) return;
    throw UserError("loop / branch carry '" + GetSSABaseName(v->name) +
                        "' has a type HOST-level orchestration code cannot carry",
                    span, "carry task ids, tensors or scalars");
  }

  void loop(const ForStmt& f) {
    std::vector<Target> carries;
    for (size_t i = 0; i < f.iter_args.size(); ++i) {
      const IterArg* ia = f.iter_args[i].get();
      const Var* init_var = as_var(ia->init);
      const int64_t fence = i < f.carries.size() ? f.carries[i].slots : 0;
      if (fence > 0 && is_tid_scalar(ia->type)) {
        const int64_t n = fence;
        exprs_.check(ia->init);
        const int64_t init_n = init_var ? handles(init_var) : 0;
        // A pl.parallel fence's iterations overwrite every slot: its init may be of any size (the
        // N*M of nested pl.parallel loops in an enclosing pl.range), as at L2.
        PYPTO_USER_CHECK(init_n == 0 || init_n == n || f.for_kind != ForKind::Parallel || f.trip_count > 0, f.span,
                         "this pl.parallel loop runs no iteration, so TaskId '" << GetSSABaseName(ia->name)
                             << "' keeps its " << init_n << " TaskIds from before the loop, but its iterations end with "
                             << n << " (an inner loop's)",
                         "remove the loop, or give it at least one iteration");
        PYPTO_USER_CHECK(init_n == 0 || init_n == n || f.for_kind == ForKind::Parallel, f.span,
                         "loop-carried TaskId '" << GetSSABaseName(ia->name) << "' is an array of " << n
                                                 << " slots but starts from an array of " << init_n,
                         "a pl.range loop carries as many TaskIds as each iteration leaves: join them before the "
                         "loop, prev = pl.system.task_dummy(deps=[prev]), or carry the two fans through two names");
        if (f.for_kind == ForKind::Parallel) {
          if (init_n) fences_[ia] = init_n;
        } else {
          fences_[ia] = n;
        }
        if (i < f.return_vars.size()) fences_[f.return_vars[i].get()] = n;
        has_value_.insert(ia);
        carries.push_back(Target{n, f.for_kind == ForKind::Parallel, false, &f});
        continue;
      }
      exprs_.check(ia->init);
      PYPTO_USER_CHECK(!(init_var && handles(init_var) > 0 && is_tid_scalar(ia->type)), ia->span,
                       "loop-carried TaskId '" << GetSSABaseName(ia->name)
                                               << "' is a scalar but starts from an array of TaskIds",
                       "join the array first (prev = pl.system.task_dummy(deps=[prev]): one TaskId after "
                       "all of them), carry the array itself, or read one slot: prev = tids[k]");
      carry_type(ia, ia->span);
      has_value_.insert(ia);
      carries.push_back(Target{array_size_of(ia->type), false});
    }
    has_value_.insert(f.loop_var.get());
    exprs_.check(f.step);
    exprs_.check(f.start);
    exprs_.check(f.stop);
    targets_stack_.push_back(carries);
    stmt(f.body);
    targets_stack_.pop_back();
    for (size_t k = 0; k < f.return_vars.size() && k < carries.size(); ++k) has_value_.insert(f.return_vars[k].get());
  }

  void branch(const IfStmt& s) {
    std::vector<Target> carries;
    for (auto& rv : s.return_vars) {
      carry_type(rv.get(), rv->span);
      // A TaskId phi array: ResolveTaskIds stamps N slots when a branch yields a fence.
      const TaskIdInfo* info = is_tid_scalar(rv->type) ? fn_.task_id_info(rv.get()) : nullptr;
      if (info && info->slots > 0) {
        fences_[rv.get()] = info->slots;
        carries.push_back(Target{info->slots, false, true});
        continue;
      }
      carries.push_back(Target{array_size_of(rv->type), false});
    }
    targets_stack_.push_back(carries);
    exprs_.check(s.cond);
    stmt(s.then_body);
    stmt(s.else_body);
    targets_stack_.pop_back();
    for (auto& rv : s.return_vars) has_value_.insert(rv.get());
  }

  void yield(const Target& target, const ExprPtr& value) const {
    const Var* v = as_var(value);
    const bool value_is_array = (v ? handles(v) : 0) > 0 || (v && v->type && v->type->is<ArrayType>());
    exprs_.check(value);
    if (target.array_size == 0) {
      PYPTO_USER_CHECK(!value_is_array, value->span, "this yields an array of TaskIds where one TaskId is carried",
                       "join the array first (prev = pl.system.task_dummy(deps=[prev]): one TaskId after "
                       "all of them), carry the array itself, or read one slot: prev = tids[k]");
      return;
    }
    if (value_is_array) {
      // An inner pl.parallel(M)'s M handles go to this iteration's M slots of an outer
      // pl.parallel(N)'s N*M (ClassifyIterArgCarry); any other size has no slots to go to (the
      // value from before the loop, in a branch: the L2 verifier's parallel_array_yield).
      const int64_t m = v ? handles(v) : 0;
      const int64_t trips = target.loop ? std::max<int64_t>(target.loop->trip_count, 1) : 0;
      const int64_t per = trips > 0 ? target.array_size / trips : 0;
      PYPTO_USER_CHECK(m == 0 || !target.fence || per == m, target.loop ? target.loop->span : value->span,
                       "TaskId '" << GetSSABaseName(v->name) << "' is carried through this pl.parallel loop as "
                                  << (per <= 1 ? std::string("one TaskId") : std::to_string(per) + " TaskIds")
                                  << " per iteration, but an iteration ends with an array of " << m << " TaskIds",
                       "join the TaskIds into one before the loop carries them: "
                       "prev = pl.system.task_dummy(deps=[prev]) before the end of the iteration");
      return;
    }
    PYPTO_USER_CHECK(target.fence || target.phi, value->span, "this yields one TaskId where an array of them is carried",
                     "yield the array (after tids[k] = tid)");
  }

  const Program& program_;
  const Function& fn_;
  std::map<std::string, int> targets_;
  ScalarExprChecker exprs_;
  std::unordered_set<const Var*> has_value_;
  std::map<const Var*, int64_t> fences_;   // scalar TaskId Vars bound to a fence array
  std::vector<std::vector<Target>> targets_stack_;
};

}  // namespace

void VerifyHostFunction(const ProgramPtr& program, const std::string& func_name) {
  PYPTO_CHECK(program, "VerifyHostFunction: null program");
  FunctionPtr fn = program->get(func_name);
  PYPTO_USER_CHECK(fn, program->span, "program '" << program->name << "' has no function named '" << func_name << "'",
                   "pass the name of an @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST) method");
  PYPTO_USER_CHECK(fn->type == FunctionType::Orchestration && fn->level == Level::HOST, fn->span,
                   "function '" << func_name << "' is not a HOST-level Orchestration function",
                   "declare it with @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST); "
                   "chip-level orchestration goes through generate_orchestration");
  auto problems = VerifyCodegenPreconditions(program, func_name);
  if (!problems.empty()) {
    std::ostringstream os;
    for (auto& p : problems) os << "\n  " << p;
    PYPTO_CHECK(false, "HOST codegen preconditions do not hold (run the default pipeline first):" << os.str());
  }
  HostVerifier(*program, *fn).Run();
}

Pass VerifyHostProgram() {
  return Pass{"VerifyHostProgram",
          {IRProperty::ReturnParamsExplicit, IRProperty::CallDirectionsDerived, IRProperty::RuntimeScopesMaterialized,
           IRProperty::IterArgCarryClassified, IRProperty::TaskIdsResolved, IRProperty::ReturnedParamsStamped,
           IRProperty::TaskStatementsCounted, IRProperty::AllocationBatchesStamped, IRProperty::ArrayBackingsStamped,
           IRProperty::ScopeExitsStamped, IRProperty::NonNegativeVarsStamped, IRProperty::CountedLoopsStamped},
          {IRProperty::HostProgramVerified},
          [](const ProgramPtr& program) {
            for (const FunctionPtr& fn : program->functions) {
              if (fn->type == FunctionType::Orchestration && fn->level == Level::HOST) VerifyHostFunction(program, fn->name);
            }
            return program;
          },
          /*invalidated=*/{}};
}

}  // namespace pypto::transforms
