// NameNestedTensorCalls
//
// What: in Orchestration functions, a tensor-valued call written as an argument of another call
//   is bound to a fresh variable first (A-normal form for tensor operands):
//       o = pl.assemble(o, pl.create_tensor([4, 8], dtype=pl.FP32), [4, 0])
//   ==> create = pl.tensor.create([4, 8], dtype=pl.FP32)
//       o = pl.assemble(o, create, [4, 0])
//   Nested calls are bound innermost first, in argument order, right before the statement that
//   uses them (before the loop / branch for a loop bound, carry init or branch condition).
// Input invariants: kernel scopes are outlined (a kernel's nested tensor ops are left to
//   ConvertTensorToTileOps, which lowers them in place).
// Output invariants: every tensor-typed argument of a call or Submit in an Orchestration
//   function is not itself a call; the program means the same.
// Why: the later passes and the orchestration code generator name each task's tensor operands
//   (a task argument is a C++ Tensor variable, a view is a named slice); writing the call inline
//   is the same program as binding it to a name, so it compiles the same.
#include <string>
#include <utility>
#include <vector>

#include "pypto/ir/mutator.h"
#include "pypto/transforms/passes.h"

namespace pypto::transforms {

using namespace ir;

namespace {

class NameNested : public IRMutator {
 public:
  StmtPtr mutate_stmt(const StmtPtr& s) override {
    std::vector<StmtPtr> outer = std::exchange(hoisted_, {});
    StmtPtr r = IRMutator::mutate_stmt(s);
    std::vector<StmtPtr> mine = std::exchange(hoisted_, std::move(outer));
    if (mine.empty()) return r;
    mine.push_back(r);
    return SeqStmts::make(std::move(mine), s->span);
  }

  ExprPtr mutate_(const Call* op, const ExprPtr& self) override {
    bool nested = depth_ > 0;
    ++depth_;
    ExprPtr r = IRMutator::mutate_(op, self);
    --depth_;
    if (!nested || !r->type->is<TensorType>()) return r;
    // "tensor.create" -> "create"; a kernel call -> its name.
    std::string name = op->callee.substr(op->callee.rfind('.') + 1);
    auto var = Var::make(name, r->type, op->span);
    hoisted_.push_back(AssignStmt::make(var, r, op->span));
    return var;
  }

  ExprPtr mutate_(const Submit* op, const ExprPtr& self) override {
    ++depth_;
    ExprPtr r = IRMutator::mutate_(op, self);
    --depth_;
    return r;
  }

 private:
  int depth_ = 0;                  // > 0 while inside the arguments of a call or Submit
  std::vector<StmtPtr> hoisted_;   // bindings for the statement being rewritten, in order
};

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    if (fn->type != FunctionType::Orchestration) continue;
    NameNested n;
    FunctionPtr nf = n.mutate_function(fn);
    if (nf != fn) out = out->with_function(nf);
  }
  return out;
}

}  // namespace

Pass NameNestedTensorCalls() { return Pass{"NameNestedTensorCalls", {}, {IRProperty::TensorOperandsNamed}, Run, /*invalidated=*/{}}; }

}  // namespace pypto::transforms
