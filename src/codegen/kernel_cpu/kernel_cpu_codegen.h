// CPU kernel code generation: an InCore / AIC / AIV function of a Program → C++ source of
// one function with the libpto2 kernel ABI, computing its tile ops on the CPU.
//
//   std::string cpp = pypto::codegen::GenerateKernelCpu(program, "kernel_add");
//   // extern "C" void pypto_kernel_kernel_add(PTO2KernelContext* ctx) { ... }
//
// The generated file includes only "pypto_kernel_prelude.h" (python/pypto/runtime/include_kernel)
// which includes libpto2's "pto2/kernel.h". Parameter binding: the i-th *tensor* param (in
// param order) is ctx->tensors[i]; the j-th *scalar* param is ctx->scalars[j] (floats bit-cast
// from the low 32 bits, as to_u64 stores them). Tiles are local arrays; see docs/kernels.md
// for the semantics of each op on the CPU. A strict 1:1 translation: no analysis beyond name
// binding. Unsupported constructs raise pypto::ir::UserError with the node's span.
#pragma once
#include <string>

#include "pypto/ir/function.h"

namespace pypto::codegen {

// C++ source of the kernel `kernel_name` (a function of type InCore, AIC or AIV).
// UserError if it is absent or not a kernel, or uses a construct the CPU backend lacks.
std::string GenerateKernelCpu(const ir::ProgramPtr& program, const std::string& kernel_name);

// The exported symbol of a kernel: "pypto_kernel_" + kernel_name.
std::string KernelCpuSymbol(const std::string& kernel_name);

// "AIC" when the kernel is AIC, or InCore with a tile in a cube memory space (Left, Right,
// Acc, Mat); "AIV" otherwise (spec: core type inference from the memory space).
std::string KernelCoreType(const ir::ProgramPtr& program, const std::string& kernel_name);

}  // namespace pypto::codegen
