// UnrollLoops
//
// What: replaces every `pl.unroll` loop (ForKind::Unroll, literal bounds) by one copy of its body
//   per iteration value, in order. In each copy the loop variable is that constant, the loop's
//   carries are the previous copy's yielded values (the inits for the first copy), and every name
//   the body defines is a fresh Var. The loop's result Vars are bound to the last values:
//       for i in pl.unroll(0, 2, 1, init_values=(y,)):          y_1 = self.k(x, 0, y)
//           y_1 = self.k(x, i, y_it)                   ==>      y_2 = self.k(x, 1, y_1)
//           pl.yield_(y_1)                                       y_3 = y_2
//   Zero trips leave only the result bindings (`y_3 = y`). Nested unroll loops expand innermost
//   first. Runs over every function.
// Input invariants: the parser's (bounds of an Unroll loop are ConstInts, step != 0; a loop with
//   carries ends its body with a YieldStmt).
// Output invariants: no ForStmt has ForKind::Unroll.
// Why: anchor_features.md §12 — R unrolls before SSA; running first means no later pass and no
//   code generator ever sees an Unroll loop, and an orchestration gets N submissions, no C++ loop.
#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>

#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"
#include "pypto/ir/visitor.h"
#include "pypto/transforms/passes.h"

#include "defined_vars.h"

namespace pypto::transforms {

using namespace ir;

namespace {

// One copy of an unrolled body: `subst` replaces the loop var and the loop's iter_args; the
// body's own definitions get fresh Vars (same name and type), so copies never share a Var.
class BodyCopy : public IRMutator {
 public:
  BodyCopy(std::unordered_map<const Var*, ExprPtr> subst, const std::unordered_set<const Var*>& defs)
      : subst_(std::move(subst)), defs_(defs) {}

  ExprPtr mutate_(const Var* op, const ExprPtr& self) override {
    if (ExprPtr r = replaced(op)) return r;
    if (!defs_.count(op)) return self;   // defined outside the loop
    return Var::make(op->name, mutate_type(op->type), op->span);
  }
  ExprPtr mutate_(const IterArg* op, const ExprPtr& self) override {
    if (ExprPtr r = replaced(op)) return r;
    if (!defs_.count(op)) return self;
    return IterArg::make(op->name, mutate_type(op->type), mutate_expr(op->init), op->span);
  }

 private:
  ExprPtr replaced(const Var* op) const {
    auto s = subst_.find(op);
    if (s != subst_.end()) return s->second;
    auto r = var_remap_.find(op);
    return r != var_remap_.end() ? r->second.second : nullptr;
  }
  std::unordered_map<const Var*, ExprPtr> subst_;
  const std::unordered_set<const Var*>& defs_;
};

// Unrolling copies the body once per iteration: past this many statements the program is
// almost certainly a pl.range written as pl.unroll, and expanding it would exhaust memory.
constexpr int64_t kMaxUnrolledStatements = int64_t(1) << 20;

class Unroller : public IRMutator {
 public:
  Unroller() { statements_only_ = true; }   // rewrites loops only (BodyCopy substitutes)
  StmtPtr mutate_(const ForStmt* op, const StmtPtr& self) override {
    StmtPtr s = IRMutator::mutate_(op, self);   // nested unroll loops first
    auto* f = s->as<ForStmt>();
    if (!f || f->for_kind != ForKind::Unroll) return s;
    auto* a = f->start->as<ConstInt>();
    auto* b = f->stop->as<ConstInt>();
    auto* c = f->step->as<ConstInt>();
    PYPTO_USER_CHECK(a && b && c && c->value != 0, f->span, "pl.unroll requires compile-time constant integer bounds",
                     "use integer literals or module constants, e.g. pl.unroll(4)");
    DefinedVars dv;
    dv.visit_stmt(f->body);
    std::vector<ExprPtr> cur;
    for (auto& ia : f->iter_args) cur.push_back(ia->init);
    std::vector<StmtPtr> out;
    // Trip count in 128 bits: start, stop and step may be any int64 (v += step could overflow).
    const __int128 step = c->value;
    const __int128 span = step > 0 ? __int128(b->value) - a->value : __int128(a->value) - b->value;
    const __int128 mag = step > 0 ? step : -step;
    const __int128 trips = span <= 0 ? 0 : (span + mag - 1) / mag;
    const __int128 body = std::max<size_t>(1, flatten_stmts(f->body).size());
    PYPTO_USER_CHECK(trips * body <= kMaxUnrolledStatements, f->span,
                     "pl.unroll would copy its body (" << static_cast<uint64_t>(body) << " statements) "
                         << static_cast<uint64_t>(trips) << " times, more than the limit of "
                         << kMaxUnrolledStatements << " statements per unrolled loop",
                     "pl.unroll is for short loops: use pl.range (or pl.parallel) for long ones");
    for (int64_t k = 0; k < static_cast<int64_t>(trips); ++k) {
      const int64_t v = static_cast<int64_t>(a->value + k * step);
      std::unordered_map<const Var*, ExprPtr> subst{{f->loop_var.get(), ConstInt::make(v, DataType::INDEX, f->loop_var->span)}};
      for (size_t k = 0; k < f->iter_args.size(); ++k) subst[f->iter_args[k].get()] = cur[k];
      BodyCopy copy(std::move(subst), dv.defs);
      std::vector<StmtPtr> stmts = flatten_stmts(copy.mutate_stmt(f->body));
      if (!f->iter_args.empty()) {
        auto* y = stmts.empty() ? nullptr : stmts.back()->as<YieldStmt>();
        PYPTO_CHECK(y && y->values.size() == cur.size(), "UnrollLoops: a pl.unroll body with carries must end in a yield");
        cur = y->values;
        stmts.pop_back();
      }
      out.insert(out.end(), stmts.begin(), stmts.end());
    }
    for (size_t k = 0; k < f->return_vars.size(); ++k) out.push_back(AssignStmt::make(f->return_vars[k], cur[k], f->span));
    return make_seq(std::move(out), f->span);
  }
};

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    Unroller u;
    FunctionPtr nf = u.mutate_function(fn);
    if (nf != fn) out = out->with_function(nf);
  }
  return out;
}

}  // namespace

Pass UnrollLoops() { return Pass{"UnrollLoops", {}, {IRProperty::LoopsUnrolled}, Run, /*invalidated=*/{}}; }

}  // namespace pypto::transforms
