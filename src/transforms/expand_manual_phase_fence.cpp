// ExpandManualPhaseFence
//
// What: inside a `pl.manual_scope()`, finds a pl.parallel(M) loop whose body Submits each
//   depend on the same *stable full array* of N TaskIds — the loop's own TaskId carry whose
//   init is the array carry of the enclosing sequential loop (the case1 phase fence), or an
//   Array[N, TASK_ID] value the loop never updates — and, when N*M*c > N + M*c (c Submits per
//   iteration), inserts one barrier before the loop and makes those Submits depend on it:
//       for phase in pl.range(P):                    for phase in pl.range(P):
//           for b in pl.parallel(4):          ==>        fence = pl.system.task_dummy(deps=[prev])
//               o, prev = pl.submit(k, ..., deps=[prev]) for b in pl.parallel(4):
//                                                            o, prev = pl.submit(k, ..., deps=[fence])
//   The barrier is a system.task_dummy call whose manual_dep_edges name the original array
//   (the only op call allowed to carry that attr) and dummy_task=True.
//   tids[N] -> barrier -> consumers[M]: N + M edges instead of N * M.
// Input invariants: CallDirectionsDerived (runs after DeriveCallDirections).
// Output invariants: same semantics: every rewritten consumer still waits for every slot.
// Conservative: any other use of the array inside the loop, an array.update_element in the
//   loop, a dynamic trip count, or an unprofitable shape leaves the direct deps in place.
// Why: a phase fence of N producers and M consumers is N*M dependency edges; the runtime
//   cost of fan-in/fan-out is per edge.
#include <unordered_set>

#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"
#include "pypto/ir/visitor.h"
#include "pypto/transforms/passes.h"

namespace pypto::transforms {

using namespace ir;

namespace {

// Ascending loops only (a fence slot per iteration in order).
int64_t trip_count(const ForStmt& f) {
  auto* c = f.step->as<ConstInt>();
  return c && c->value > 0 ? StaticTripCount(f) : -1;
}

// Counts uses of `v` in a statement, and array.update_element calls.
struct UseCounter : IRVisitor {
  const Var* v;
  int uses = 0;
  bool updates = false;
  void visit_(const Var* op) override { uses += op == v; }
  void visit_(const IterArg* op) override { uses += op == v; }
  void visit_(const Call* op) override {
    updates = updates || (op->is_op && op->callee == "array.update_element");
    IRVisitor::visit_(op);
  }
};

class FenceExpander : public IRMutator {
 public:
  FenceExpander() { statements_only_ = true; }   // rewrites loops only
  StmtPtr mutate_(const RuntimeScopeStmt* op, const StmtPtr& self) override {
    manual_ += op->mode == RuntimeScopeMode::Manual;
    StmtPtr s = IRMutator::mutate_(op, self);
    manual_ -= op->mode == RuntimeScopeMode::Manual;
    return s;
  }

  StmtPtr mutate_(const ForStmt* op, const StmtPtr& self) override {
    loops_.push_back(op);
    StmtPtr s = IRMutator::mutate_(op, self);
    loops_.pop_back();
    if (manual_ == 0 || op->for_kind != ForKind::Parallel) return s;
    auto* f = s->as<ForStmt>();
    const int64_t m = trip_count(*f);
    if (m <= 0) return s;
    for (size_t i = 0; i < f->iter_args.size(); ++i) {
      auto [array, n] = stable_array(*op, *f, i, m);
      if (array) {
        if (StmtPtr r = try_fence(*f, f->iter_args[i].get(), array, n, m)) return r;
      }
    }
    // An Array[N, TASK_ID] defined before the loop and named directly in deps=.
    for (auto& st : flatten_stmts(f->body)) {
      auto* a = st->as<AssignStmt>();
      auto* sub = a ? a->value->as<Submit>() : nullptr;
      if (!sub) continue;
      for (auto& d : sub->deps) {
        auto* at = d->type->as<ArrayType>();
        if (!at) continue;
        if (StmtPtr r = try_fence(*f, as_var(d), d, at->size, m)) return r;
      }
    }
    return s;
  }

