// The ops a CPU kernel body can evaluate, with the kind of value each gives: ONE table, read by
// VerifyKernelProgram (src/transforms/verify_kernel_program.cpp: what it accepts) and matched by
// the CPU kernel backend's handler tables (src/codegen/kernel_cpu: what it prints;
// codegen::KernelCpuPrintedOps() lists them, and tests/cpp/codegen/test_kernel_op_table.cpp and
// tests/python/test_kernel_op_table.py fail when the two differ). The op registry
// (op_registry.h) holds each op's arity and attrs.
//
//   Tile    a tile-valued op: every registered tile.* op except the ones listed below and the
//           accelerator-only ones (refused at IR build time)      tile.add, tile.load, ...
//   Tensor  writes a tensor parameter and yields it               tile.store, tile.mscatter, tensor.write
//   Scalar  a scalar expression                                   tile.read, tensor.dim, system.bar_v, ...
//   None    no kernel meaning on the CPU                          tensor.create, array.*, ...
//
// So a new tile op needs only its registry entry and a backend handler; a new tensor- or
// scalar-valued kernel op is added to the list in src/ir/ops/kernel_op_check.cpp and given a handler.
//   ir::KernelOpKindOf("tile.read") == ir::KernelOpKind::Scalar
#pragma once
#include <map>
#include <string>

namespace pypto::ir {

enum class KernelOpKind { None, Tile, Tensor, Scalar };

const char* to_string(KernelOpKind k);

// The kind of value op `op` gives in a CPU kernel body (None for an unknown op).
KernelOpKind KernelOpKindOf(const std::string& op);

// Every op with a kernel meaning, by name:  KernelOps().at("tile.store") == KernelOpKind::Tensor
std::map<std::string, KernelOpKind> KernelOps();

// An accelerator-only tile op of the reference that the CPU refuses at IR build time
// (src/ir/ops/tile_ops_matmul.cpp):  IsAcceleratorOnlyOp("tile.sort32")
bool IsAcceleratorOnlyOp(const std::string& op);

}  // namespace pypto::ir
