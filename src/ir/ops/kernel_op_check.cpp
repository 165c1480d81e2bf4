// Which op calls a CPU kernel body may evaluate (declared in pypto/ir/op_registry.h). Every
// registered tile.* op has a kernel meaning (the accelerator-only ones already refuse at IR
// build time); tensor-, system- and array-level ops belong to orchestration.
#include "pypto/ir/error.h"
#include "pypto/ir/op_registry.h"

namespace pypto::ir::ops {

void check_kernel_tile_op(const Call& call) {
  PYPTO_USER_CHECK(call.is_op, call.span,
                   "calls to other functions ('" << call.callee << "') are not supported inside a kernel",
                   "inline the callee's tile ops into the kernel");
  const bool tile_op = call.callee.rfind("tile.", 0) == 0 && call.callee != "tile.store" &&
                       call.callee != "tile.get_block_idx" && call.callee != "tile.get_block_num";
  PYPTO_USER_CHECK(tile_op, call.span, "op '" << call.callee << "' is not supported by the CPU kernel backend",
                   "see docs/kernels.md for the tile ops kernels can use");
}

void check_kernel_tensor_op(const Call& call) {
  PYPTO_USER_CHECK(call.is_op && (call.callee == "tile.store" || call.callee == "tile.mscatter" ||
                                   call.callee == "tensor.write"),
                   call.span, "op '" << call.callee << "' cannot be used inside a kernel on the CPU backend",
                   "kernels write tensors with pl.store(tile, offsets, tensor) or pl.tensor.write(t, indices, v)");
}

}  // namespace pypto::ir::ops
