// Orchestration code generation: an Orchestration function of a prepared Program -> C++
// against the PTO2 runtime API (runtime/include/pto_orchestration_api.h), following
// orchestration_codegen.txt as a strict 1:1 translation.
//
//   ProgramPtr prepared = pypto::transforms::RunDefaultPipeline(program);
//   OrchestrationResult r = pypto::codegen::GenerateOrchestration(prepared, "orch_basic");
//   r.files["orchestration/orch_basic.cpp"] == r.code;
//   r.kernel_ids["kernel_add"] == 0;  r.core_types["kernel_add"] == "AIV";
//
// The input must satisfy VerifyCodegenPreconditions (transforms/verifier.h); otherwise this
// throws InternalError. A program the generator cannot express (an unsupported op, a callee
// that is not a kernel, ...) is a UserError with the offending statement's span.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "pypto/ir/function.h"

namespace pypto::codegen {

// One parameter of the generated entry, in declaration order.
struct ParamSignature {
  std::string name;
  std::string kind;                  // "tensor" or "scalar"
  std::string dtype;                 // DSL spelling: "FP32", "INT64", ...
  std::vector<std::string> shape;    // tensors: "16" or a dynamic symbol name ("M"); scalars: empty
  std::string direction;             // "In", "Out", "InOut" (scalars: "In")
  int slot = 0;                      // orch_args.tensor(slot) / orch_args.scalar(slot)
};

struct OrchestrationResult {
  std::string func_name;
  std::string code;                              // the orchestration C++ file
  std::map<std::string, std::string> files;      // "orchestration/<func>.cpp" -> code
  std::map<std::string, int> kernel_ids;         // kernel function name -> kernel id
  std::map<std::string, std::string> core_types; // callee name -> "AIC" / "AIV" / "MIXED"
  std::vector<ParamSignature> signature;
};

OrchestrationResult GenerateOrchestration(const ir::ProgramPtr& program, const std::string& func_name);

// Strips SSA / pass-pipeline suffixes from a Var name for C++ emission ("c__ssa_v3" -> "c",
// "acc_1" -> "acc"). Never used for identity.
std::string GetSSABaseName(const std::string& name);

}  // namespace pypto::codegen
