// The kernel op table (pypto/ir/kernel_ops.h) and the checks built on it (declared in
// pypto/ir/op_registry.h). Every registered tile.* op has a kernel meaning (the
// accelerator-only ones already refuse at IR build time); the few tensor- and scalar-valued
// kernel ops are listed here; tensor-, system- and array-level ops otherwise belong to
// orchestration.
#include "pypto/ir/error.h"
#include "pypto/ir/kernel_ops.h"
#include "pypto/ir/op_registry.h"

namespace pypto::ir {

namespace {

// The kernel ops that are not tile-valued (and tile.* ops that are not tiles).
const std::map<std::string, KernelOpKind>& NonTileKernelOps() {
  static const std::map<std::string, KernelOpKind> kOps = {
      {"tile.store", KernelOpKind::Tensor},        // tile.store(tile, offsets, tensor)
      {"tile.mscatter", KernelOpKind::Tensor},     // tile.mscatter(src, idx, tensor)
      {"tensor.write", KernelOpKind::Tensor},      // tensor.write(tensor, indices, value) (anchor §11)
      {"tile.read", KernelOpKind::Scalar},         // an element of a tile
      {"tile.get_block_idx", KernelOpKind::Scalar},
      {"tile.get_block_num", KernelOpKind::Scalar},
      {"tile.get_subblock_idx", KernelOpKind::Scalar},
      {"tensor.dim", KernelOpKind::Scalar},        // a tensor parameter's run-time extent
      {"system.sync_src", KernelOpKind::Scalar},   // barriers: no-ops on the CPU
      {"system.sync_dst", KernelOpKind::Scalar},
      {"system.bar_v", KernelOpKind::Scalar},
      {"system.bar_m", KernelOpKind::Scalar},
      {"system.bar_all", KernelOpKind::Scalar},
      {"system.assert", KernelOpKind::Scalar},      // Python's assert: fails the run when false
      {"system.reserve_buffer", KernelOpKind::Scalar},      // pipe buffers (anchor §8): the base
      {"system.import_peer_buffer", KernelOpKind::Scalar},
      {"system.aic_initialize_pipe", KernelOpKind::Scalar},  // no-ops on the CPU
      {"system.aiv_initialize_pipe", KernelOpKind::Scalar},
  };
  return kOps;
}

}  // namespace

const char* to_string(KernelOpKind k) {
  switch (k) {
    case KernelOpKind::None: return "None";
    case KernelOpKind::Tile: return "Tile";
    case KernelOpKind::Tensor: return "Tensor";
    case KernelOpKind::Scalar: return "Scalar";
  }
  return "?";
}

KernelOpKind KernelOpKindOf(const std::string& op) {
  auto it = NonTileKernelOps().find(op);
  if (it != NonTileKernelOps().end()) return it->second;
  const bool tile_op = op.rfind("tile.", 0) == 0 && OpRegistry::global().get(op) && !IsAcceleratorOnlyOp(op);
  return tile_op ? KernelOpKind::Tile : KernelOpKind::None;
}

std::map<std::string, KernelOpKind> KernelOps() {
  std::map<std::string, KernelOpKind> out;
  for (const std::string& name : OpRegistry::global().names()) {
    if (KernelOpKind k = KernelOpKindOf(name); k != KernelOpKind::None) out[name] = k;
  }
  return out;
}

namespace ops {

void check_kernel_tile_op(const Call& call) {
  PYPTO_USER_CHECK(call.is_op, call.span,
                   "calls to other functions ('" << call.callee << "') are not supported inside a kernel",
                   "inline the callee's tile ops into the kernel");
  PYPTO_USER_CHECK(KernelOpKindOf(call.callee) == KernelOpKind::Tile, call.span,
                   "op '" << call.callee << "' is not supported by the CPU kernel backend",
                   "see docs/kernels.md for the tile ops kernels can use");
}

void check_kernel_tensor_op(const Call& call) {
  PYPTO_USER_CHECK(call.is_op && KernelOpKindOf(call.callee) == KernelOpKind::Tensor, call.span,
                   "op '" << call.callee << "' cannot be used inside a kernel on the CPU backend",
                   "kernels write tensors with pl.store(tile, offsets, tensor) or pl.tensor.write(t, indices, v)");
}

}  // namespace ops
}  // namespace pypto::ir
