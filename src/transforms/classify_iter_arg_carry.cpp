// ClassifyIterArgCarry
//
// What: stamps ForStmt::carries on every ForStmt of an Orchestration function, for each
//   iter_arg i a LoopCarry:
//   - rebind (printed pl.rebind / pl.alias): true when the carry must be a materialised C++ variable
//     re-assigned by the loop's yield; false when the yielded value is provably the carry
//     itself — the same tensor storage, written in place through Out/InOut arguments
//     (a call result aliasing the carry, a Var copy, tensor.assemble onto it, an inner loop
//     carry or if result that is itself the carry). A non-rebound carry is just another name
//     for its init value: no variable, no yield assignment.
//         for i, (acc,) in pl.range(4, init_values=(x,)):     carries=(pl.alias,)
//             acc2 = self.k(a, acc)       # k(a, c: InOut) returns c
//             pl.yield_(acc2)
//   - slots N (printed pl.slots(N)), for a rebound TaskId carry of a pl.parallel loop with a
//     literal trip count N (ForStmt::trip_count) (the carry becomes `PTO2TaskId arr[N]`, one slot per iteration),
//     N*M when each iteration yields an array of M (an inner pl.parallel(M) loop's, directly, through
//     a pl.range or an if: iteration i fills slots [i*M, (i+1)*M); at most kMaxNestedTaskIdSlots),
//     and for a sequential loop whose yielded TaskId is such an array carry's result (same N),
//     directly or through an if result (a phi array of N, see slots_of).
// Input invariants: ReturnParamsExplicit (call-result aliasing reads the callee's ReturnStmt),
//   StaticTripCountsStamped.
// Output invariants: IterArgCarryClassified; nothing else changes.
// Errors: a TaskId carry rebound inside pl.parallel whose trip count is not literal is a
//   UserError ("statically-known trip count"); so is a nested carry of more than
//   kMaxNestedTaskIdSlots slots ("keeps at most").
// Why: deciding this needs an alias-equivalence walk (with a fixpoint through nested loops).
//   The L2 and HOST generators read the stamp instead: a carry becomes a C++ variable, an alias
//   of its init's text, or a slot array exactly as stamped, so the generators never compare
//   storage themselves.
#include <algorithm>
#include <unordered_map>

#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"
#include "pypto/transforms/passes.h"
#include "pypto/transforms/return_lineage.h"

namespace pypto::transforms {

using namespace ir;

namespace {

// The slots of a TaskId carried through nested pl.parallel loops (N*M...): each is a C++
// array element, and the task after the loops lists every one in its dependencies.
constexpr int64_t kMaxNestedTaskIdSlots = 4096;

struct Decision {
  std::vector<bool> rebind;
  std::vector<int64_t> array_size;   // 0 = none
};

class Classifier {
 public:
  Classifier(const Program& p, const Function& f) : program_(p), defs_(CollectVarDefs(f.body)) {}

  const Decision& decide(const ForStmt* loop) {
    auto it = decisions_.find(loop);
    if (it != decisions_.end()) return it->second;
    Decision d;
    const YieldStmt* y = trailing_yield(loop->body);
    for (size_t i = 0; i < loop->iter_args.size(); ++i) {
      const IterArg* ia = loop->iter_args[i].get();
      const ExprPtr next = (y && i < y->values.size()) ? y->values[i] : nullptr;
      bool same = next && same_storage(next, ia, 0);
      d.rebind.push_back(!same);
      d.array_size.push_back(0);
      if (same || !is_task_id(ia->type) || !ia->type->is<ScalarType>()) continue;
      if (loop->for_kind == ForKind::Parallel) {
        PYPTO_USER_CHECK(loop->trip_count >= 0, loop->span,
                         "pl.parallel loop carrying TaskId '" << ia->name
                             << "' needs a statically-known trip count (integer literal bounds)",
                         "write the pl.parallel bounds as integer literals or module-level constants");
        d.array_size.back() = parallel_slots(*loop, *ia, slots_of(as_var(next), 0));
      } else if (auto* v = as_var(next)) {
        d.array_size.back() = slots_of(v, 0);
      }
    }
    return decisions_[loop] = d;
  }

  const std::vector<const ForStmt*>& loops() const { return defs_.loops; }   // in pre-order

  // The slots of pl.parallel `loop`'s TaskId carry `ia` when each iteration yields `per` TaskIds
  // (0: one; M: an inner pl.parallel's or pl.range's array of M): iteration i fills slots
  // [i*M, (i+1)*M), so the tasks after the loop wait on every inner task of every iteration. A
  // loop of no iteration keeps M slots: its init, broadcast (the yield is never reached).
  static int64_t parallel_slots(const ForStmt& loop, const IterArg& ia, int64_t per) {
    if (per == 0) return loop.trip_count;
    PYPTO_USER_CHECK(loop.trip_count <= kMaxNestedTaskIdSlots / per, loop.span,
                     "pl.parallel loop carrying TaskId '" << ia.name << "' would keep " << loop.trip_count << " x "
                         << per << " TaskIds (each iteration ends with an inner loop's array of " << per
                         << "): a TaskId carried through nested pl.parallel loops keeps at most "
                         << kMaxNestedTaskIdSlots,
                     "join the inner loop's TaskIds into one before the outer loop carries them: "
                     "prev = pl.system.task_dummy(deps=[prev]) after the inner loop");
    return std::max<int64_t>(loop.trip_count, 1) * per;
  }

