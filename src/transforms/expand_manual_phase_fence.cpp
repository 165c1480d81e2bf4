// ExpandManualPhaseFence
//
// What: in an orchestration function, finds a pl.parallel(M) loop whose body Submits each
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
//   Nested pl.parallel loops under the phase loop (range > parallel(N) > parallel(M) [> ...],
//   the phase loop possibly skipping them under an `if`) carry N*M slots; every inner read of
//   the carry is the value from before the outer pl.parallel, so one barrier before it serves
//   every inner task: N*M + N*M*c edges per phase instead of (N*M)^2 * c.
//   An iteration that keeps the carry (an if branch yielding it: range > parallel > if: ...,
//   range > parallel > parallel > if: submit) would keep the whole phase before, N*M slots its
//   own slots cannot hold; it keeps the barrier instead (one TaskId, the same order), so such a
//   loop is always fenced, profitable or not. So is one with a chain per iteration
//   (range > parallel > range: submit): the chain's one-TaskId carry cannot start from the N
//   slots either, and starts from the barrier (only its first iteration reads that value).
//   Every scope qualifies: a `pl.manual_scope()`, a HOST-level orchestration (every edge explicit,
//   submit_barrier), and AUTO scopes, where explicit deps= edges are linked on top of the
//   automatic ones: the barrier has no tensor, so the automatic edges are the same, and the
//   explicit order is the same (the pass first covered manual scopes only, with no reason
//   recorded; the name stayed).
// Input invariants: CallDirectionsDerived (runs after DeriveCallDirections).
// Output invariants: same semantics: every rewritten consumer still waits for every slot.
// Conservative: any other use of the array inside the loop (an inner pl.parallel carrying it
//   counts when its own uses qualify; Submits and kept yields in if branches count), an
//   array.update_element in the loop, a dynamic trip count, or an unprofitable shape without a
//   kept carry leaves the direct deps in place.
// Why: a phase fence of N producers and M consumers is N*M dependency edges; the runtime
//   cost of fan-in/fan-out is per edge.
#include <algorithm>
#include <cstdint>
#include <limits>

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

// a * b, saturated (trip-count products only size the profitability test).
int64_t mul_sat(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<int64_t>::max() / 4 : r;
}