 private:
  // The array the in-loop reads of iter_arg i stand for: its init, when that is an array.
  // Returns (the array expr, N) or (null, 0).
  std::pair<ExprPtr, int64_t> stable_array(const ForStmt& orig, const ForStmt& f, size_t i, int64_t m) {
    const IterArg* ia = f.iter_args[i].get();
    if (!ia->type->is<ScalarType>() || !is_task_id(ia->type)) return {nullptr, 0};
    const ExprPtr& init = ia->init;
    if (auto* at = init->type->as<ArrayType>()) return {init, at->size};
    // case1: init is the iter_arg of the enclosing sequential loop whose yield is our result.
    if (loops_.empty()) return {nullptr, 0};
    const ForStmt* outer = loops_.back();
    if (outer->for_kind != ForKind::Sequential) return {nullptr, 0};
    const YieldStmt* y = trailing_yield(outer->body);
    for (size_t j = 0; j < outer->iter_args.size(); ++j) {
      if (outer->iter_args[j].get() != as_var(init)) continue;
      if (y && j < y->values.size() && as_var(y->values[j]) == orig.return_vars[i].get()) return {init, m};
    }
    return {nullptr, 0};
  }

  // Rewrites the deps= entries `carry` of the Submits directly in f's body to one barrier on
  // `array` (N slots) placed before the loop, when that is safe and profitable.
  StmtPtr try_fence(const ForStmt& f, const Var* carry, const ExprPtr& array, int64_t n, int64_t m) {
    if (!carry || n < 2) return nullptr;
    // Every use of the carry in the body must be a deps= entry of a Submit directly in it.
    std::vector<StmtPtr> body = flatten_stmts(f.body);
    UseCounter all;
    all.v = carry;
    all.visit_stmt(f.body);
    if (all.updates) return nullptr;
    int consumers = 0, dep_uses = 0;
    for (auto& s : body) {
      auto* a = s->as<AssignStmt>();
      auto* sub = a ? a->value->as<Submit>() : nullptr;
      if (!sub) continue;
      bool uses = false;
      for (auto& d : sub->deps) {
        if (as_var(d) == carry) {
          ++dep_uses;
          uses = true;
        }
      }
      consumers += uses;
    }
    if (consumers == 0 || dep_uses != all.uses) return nullptr;
    const int64_t direct = n * m * consumers, fenced = n + m * consumers;
    if (direct <= fenced) return nullptr;

    const Span& sp = f.span;
    VarPtr fence = Var::make(carry->name + "_fence", ScalarType::make(DataType::TASK_ID), sp);
    Attrs attrs;
    attrs["manual_dep_edges"] = std::vector<ExprPtr>{array};
    attrs["dummy_task"] = true;
    StmtPtr barrier = AssignStmt::make(fence, Call::make_op("system.task_dummy", {}, attrs, sp), sp);
    std::vector<StmtPtr> nb;
    for (auto& s : body) {
      auto* a = s->as<AssignStmt>();
      auto* sub = a ? a->value->as<Submit>() : nullptr;
      if (!sub) {
        nb.push_back(s);
        continue;
      }
      std::vector<ExprPtr> deps;
      for (auto& d : sub->deps) deps.push_back(as_var(d) == carry ? ExprPtr(fence) : d);
      auto* tt = sub->type->as<TupleType>();
      std::vector<TypePtr> rets(tt->elements.begin(), tt->elements.end() - 1);
      ExprPtr ns = Submit::make(sub->callee, sub->args, rets, deps, sub->core_num, sub->sync_start,
                                sub->allow_early_resolve, sub->timing_slot, sub->predicate, sub->arg_directions, sub->span);
      if (!sub->dump_vars.empty()) ns = with_dump_vars(ns, sub->dump_vars);
      nb.push_back(AssignStmt::make(a->var, ns, a->span));
    }
    auto loop = ForStmt::make(f.loop_var, f.start, f.stop, f.step, f.iter_args, make_seq(nb, f.body->span), f.return_vars,
                              f.for_kind, f.attrs, f.span)
                    ->with_typed_fields_of(f);
    return make_seq({barrier, loop}, sp);
  }

  int manual_ = 0;
  std::vector<const ForStmt*> loops_;
};

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    if (fn->type != FunctionType::Orchestration) continue;
    FenceExpander x;
    FunctionPtr nf = x.mutate_function(fn);
    if (nf != fn) out = out->with_function(nf);
  }
  return out;
}

}  // namespace

Pass ExpandManualPhaseFence() {
  return Pass{"ExpandManualPhaseFence", {IRProperty::CallDirectionsDerived}, {IRProperty::PhaseFencesExpanded}, Run, /*invalidated=*/{}};
}

}  // namespace pypto::transforms