  // N when TaskId `v` names an array of N slots: the result of a loop carrying it as pl.slots(N),
  // or an if result one of whose branches yields such an array (the if result is then a phi
  // array of N; a scalar branch is broadcast into it). 0 for one TaskId.
  int64_t slots_of(const Var* v, int depth) {
    if (!v || depth > 256) return 0;
    const VarDef* def = defs_.find(v);
    if (def && def->kind == VarDef::ForReturn) return decide(def->loop).array_size[def->index];
    if (def && def->kind == VarDef::Assign) return slots_of(as_var(def->assign->value), depth + 1);   // a copy
    if (!def || def->kind != VarDef::IfReturn) return 0;
    const IfStmt* br = def->branch;
    const size_t k = def->index;
    int64_t n = 0;
    for (const StmtPtr& body : {br->then_body, br->else_body}) {
      const YieldStmt* y = body ? trailing_yield(body) : nullptr;
      const int64_t m = y && k < y->values.size() ? slots_of(as_var(y->values[k]), depth + 1) : 0;
      PYPTO_USER_CHECK(m == 0 || n == 0 || m == n, br->span,
                       "if result '" << v->name << "' is an array of " << n << " TaskIds in one branch and of " << m
                                     << " in the other",
                       "carry the TaskIds of pl.parallel loops with the same trip count through one name");
      if (m > 0) n = m;
    }
    return n;
  }

 private:
  // The argument a function call's result position `pos` aliases (its Out/InOut write-back).
  ExprPtr aliased_arg(const std::string& callee, const std::vector<ExprPtr>& args, size_t pos) {
    FunctionPtr f = program_.get(callee);
    if (!f) return nullptr;
    auto rets = ExplicitReturnedParamIndices(*f);
    if (pos >= rets.size() || rets[pos] < 0 || static_cast<size_t>(rets[pos]) >= args.size()) return nullptr;
    return args[rets[pos]];
  }

  bool value_same(const ExprPtr& value, const Var* target, size_t pos, int depth) {
    if (as_var(value)) return pos == 0 && same_storage(value, target, depth + 1);
    if (auto* c = value->as<Call>()) {
      if (c->is_op) {
        return pos == 0 && c->callee == "tensor.assemble" && !c->args.empty() && same_storage(c->args[0], target, depth + 1);
      }
      ExprPtr a = aliased_arg(c->callee, c->args, pos);
      return a && same_storage(a, target, depth + 1);
    }
    if (auto* s = value->as<Submit>()) {
      ExprPtr a = aliased_arg(s->callee, s->args, pos);
      return a && same_storage(a, target, depth + 1);
    }
    if (auto* g = value->as<TupleGetItem>()) {
      if (pos != 0) return false;
      if (auto* tv = as_var(g->tuple)) {
        const VarDef* def = defs_.find(tv);
        return def && def->kind == VarDef::Assign &&
               value_same(def->assign->value, target, static_cast<size_t>(g->index), depth + 1);
      }
      return value_same(g->tuple, target, static_cast<size_t>(g->index), depth + 1);
    }
    return false;
  }

  // Is `e` provably the same tensor/scalar value as `target` (an iter_arg)?
  bool same_storage(const ExprPtr& e, const Var* target, int depth) {
    if (depth > 256) return false;
    const Var* v = as_var(e);
    if (!v) return false;
    if (v == target) return true;
    const VarDef* def = defs_.find(v);
    if (!def) return false;
    if (def->kind == VarDef::Assign) return value_same(def->assign->value, target, 0, depth);
    if (def->kind == VarDef::ForReturn) {
      const ForStmt* inner = def->loop;
      size_t k = def->index;
      if (decide(inner).rebind[k]) return false;
      return same_storage(inner->iter_args[k]->init, target, depth + 1);
    }
    if (def->kind == VarDef::IfReturn) {
      const IfStmt* br = def->branch;
      size_t k = def->index;
      const YieldStmt* ya = trailing_yield(br->then_body);
      const YieldStmt* yb = br->else_body ? trailing_yield(br->else_body) : nullptr;
      return ya && yb && k < ya->values.size() && k < yb->values.size() && same_storage(ya->values[k], target, depth + 1) &&
             same_storage(yb->values[k], target, depth + 1);
    }
    return false;
  }

  const Program& program_;
  const VarDefs defs_;
  std::unordered_map<const ForStmt*, Decision> decisions_;
};

class Stamper : public IRMutator {
 public:
  explicit Stamper(Classifier& c) : classifier_(c) {}
  // Only loops change: other statements (and their expressions) are kept, not walked.
  StmtPtr mutate_(const AssignStmt*, const StmtPtr& self) override { return self; }
  StmtPtr mutate_(const EvalStmt*, const StmtPtr& self) override { return self; }
  StmtPtr mutate_(const ForStmt* op, const StmtPtr& self) override {
    const Decision& d = classifier_.decide(op);
    StmtPtr s = IRMutator::mutate_(op, self);
    auto* f = s->as<ForStmt>();
    std::vector<LoopCarry> carries;
    for (size_t i = 0; i < d.rebind.size(); ++i) carries.push_back(LoopCarry{d.rebind[i], d.array_size[i]});
    if (carries == f->carries) return s;
    return f->with_results(std::move(carries), f->trip_count);
  }

 private:
  Classifier& classifier_;
};

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    if (fn->type != FunctionType::Orchestration) continue;
    Classifier c(*program, *fn);
    for (auto* loop : c.loops()) c.decide(loop);   // errors surface in source order
    Stamper st(c);
    FunctionPtr nf = st.mutate_function(fn);
    if (nf != fn) out = out->with_function(nf);
  }
  return out;
}

}  // namespace

Pass ClassifyIterArgCarry() {
  return Pass{"ClassifyIterArgCarry", {IRProperty::ReturnParamsExplicit, IRProperty::StaticTripCountsStamped}, {IRProperty::IterArgCarryClassified}, Run, /*invalidated=*/{}};
}

}  // namespace pypto::transforms
