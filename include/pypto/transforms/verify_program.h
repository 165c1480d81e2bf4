// VerifyProgram: every user-facing validity check of the orchestration (L2) and HOST code
// generators, run on the prepared program before the backend prints anything. A program the
// backend cannot express is refused here with a UserError at the offending node (the first
// one in statement order), so the code generators only print and raise InternalError for a
// broken precondition.
//
//   ProgramPtr prepared = pypto::transforms::RunDefaultPipeline(program);
//   pypto::transforms::VerifyOrchestrationFunction(prepared, "orch_basic");   // throws UserError
//   pypto::transforms::VerifyHostFunction(prepared, "host_main");
//
// GenerateOrchestration / GenerateHostOrchestration call these first, so users see the same
// messages whichever entry point they use. The passes VerifyOrchestrationProgram(),
// VerifyHostProgram() and VerifyKernelProgram() (passes.h) run them over every function of
// their kind. Checks by topic:
//   verify_orchestration_program.cpp  L2 entry, statements, ops, tasks, Groups, predicates, carries,
//                                     lifetimes (TaskIds, runtime-allocated outputs, in-place assemble)
//   orchestration_scope_model.h       the C++ block structure the lifetime checks reason about
//   verify_host_program.cpp           HOST entry, statements, next-level submits, TaskId arrays
//   verify_scalar_exprs.h             the scalar expressions both backends print
//   verify_kernel_program.cpp         CPU kernels: parameters, tiles, tensors, scalars, carries
//   verify_kernel_outputs.cpp         CPU kernels: every pl.Out parameter is stored to
#pragma once
#include <string>

#include "pypto/ir/function.h"

namespace pypto::transforms {

// Checks Orchestration function `func_name` of `program` (after RunDefaultPipeline) against
// what the L2 orchestration code generator can express. Throws ir::UserError on the first
// violation. Example: a tile op in an orchestration body ->
//   "operation 'tile.add' is not supported in an orchestration function"
void VerifyOrchestrationFunction(const ir::ProgramPtr& program, const std::string& func_name);

// Checks HOST-level Orchestration function `func_name` of `program` (after RunDefaultPipeline)
// against what the HOST code generator can express. Throws ir::UserError on the first
// violation. Example: submitting a kernel from HOST ->
//   "a HOST-level orchestration can only submit chip-level Orchestration functions; 'k' is InCore"
void VerifyHostFunction(const ir::ProgramPtr& program, const std::string& func_name);

// Checks kernel `kernel_name` (InCore / AIC / AIV) of `program` against what the CPU kernel
// code generator can express (verify_kernel_program.cpp). Throws ir::UserError on the first
// violation. GenerateKernelCpu calls it first. Example: a tile op over a scalar ->
//   "'n' is not a tile value here"
void VerifyKernelFunction(const ir::ProgramPtr& program, const std::string& kernel_name);

// Part of VerifyKernelFunction (verify_kernel_outputs.cpp): throws ir::UserError at a tensor
// parameter of kernel `fn` declared pl.Out that no store of the body writes ->
//   "kernel 'k' never stores to its pl.Out parameter 'c': ..."
void VerifyKernelOutParamsWritten(const ir::Program& program, const ir::Function& fn);

}  // namespace pypto::transforms
