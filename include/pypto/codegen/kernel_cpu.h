// CPU kernel code generation (public API of src/codegen/kernel_cpu): an InCore / AIC / AIV
// function of a prepared Program → C++ source of one function with the libpto2 kernel ABI,
// computing its tile ops on the CPU.
//
//   ProgramPtr prepared = pypto::transforms::RunDefaultPipeline(program);
//   std::string cpp = pypto::codegen::GenerateKernelCpu(prepared, "kernel_add");
//   // extern "C" void pypto_kernel_kernel_add(PTO2KernelContext* ctx) { ... }
//
// The generated file includes only "pypto_kernel_prelude.h" (python/pypto/runtime/include_kernel)
// which includes libpto2's "pto2/kernel.h". Parameter binding: param i is
// ctx->tensors[param_slots[i]] (a tensor) or ctx->scalars[param_slots[i]] (a scalar; floats
// bit-cast from the low 32 bits, as to_u64 stores them). Tiles are local arrays; see
// docs/kernels.md for the semantics of each op on the CPU. Facts about a kernel are pass results
// stamped on the IR by the kernel pipeline (Function::param_slots, Function::group_sync,
// ForStmt::inplace_carries, Call::shares_source_tile of tile.move, the `base` of
// system.import_peer_buffer); the backend reads them and
// looks at no other function of the program. Unsupported constructs are refused first by
// transforms::VerifyKernelFunction (a pypto::ir::UserError with the node's span).
#pragma once
#include <map>
#include <string>

#include "pypto/ir/function.h"
#include "pypto/ir/kernel_ops.h"

namespace pypto::codegen {

// C++ source of the kernel `kernel_name` (a function of type InCore, AIC or AIV).
// Runs transforms::VerifyKernelFunction first: UserError if it is absent or not a kernel, or
// uses a construct the CPU backend lacks. InternalError for a kernel whose param_slots are not
// stamped (run the kernel pipeline first).
std::string GenerateKernelCpu(const ir::ProgramPtr& program, const std::string& kernel_name);

// The ops the backend prints, by the kind of value each gives (its tile / tensor / scalar handler
// tables). It must equal ir::KernelOps(), the table VerifyKernelProgram accepts (tested):
//   KernelCpuPrintedOps().at("tile.read") == ir::KernelOpKind::Scalar
std::map<std::string, ir::KernelOpKind> KernelCpuPrintedOps();

// The exported symbol of a kernel: "pypto_kernel_" + kernel_name.
std::string KernelCpuSymbol(const std::string& kernel_name);

}  // namespace pypto::codegen
