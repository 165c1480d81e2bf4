// VerifyCodegenPreconditions (verifier.h): what orchestration codegen assumes of its input.
// The generator decides nothing about program meaning: which carries are variables or slot
// arrays (ForStmt::carries), which results write back which parameters (ReturnStmt order), how
// each TaskId is named and which compiler edges survive (Function::task_ids) are pass results
// read from the IR. What it still chooses itself is only presentation: C++ names, statement
// order within a task, blocks and `(void)` lines. These checks confirm the stamps are present.
#include <sstream>

#include "pypto/ir/error.h"
#include "pypto/ir/visitor.h"
#include "pypto/transforms/ir_property.h"
#include "pypto/transforms/verifier.h"

namespace pypto::transforms {

using namespace ir;

namespace {

struct ArgShapeChecker : IRVisitor {
  std::vector<std::string> out;
  const Program* program = nullptr;
  void check(const std::string& callee, const std::vector<ExprPtr>& args, const Span& span) {
    if (!program->get(callee)) {
      out.push_back("call to unknown function '" + callee + "'");
      return;
    }
    for (auto& a : args) {
      if (a->type->is<TensorType>() && !as_var(a)) {
        out.push_back("call to '" + callee + "' at line " + std::to_string(span.line) +
                      " has a tensor argument that is not a variable");
      }
    }
  }
  void visit_(const Call* op) override {
    if (!op->is_op) check(op->callee, op->args, op->span);
    IRVisitor::visit_(op);
  }
  void visit_(const Submit* op) override {
    check(op->callee, op->args, op->span);
    IRVisitor::visit_(op);
  }
};

}  // namespace

std::vector<std::string> VerifyCodegenPreconditions(const ProgramPtr& program, const std::string& func_name) {
  std::vector<std::string> out;
  FunctionPtr fn = program->get(func_name);
  if (!fn) return {"no function named '" + func_name + "'"};
  if (fn->type != FunctionType::Orchestration) return {"function '" + func_name + "' is not an Orchestration function"};
  // Properties the pipeline establishes, checked on a program holding just what codegen reads.
  for (IRProperty p : {IRProperty::ReturnParamsExplicit, IRProperty::CallDirectionsDerived,
                       IRProperty::RuntimeScopesMaterialized, IRProperty::IterArgCarryClassified,
                       IRProperty::TaskIdsResolved, IRProperty::ReturnedParamsStamped,
                       IRProperty::TaskStatementsCounted, IRProperty::AllocationBatchesStamped,
                       IRProperty::ArrayBackingsStamped, IRProperty::NonNegativeVarsStamped, IRProperty::CallOperandsStamped,
                       IRProperty::ScopeExitsStamped, IRProperty::CountedLoopsStamped}) {
    if (PropertyProven(p, program)) continue;   // the pipeline verified it on this very program
    for (auto& m : VerifyProperty(p, program)) out.push_back(std::string(to_string(p)) + ": " + m);
  }
  ArgShapeChecker c;
  c.program = program.get();
  c.visit_function(*fn);
  out.insert(out.end(), c.out.begin(), c.out.end());
  return out;
}

}  // namespace pypto::transforms
