// StampStaticTripCounts
//
// What: stamps ForStmt::trip_count on every loop of an Orchestration function whose start,
//   stop and step are integer literals (Python's len(range(start, stop, step))); loops with a
//   run-time bound keep -1.
//       for i in pl.parallel(0, 8, 2):      ==>   for i in pl.parallel(0, 8, 2, trip_count=4):
// Input invariants: none beyond a well-formed program.
// Output invariants: StaticTripCountsStamped; nothing else changes.
// Why: the trip count decides how many TaskId slots a pl.parallel carry needs
//   (ClassifyIterArgCarry), whether a phase fence pays off (ExpandManualPhaseFence) and the
//   verifiers' nested-loop checks; one pass computes it once instead of each of them.
#include "pypto/ir/mutator.h"
#include "pypto/transforms/passes.h"

namespace pypto::transforms {

using namespace ir;

int64_t StaticTripCount(const ForStmt& f) {
  auto* a = f.start->as<ConstInt>();
  auto* b = f.stop->as<ConstInt>();
  auto* c = f.step->as<ConstInt>();
  if (!a || !b || !c || c->value == 0) return -1;
  int64_t n = c->value > 0 ? (b->value - a->value + c->value - 1) / c->value : (a->value - b->value - c->value - 1) / -c->value;
  return n > 0 ? n : 0;
}

namespace {

class Stamper : public IRMutator {
 public:
  Stamper() { statements_only_ = true; }   // stamps loops only
  StmtPtr mutate_(const ForStmt* op, const StmtPtr& self) override {
    StmtPtr s = IRMutator::mutate_(op, self);
    auto* f = s->as<ForStmt>();
    const int64_t n = StaticTripCount(*f);
    if (n == f->trip_count) return s;
    return f->with_results(f->carries, n);
  }
};

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    if (fn->type != FunctionType::Orchestration) continue;
    Stamper st;
    FunctionPtr nf = st.mutate_function(fn);
    if (nf != fn) out = out->with_function(nf);
  }
  return out;
}

}  // namespace

Pass StampStaticTripCounts() {
  return Pass{"StampStaticTripCounts", {}, {IRProperty::StaticTripCountsStamped}, Run, /*invalidated=*/{}};
}

}  // namespace pypto::transforms
