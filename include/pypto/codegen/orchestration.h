// Orchestration code generation: an Orchestration function of a prepared Program -> C++
// against the PTO2 runtime API (runtime/include/pto_orchestration_api.h), following
// orchestration_codegen.txt.
//
//   ProgramPtr prepared = pypto::transforms::RunDefaultPipeline(program);
//   OrchestrationResult r = pypto::codegen::GenerateOrchestration(prepared, "orch_basic");
//   r.files["orchestration/orch_basic.cpp"] == r.code;
//   r.kernel_ids["kernel_add"] == 0;  r.core_types["kernel_add"] == ir::CoreType::AIV;
//
// It first runs transforms::VerifyOrchestrationFunction (transforms/verify_program.h): IR that
// fails VerifyCodegenPreconditions is an InternalError; a program the generator cannot express
// (an unsupported op, a callee that is not a kernel, ...) is a UserError with the offending
// statement's span.
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
  std::map<std::string, ir::CoreType> core_types;   // callee name -> AIC / AIV (kernels), MIXED (Groups)
  std::vector<ParamSignature> signature;
  // Per-kernel metadata (the reference's codegen result; Group functions are not keys):
  std::map<std::string, int> func_name_to_id;                        // = kernel_ids
  std::map<std::string, ir::CoreType> func_name_to_core_type;        // AIC / AIV (text only in kernel_config.py
                                                                     // and the Python result: "AIC" / "AIV")
  std::map<std::string, std::vector<std::string>> func_name_to_signature;   // "IN" / "OUT" / "INOUT" per tensor arg
};

// The text of kernel_config.py for a result (metadata only; the CPU runtime ignores it):
// RUNTIME_CONFIG, ORCHESTRATION and KERNELS (one dict per kernel, sorted by id).
std::string KernelConfigPy(const OrchestrationResult& r);

OrchestrationResult GenerateOrchestration(const ir::ProgramPtr& program, const std::string& func_name);

// The ops an orchestration body may assign (the L2 generator's op handlers), sorted:
// {"array.create", ..., "tensor.create", "tensor.dim", ...}; "tile.add" is not among them.
std::vector<std::string> OrchestrationOpNames();

// The C++ spelling of a Var name: the DSL name with characters C++ rejects replaced
// ("acc_1" -> "acc_1", "3d" -> "v3d"). Never used for identity.
std::string GetSSABaseName(const std::string& name);

// The file name (without ".cpp") of a function's generated source: the function's name, or
// for a name longer than 100 bytes (a file system takes 255), its first 100 bytes (cut at a
// UTF-8 character boundary) plus "_" and a 64-bit FNV-1a hash of the whole name in hex.
// Every writer of generated files names them by it: SourceStem("kernel_add") == "kernel_add".
std::string SourceStem(const std::string& name);

// True for a name generated C++ may not declare: a C++ keyword, a macro or library name the
// generated files see (NULL, errno, INT64_MIN, INFINITY, ...), or a runtime name they use.
// The one table of every code generator: IsReservedCppName("thread_local") == true.
bool IsReservedCppName(const std::string& name);

// `base` in a form C++ does not reserve for the implementation: runs of underscores made one,
// trailing ones dropped (a declarer's `_1` suffix must not make `__`), and a "v" before a
// leading underscore and capital ("__LINE__" -> "v_LINE", "_Pragma" -> "v_Pragma", "caf__" ->
// "caf", "__x" -> "_x"); other names unchanged. Every generator's declare step applies it.
std::string UnreservedCppBase(const std::string& base);

}  // namespace pypto::codegen
