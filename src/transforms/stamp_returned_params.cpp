// StampReturnedParams
//
// What: stamps Function::returned_params on every function with a return: for each return
//   value, the index of the parameter it writes back, or -1. After NormalizeReturnOrder
//   (ReturnParamsExplicit) a value that writes back a tensor parameter *is* that parameter Var,
//   so the index is found by pointer. One convention is decided here too: an Orchestration
//   function's return value that is no parameter names its k-th Out/InOut parameter (a HOST
//   submit binds the chip-level function's k-th result to the argument passed there).
//
//     @pl.function(type=pl.FunctionType.InCore)              @pl.function(..., returned_params=[2])
//     def k(self, a, b, c: pl.Out[...]):             ==>     def k(self, a, b, c: pl.Out[...]):
//         ...; return c                                          ...; return c
//
// Input invariants: ReturnParamsExplicit.
// Output invariants: ReturnedParamsStamped; nothing else changes.
// Why: the L2 and HOST generators (and VerifyOrchestrationProgram / VerifyHostProgram) bind a
//   call's results to the arguments it writes back by reading this typed map, instead of
//   searching the callee's ReturnStmt for parameter Vars.
#include "pypto/ir/error.h"
#include "pypto/transforms/passes.h"
#include "pypto/transforms/return_lineage.h"

namespace pypto::transforms {

using namespace ir;

std::vector<int64_t> ReturnedParamsOf(const Function& fn) {
  std::vector<int64_t> out;
  if (!FindReturn(fn)) return out;
  std::vector<int64_t> written;   // Out/InOut parameters, in order
  for (size_t i = 0; i < fn.params.size(); ++i) {
    if (fn.param_directions[i] != ParamDirection::In) written.push_back(static_cast<int64_t>(i));
  }
  std::vector<int> rets = ExplicitReturnedParamIndices(fn);
  for (size_t k = 0; k < rets.size(); ++k) {
    int64_t p = rets[k];
    if (p < 0 && fn.type == FunctionType::Orchestration && k < written.size()) p = written[k];
    out.push_back(p);
  }
  return out;
}

namespace {

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    std::vector<int64_t> ps = ReturnedParamsOf(*fn);
    if (ps != fn->returned_params) out = out->with_function(fn->with_returned_params(std::move(ps)));
  }
  return out;
}

}  // namespace

Pass StampReturnedParams() {
  return Pass{"StampReturnedParams", {IRProperty::ReturnParamsExplicit}, {IRProperty::ReturnedParamsStamped}, Run,
              /*invalidated=*/{}};
}

}  // namespace pypto::transforms
