// StampCountedLoops
//
// What: stamps ForStmt::counted on every loop of every function that the code generators must
//   print counted (Python's range: `n = pto2_range_count(a, b, s)` iterations, the variable
//   computed from the iteration number) instead of `for (int64_t i = a; i < b; i += s)`:
//     - a step known only at run time (its sign decides the direction);
//     - a constant step other than +-1 whose last `i += s` could pass INT64_MAX: the stop is
//       neither a literal with `stop + step` inside int64 nor a tensor extent (32-bit at chip
//       level) of the function's parameters, named directly or through a copy (`rows = M`).
//       for i in pl.range(lo, hi, 5): ...    ==>   for i in pl.range(lo, hi, 5, counted=True): ...
//       for i in pl.range(0, M, 16): ...     ==>   (unchanged: M is a tensor extent)
//   HOST functions have no 32-bit extents (their tensors are host arrays): only literals count.
// Input invariants: none (run after every pass that creates loops).
// Output invariants: CountedLoopsStamped; nothing else changes.
// Why: the choice decides whether a loop can wrap around at INT64_MAX (never ending) — a program
//   meaning, decided once here; the three generators (kernel, L2, HOST) print what it says.
#include <unordered_map>
#include <unordered_set>

#include "pypto/ir/mutator.h"
#include "pypto/ir/visitor.h"
#include "pypto/transforms/passes.h"

namespace pypto::transforms {

using namespace ir;

namespace {

// The Vars of `fn` that hold a tensor extent: its tensor parameters' dim symbols and the Vars
// assigned one of them (`rows = M`, what FoldTensorDims leaves of `rows = pl.tensor.dim(x, 0)`).
class ExtentVars : public IRVisitor {
 public:
  explicit ExtentVars(const Function& fn) {
    statements_only_ = true;
    if (fn.type == FunctionType::Orchestration && fn.level == Level::HOST) return;
    for (const VarPtr& p : fn.params) {
      if (auto* tt = p->type->as<TensorType>()) {
        for (const ExprPtr& d : tt->shape) {
          if (const Var* v = as_var(d)) extents_.insert(v);
        }
      }
    }
    if (fn.body) visit_stmt(fn.body);
  }
  bool holds(const Var* v) const { return extents_.count(v) != 0; }
  void visit_(const AssignStmt* op) override {
    // SSA and program order: a copy's source is classified before the copy.
    if (const Var* src = as_var(op->value); src && holds(src)) extents_.insert(op->var.get());
  }

 private:
  std::unordered_set<const Var*> extents_;
};

bool NeedsCount(const ForStmt& f, const ExtentVars& extents) {
  const auto* step = f.step->as<ConstInt>();
  if (!step) return true;
  if (step->value == 1 || step->value == -1) return false;
  int64_t stop = 0, past = 0;
  if (const auto* c = f.stop->as<ConstInt>()) stop = c->value;
  else if (const Var* v = as_var(f.stop); v && extents.holds(v)) stop = UINT32_MAX;
  else return true;
  return __builtin_add_overflow(stop, step->value, &past);
}

class Stamper : public IRMutator {
 public:
  explicit Stamper(const ExtentVars& extents) : extents_(extents) { statements_only_ = true; }
  StmtPtr mutate_(const ForStmt* op, const StmtPtr& self) override {
    StmtPtr s = IRMutator::mutate_(op, self);
    auto* f = s->as<ForStmt>();
    const bool counted = NeedsCount(*f, extents_);
    return counted == f->counted ? s : f->with_counted(counted);
  }

 private:
  const ExtentVars& extents_;
};

// Collects the loops whose stamp differs from NeedsCount (CountedLoopsStamped's check).
class StaleStamps : public IRVisitor {
 public:
  StaleStamps(const Function& fn, std::vector<std::string>* out) : extents_(fn), fn_(fn.name), out_(out) {
    statements_only_ = true;
    if (fn.body) visit_stmt(fn.body);
  }
  void visit_(const ForStmt* op) override {
    if (op->counted != NeedsCount(*op, extents_)) {
      out_->push_back("function '" + fn_ + "': for loop at line " + std::to_string(op->span.line) + " has counted=" +
                      (op->counted ? "True" : "False") + ", StampCountedLoops computes " + (op->counted ? "False" : "True"));
    }
    IRVisitor::visit_(op);
  }

 private:
  ExtentVars extents_;
  std::string fn_;
  std::vector<std::string>* out_;
};

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    if (!fn->body) continue;
    ExtentVars extents(*fn);
    Stamper st(extents);
    FunctionPtr nf = st.mutate_function(fn);
    if (nf != fn) out = out->with_function(nf);
  }
  return out;
}

}  // namespace

std::vector<std::string> StaleCountedLoops(const Program& program) {
  std::vector<std::string> out;
  for (const FunctionPtr& fn : program.functions) StaleStamps(*fn, &out);
  return out;
}

Pass StampCountedLoops() {
  return Pass{"StampCountedLoops", {}, {IRProperty::CountedLoopsStamped}, Run, /*invalidated=*/{}};
}

}  // namespace pypto::transforms
