// Distributed HOST orchestration code generation: a HOST-level Orchestration function of a
// prepared Program -> C++ against the L3 runtime API (runtime/include/pto_l3_api.h).
//
//   ProgramPtr prepared = pypto::transforms::RunDefaultPipeline(program);
//   HostResult r = pypto::codegen::GenerateHostOrchestration(prepared, "host_main");
//   r.files["host/host_main.cpp"] == r.code;
//   r.target_ids["chip_add"] == 0;     // register_target(0, "chip_add", <its L2 entry>)
//
// Each `pl.submit(self.chip_orch, *args, deps=[...])` becomes
//
//   TaskArgs args_t0;  args_t0.add_tensor(ext_x);  args_t0.add_dep_wait(prev);
//   TaskHandle tid = submit_next_level(<target id of chip_orch>, args_t0);
//
// Target ids number the program's chip-level (non-HOST) Orchestration functions in definition
// order. The generated entry is `extern "C" void host_orchestration_entry(const
// ChipStorageTaskArgs&)`. Unsupported constructs are UserErrors with the statement's span.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "pypto/codegen/orchestration.h"
#include "pypto/ir/function.h"

namespace pypto::codegen {

struct HostResult {
  std::string func_name;
  std::string code;                          // the host C++ file
  std::map<std::string, std::string> files;  // "host/<func>.cpp" -> code
  std::map<std::string, int> target_ids;     // chip-level Orchestration function -> target id
  std::vector<ParamSignature> signature;     // the entry's parameters (as for L2 entries)
};

HostResult GenerateHostOrchestration(const ir::ProgramPtr& program, const std::string& func_name);

// The next-level target ids of a program: its non-HOST Orchestration functions, in order.
std::map<std::string, int> HostTargetIds(const ir::Program& program);

// One kernel a next-level target registers: its id in the target's L2 orchestration and its
// core type ("AIC" or "AIV").
struct HostGlueKernel {
  std::string name;
  int id = 0;
  ir::CoreType core = ir::CoreType::Unknown;   // AIC or AIV (printed as pto2::CoreType::AIC / AIV)
};

// One next-level target: the chip-level Orchestration function, its target id, its kernels.
struct HostGlueTarget {
  std::string name;
  int id = 0;
  std::vector<HostGlueKernel> kernels;
};

// The C++ of a built HOST program's glue file (host_runner.cpp): declares each target's L2
// entry (compiled with -Daicpu_orchestration_entry=l2_entry_<target>) and kernels, registers
// them in `extern "C" void pypto_host_register(pto2::L3Runtime*)` (also what MPI chip ranks
// call to serve), and exports pypto_host_run / pypto_host_last_tasks / pypto_host_release,
// the C entry points pypto.host calls. Throws std::invalid_argument for a core type other than
// AIC/AIV.
//
//   std::string glue = GenerateHostEntryGlue({{"chip_add", 0, {{"kernel_add", 0, "AIV"}}}});
//   // ... l3.register_target(0, "chip_add", &l2_entry_chip_add); ...
std::string GenerateHostEntryGlue(const std::vector<HostGlueTarget>& targets);

}  // namespace pypto::codegen
