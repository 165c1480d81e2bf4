// Verifier of the orchestration code generator's preconditions. GenerateOrchestration runs it
// and refuses IR that fails it: an unprepared IR is a compiler bug (the pipeline was not
// run), reported as InternalError listing every violation.
//
//   auto problems = VerifyCodegenPreconditions(program, "orch_basic");
//   // {"call to kernel_add at orch.py:12: arg_directions not derived", ...}
#pragma once
#include <string>
#include <vector>

#include "pypto/ir/function.h"

namespace pypto::transforms {

// Checks, for Orchestration function `func_name` of `program`:
//   - every callee exists, ReturnParamsExplicit holds for it;
//   - every Call/Submit to a function has its arg directions derived (none Unset);
//   - tensor arguments of calls are Vars; the body is wrapped in a RuntimeScopeStmt;
//   - every ForStmt has one ForStmt::carries entry per iter_arg (ClassifyIterArgCarry).
std::vector<std::string> VerifyCodegenPreconditions(const ir::ProgramPtr& program, const std::string& func_name);

}  // namespace pypto::transforms
