// The kernel op table (pypto/ir/kernel_ops.h) is the one list of ops a CPU kernel may evaluate:
// VerifyKernelProgram accepts exactly its ops, and the backend's handler tables must print
// exactly the same ops with the same kind of value. Adding a handler without a table entry, or
// registering a tile op without a handler, fails here.
#include <gtest/gtest.h>

#include "pypto/codegen/kernel_cpu.h"
#include "pypto/ir/kernel_ops.h"
#include "pypto/ir/op_registry.h"

using pypto::ir::KernelOpKind;

TEST(KernelOpTable, TheBackendPrintsExactlyTheOpsTheVerifierAccepts) {
  const auto accepted = pypto::ir::KernelOps();
  const auto printed = pypto::codegen::KernelCpuPrintedOps();
  for (const auto& [op, kind] : accepted) {
    auto it = printed.find(op);
    EXPECT_TRUE(it != printed.end()) << op << " (" << to_string(kind) << ") is accepted but the backend has no handler";
    if (it != printed.end()) EXPECT_EQ(it->second, kind) << op;
  }
  for (const auto& [op, kind] : printed) {
    EXPECT_EQ(pypto::ir::KernelOpKindOf(op), kind) << op << " is printed as " << to_string(kind)
                                                   << " but the kernel op table says " << to_string(pypto::ir::KernelOpKindOf(op));
    EXPECT_NE(pypto::ir::OpRegistry::global().get(op), nullptr) << op << " is printed but not registered";
  }
  EXPECT_GT(accepted.size(), 100u);
}

TEST(KernelOpTable, KindsOfKnownOps) {
  using pypto::ir::KernelOpKindOf;
  EXPECT_EQ(KernelOpKindOf("tile.add"), KernelOpKind::Tile);
  EXPECT_EQ(KernelOpKindOf("tile.store"), KernelOpKind::Tensor);
  EXPECT_EQ(KernelOpKindOf("tensor.write"), KernelOpKind::Tensor);
  EXPECT_EQ(KernelOpKindOf("tile.read"), KernelOpKind::Scalar);
  EXPECT_EQ(KernelOpKindOf("system.import_peer_buffer"), KernelOpKind::Scalar);
  EXPECT_EQ(KernelOpKindOf("tensor.create"), KernelOpKind::None);
  EXPECT_EQ(KernelOpKindOf("tile.sort32"), KernelOpKind::None);   // accelerator-only: refused at build time
  EXPECT_EQ(KernelOpKindOf("tile.no_such_op"), KernelOpKind::None);
}
