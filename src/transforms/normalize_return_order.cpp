// NormalizeReturnOrder
//
// What: in every function, a return value that writes back a tensor parameter (traced by
//   ReturnedParamIndices through Var copies, tile.store, tensor.assemble, tensor.write, calls, tuple
//   elements, loop carries and if results) is replaced by that parameter Var itself:
//       t = pl.store(x, [0, 0], c)          t = pl.store(x, [0, 0], c)
//       return t                    ==>     return c
//   A value written inline in the return is bound to a Var first (its effect stays):
//       return pl.store(x, [0, 0], c)  ==>  c_1 = pl.store(x, [0, 0], c); return c
//   A kernel with one tensor return value that traces to no parameter returns its sole
//   Out/InOut tensor parameter, when it has exactly one (the only storage a kernel writes).
// Input invariants: none beyond a well-formed program (callees exist).
// Output invariants: ReturnParamsExplicit — ExplicitReturnedParamIndices(f) equals
//   ReturnedParamIndices(program, f) for every function f. Return types are unchanged (the
//   parameter has the returned tensor's type); return positions keep their order.
// Why: orchestration codegen maps a call's result i onto the Out/InOut argument it aliases.
//   With the parameter explicit in the callee's ReturnStmt that map is a lookup
//   (ExplicitReturnedParamIndices) instead of an interprocedural SSA walk inside codegen.
#include <unordered_map>

#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"
#include "pypto/transforms/passes.h"
#include "pypto/transforms/return_lineage.h"

namespace pypto::transforms {

using namespace ir;

namespace {

class ReturnRewriter : public IRMutator {
 public:
  // Only a statement changes: expressions are left unvisited (no walk of every call).
  // `hoisted`: bindings of the values written inline in the return (`return pl.store(...)`),
  // emitted just before it, so replacing the value by the parameter keeps its effect.
  ReturnRewriter(const ReturnStmt* target, std::vector<ExprPtr> values, std::vector<StmtPtr> hoisted)
      : target_(target), values_(std::move(values)), hoisted_(std::move(hoisted)) {
    statements_only_ = true;
  }
  StmtPtr mutate_(const ReturnStmt* op, const StmtPtr& self) override {
    if (op != target_) return IRMutator::mutate_(op, self);
    StmtPtr ret = ReturnStmt::make(values_, op->span);
    if (hoisted_.empty()) return ret;
    std::vector<StmtPtr> stmts = hoisted_;
    stmts.push_back(ret);
    return SeqStmts::make(std::move(stmts), op->span);
  }

 private:
  const ReturnStmt* target_;
  std::vector<ExprPtr> values_;
  std::vector<StmtPtr> hoisted_;
};

// The index of the only Out/InOut tensor parameter of `fn`, or -1.
int SoleWrittenTensorParam(const Function& fn) {
  int sole = -1, count = 0;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    if (fn.params[i]->type->is<TensorType>() && fn.param_directions[i] != ParamDirection::In) {
      sole = static_cast<int>(i);
      ++count;
    }
  }
  return count == 1 ? sole : -1;
}

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    const ReturnStmt* ret = FindReturn(*fn);
    if (!ret) continue;
    std::vector<int> traced = ReturnedParamIndices(*program, *fn);
    std::vector<ExprPtr> values = ret->values;
    std::vector<StmtPtr> hoisted;
    bool changed = false;
    if ((fn->is_kernel() || fn->type == FunctionType::Group) && values.size() == 1 && traced.size() == 1 && traced[0] < 0 &&
        values[0]->type->is<TensorType>()) {
      traced[0] = SoleWrittenTensorParam(*fn);
    }
    for (size_t i = 0; i < values.size() && i < traced.size(); ++i) {
      int p = traced[i];
      if (p < 0 || !fn->params[p]->type->is<TensorType>()) continue;
      if (values[i].get() == fn->params[p].get()) continue;
      if (!as_var(values[i])) {   // a call written in the return: bound first, not dropped
        VarPtr bound = Var::make(fn->params[p]->name, values[i]->type, values[i]->span);
        hoisted.push_back(AssignStmt::make(bound, values[i], values[i]->span));
      }
      values[i] = fn->params[p];
      changed = true;
    }
    if (!changed) continue;
    ReturnRewriter rw(ret, std::move(values), std::move(hoisted));
    out = out->with_function(rw.mutate_function(fn));
  }
  return out;
}

}  // namespace

Pass NormalizeReturnOrder() {
  return Pass{"NormalizeReturnOrder", {}, {IRProperty::ReturnParamsExplicit}, Run, /*invalidated=*/{}};
}

}  // namespace pypto::transforms