// The Submit an AssignStmt binds, or null.
const Submit* submit_of(const StmtPtr& s) {
  auto* a = s->as<AssignStmt>();
  return a ? a->value->as<Submit>() : nullptr;
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

  StmtPtr mutate_(const ForStmt* op, const StmtPtr& self) override {
    loops_.push_back(op);
    StmtPtr s = IRMutator::mutate_(op, self);
    loops_.pop_back();
    if (op->for_kind != ForKind::Parallel) return s;
    auto* f = s->as<ForStmt>();
    const int64_t m = trip_count(*f);
    if (m <= 0) return s;
    for (size_t i = 0; i < f->iter_args.size(); ++i) {
      auto [array, n] = stable_array(*op, *f, i);
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
  std::pair<ExprPtr, int64_t> stable_array(const ForStmt& orig, const ForStmt& f, size_t i) {
    const IterArg* ia = f.iter_args[i].get();
    if (!ia->type->is<ScalarType>() || !is_task_id(ia->type)) return {nullptr, 0};
    const ExprPtr& init = ia->init;
    if (auto* at = init->type->as<ArrayType>()) return {init, at->size};
    // case1: init is the iter_arg of the enclosing sequential loop whose yield is our result
    // (directly, or through an if whose other branch keeps the iter_arg: a phase that skips us).
    if (loops_.empty()) return {nullptr, 0};
    const ForStmt* outer = loops_.back();
    if (outer->for_kind != ForKind::Sequential) return {nullptr, 0};
    const YieldStmt* y = trailing_yield(outer->body);
    for (size_t j = 0; j < outer->iter_args.size(); ++j) {
      const IterArg* phase = outer->iter_args[j].get();
      if (phase != as_var(init) || !y || j >= y->values.size()) continue;
      if (carries_only(*outer, as_var(y->values[j]), orig.return_vars[i].get(), phase, 0)) {
        return {init, slots(f, i)};
      }
    }
    return {nullptr, 0};
  }

  // Is `v` (yielded by `outer`) our `result`, or an if result (of an if in `outer`'s body) each
  // of whose branches yields `result` or `phase` — with `result` flowing in at least once?
  static bool carries_only(const ForStmt& outer, const Var* v, const Var* result, const Var* phase, int depth) {
    if (!v || depth > 8) return false;
    if (v == result) return true;
    for (const StmtPtr& s : flatten_stmts(outer.body)) {
      auto* br = s->as<IfStmt>();
      if (!br) continue;
      for (size_t k = 0; k < br->return_vars.size(); ++k) {
        if (br->return_vars[k].get() != v) continue;
        bool from_result = false;
        for (const StmtPtr& body : {br->then_body, br->else_body}) {
          const YieldStmt* by = body ? trailing_yield(body) : nullptr;
          const Var* b = by && k < by->values.size() ? as_var(by->values[k]) : nullptr;
          if (b == phase) continue;
          if (!carries_only(outer, b, result, phase, depth + 1)) return false;
          from_result = true;
        }
        return from_result;
      }
    }
    return false;
  }

  // The TaskIds pl.parallel `f`'s carry i keeps (as ClassifyIterArgCarry will stamp it): one per
  // iteration, or M per iteration when each ends with an inner pl.parallel's array of M.
  static int64_t slots(const ForStmt& f, size_t i) {
    const int64_t n = trip_count(f);
    const YieldStmt* y = trailing_yield(f.body);
    const int64_t per = yielded_slots(f.body, y && i < y->values.size() ? as_var(y->values[i]) : nullptr, 0);
    return per > 0 ? mul_sat(std::max<int64_t>(n, 1), per) : n;
  }

  // The slots of TaskId `v` defined in `body`: an inner pl.parallel's carry result, or an if
  // result one of whose branches yields one (range > parallel > if: parallel). 0 for one TaskId.
  static int64_t yielded_slots(const StmtPtr& body, const Var* v, int depth) {
    if (!v || depth > 8) return 0;
    for (const StmtPtr& s : flatten_stmts(body)) {
      if (auto* g = s->as<ForStmt>(); g && g->for_kind == ForKind::Parallel && trip_count(*g) >= 0) {
        for (size_t k = 0; k < g->return_vars.size(); ++k) {
          if (g->return_vars[k].get() == v) return slots(*g, k);
        }
      }
      auto* br = s->as<IfStmt>();
      if (!br) continue;
      for (size_t k = 0; k < br->return_vars.size(); ++k) {
        if (br->return_vars[k].get() != v) continue;
        int64_t m = 0;
        for (const StmtPtr& b : {br->then_body, br->else_body}) {
          const YieldStmt* by = b ? trailing_yield(b) : nullptr;
          if (by && k < by->values.size()) m = std::max(m, yielded_slots(b, as_var(by->values[k]), depth + 1));
        }
        return m;
      }
    }
    return 0;
  }

  // The tasks of one iteration of a pl.parallel loop that wait on `carry` (its TaskId iter_arg,
  // or an array it never updates; every read of it in `body` is the value from before the loop):
  // each Submit in `body` or in an if branch in it naming it in deps=, plus every task of a
  // pl.parallel loop there whose TaskId carry starts from it (that carry reads the same value),
  // recursively. An if branch that yields `carry` itself (an iteration that keeps the value
  // from before the loop: range > parallel > if: ...) sets `kept`. -1 when it has any other use.
  static int64_t consumers(const StmtPtr& body, const Var* carry, bool& kept) {
    UseCounter all;
    all.v = carry;
    all.visit_stmt(body);
    if (all.updates) return -1;
    int64_t tasks = 0;
    int seen = 0;
    if (!count_uses(body, carry, false, tasks, seen, kept)) return -1;
    return seen == all.uses ? tasks : -1;
  }

  // consumers' walk over the statements of `body` (`branch`: an if branch, whose trailing
  // yield may keep `carry`); false on a use it does not rewrite.
  static bool count_uses(const StmtPtr& body, const Var* carry, bool branch, int64_t& tasks, int& seen, bool& kept) {
    for (const StmtPtr& s : flatten_stmts(body)) {
      if (const Submit* sub = submit_of(s)) {
        int uses = 0;
        for (auto& d : sub->deps) uses += as_var(d) == carry;
        seen += uses;
        tasks = std::min(tasks + (uses > 0), std::numeric_limits<int64_t>::max() / 4);
        continue;
      }
      if (auto* br = s->as<IfStmt>()) {
        for (const StmtPtr& b : {br->then_body, br->else_body}) {
          if (b && !count_uses(b, carry, true, tasks, seen, kept)) return false;
        }
        continue;
      }
      if (auto* y = s->as<YieldStmt>(); y && branch) {
        for (auto& v : y->values) {
          if (as_var(v) != carry) continue;
          if (!carry->type->is<ScalarType>()) return false;   // an array kept whole: no TaskId replaces it
          ++seen;
          kept = true;
        }
        continue;
      }
      auto* g = s->as<ForStmt>();
      if (!g) continue;
      for (const IterArgPtr& ia : g->iter_args) {
        if (as_var(ia->init) != carry) continue;
        ++seen;
        if (g->for_kind == ForKind::Sequential && ia->type->is<ScalarType>()) {
          // A chain per iteration (range > parallel > range: submit): only its first task reads
          // the value from before the loop, the whole phase before, which its one-TaskId carry
          // cannot start from; it starts from the barrier instead.
          kept = true;
          continue;
        }
        const int64_t trips = trip_count(*g);
        if (g->for_kind != ForKind::Parallel || trips < 0) return false;
        const int64_t inner = consumers(g->body, ia.get(), kept);
        if (inner < 0) return false;
        tasks = std::min(tasks + mul_sat(trips, inner), std::numeric_limits<int64_t>::max() / 4);
      }
    }
    return true;
  }

  // `body` with every deps= entry `carry` (see consumers) naming `fence` instead, in the if
  // branches and nested pl.parallel loops too, and every if branch that keeps `carry` yielding
  // `fence` (it waits on exactly that value: the same order, in one TaskId where the kept value
  // was the whole array of the phase before, which the iteration's slots cannot hold). The
  // carries and the loops' own yields stay.
  static StmtPtr redirect(const StmtPtr& body, const Var* carry, const VarPtr& fence, bool branch = false) {
    std::vector<StmtPtr> nb;
    for (const StmtPtr& s : flatten_stmts(body)) {
      if (const Submit* sub = submit_of(s)) {
        std::vector<ExprPtr> deps;
        for (auto& d : sub->deps) deps.push_back(as_var(d) == carry ? ExprPtr(fence) : d);
        auto* tt = sub->type->as<TupleType>();
        std::vector<TypePtr> rets(tt->elements.begin(), tt->elements.end() - 1);
        ExprPtr ns = Submit::make(sub->callee, sub->args, rets, deps, sub->core_num, sub->sync_start,
                                  sub->allow_early_resolve, sub->timing_slot, sub->predicate, sub->arg_directions,
                                  sub->span);
        if (!sub->dump_vars.empty()) ns = with_dump_vars(ns, sub->dump_vars);
        auto* a = s->as<AssignStmt>();
        nb.push_back(AssignStmt::make(a->var, ns, a->span));
        continue;
      }
      if (auto* br = s->as<IfStmt>()) {
        StmtPtr then_body = redirect(br->then_body, carry, fence, true);
        StmtPtr else_body = br->else_body ? redirect(br->else_body, carry, fence, true) : nullptr;
        nb.push_back(IfStmt::make(br->cond, then_body, else_body, br->return_vars, br->span));
        continue;
      }
      if (auto* y = s->as<YieldStmt>(); y && branch) {
        std::vector<ExprPtr> values;
        for (auto& v : y->values) values.push_back(as_var(v) == carry ? ExprPtr(fence) : v);
        nb.push_back(YieldStmt::make(values, y->span));
        continue;
      }
      auto* g = s->as<ForStmt>();
      if (g && g->for_kind == ForKind::Sequential) {
        nb.push_back(start_from(s, *g, carry, fence));
        continue;
      }
      StmtPtr inner = g ? g->body : nullptr;
      if (g) {
        for (const IterArgPtr& ia : g->iter_args) {
          if (as_var(ia->init) == carry) inner = redirect(inner, ia.get(), fence);
        }
      }
      if (!g || inner == g->body) {
        nb.push_back(s);
        continue;
      }
      nb.push_back(ForStmt::make(g->loop_var, g->start, g->stop, g->step, g->iter_args, inner, g->return_vars,
                                 g->for_kind, g->attrs, g->span)
                       ->with_typed_fields_of(*g));
    }
    return make_seq(nb, body->span);
  }

  // Sequential loop `g` (statement `s`) with its scalar TaskId carries that start from `carry`
  // starting from `fence` instead (see count_uses); its body names its own carry, not `carry`.
  static StmtPtr start_from(const StmtPtr& s, const ForStmt& g, const Var* carry, const VarPtr& fence) {
    struct Rebind : IRMutator {
      Rebind(const VarPtr& from, const VarPtr& to) { var_remap_[from.get()] = {from, to}; }
    };
    for (const IterArgPtr& ia : g.iter_args) {
      if (as_var(ia->init) == carry && ia->type->is<ScalarType>()) {
        return Rebind(as_var_ptr(ia->init), fence).mutate_stmt(s);
      }
    }
    return s;
  }

  // Rewrites the deps= entries `carry` of the tasks in f's body (see consumers) to one barrier
  // on `array` (N slots) placed before the loop, when that is safe and profitable, or needed:
  // an iteration that keeps the carry (an if branch yielding it) would keep all N slots, which
  // its own slots cannot hold (ClassifyIterArgCarry / the verifiers refuse that); it keeps the
  // barrier instead.
  StmtPtr try_fence(const ForStmt& f, const Var* carry, const ExprPtr& array, int64_t n, int64_t m) {
    if (!carry || n < 1) return nullptr;
    bool kept = false;
    const int64_t per_iteration = consumers(f.body, carry, kept);
    if (per_iteration < 0 || (per_iteration == 0 && !kept) || (n < 2 && !kept)) return nullptr;
    const int64_t tasks = mul_sat(m, per_iteration);
    const int64_t direct = mul_sat(n, tasks), fenced = n + tasks;
    if (!kept && direct <= fenced) return nullptr;

    const Span& sp = f.span;
    VarPtr fence = Var::make(carry->name + "_fence", ScalarType::make(DataType::TASK_ID), sp);
    Attrs attrs;
    attrs["manual_dep_edges"] = std::vector<ExprPtr>{array};
    attrs["dummy_task"] = true;
    StmtPtr barrier = AssignStmt::make(fence, Call::make_op("system.task_dummy", {}, attrs, sp), sp);
    auto loop = ForStmt::make(f.loop_var, f.start, f.stop, f.step, f.iter_args, redirect(f.body, carry, fence),
                              f.return_vars, f.for_kind, f.attrs, f.span)
                    ->with_typed_fields_of(f);
    return make_seq({barrier, loop}, sp);
  }

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
