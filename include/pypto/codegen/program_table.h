// The program table of a built L2 program library (program_table.cpp): what the library
// exports through libpto2's C ABI (runtime/include/pto2_c_api.h): the orchestration entry, its
// name, the kernel table (id, name, core type, function) and its size. Generated here like
// every other C++ file of a program; pypto.runtime.build writes it next to the orchestration
// and the kernels.
//
//   std::string text = pypto::codegen::GenerateProgramTable("main", {{"kernel_add", 0, ir::CoreType::AIV}});
//   // ... extern "C" const pto2_kernel_desc pypto_program_kernel_table[] = {
//   //     {0, "kernel_add", 1, reinterpret_cast<void*>(&pypto_kernel_kernel_add)},
//   // };
#pragma once
#include <string>
#include <vector>

#include "pypto/ir/enums.h"

namespace pypto::codegen {

// One kernel of the table: function pypto_kernel_<name>, its id in the orchestration code and
// its core type (AIC or AIV, the stamped Function::core_type).
struct ProgramTableKernel {
  std::string name;
  int id = 0;
  ir::CoreType core = ir::CoreType::Unknown;
};

// The C++ of program_table.cpp for orchestration entry `entry` (the C name the runtime reports)
// and `kernels`, in table order. Throws std::invalid_argument for a core type other than AIC /
// AIV.
std::string GenerateProgramTable(const std::string& entry, const std::vector<ProgramTableKernel>& kernels);

}  // namespace pypto::codegen
