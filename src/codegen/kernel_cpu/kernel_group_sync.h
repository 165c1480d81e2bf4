// Group synchronisation of CPU kernels: the AIC and AIV kernels of a Group run together as one
// mixed task, so a data dependency between them inside the Group body must be honoured with
// the runtime's group flags (pto2_group_signal / pto2_group_wait, pto2/kernel.h).
//
//   Group body:   c = self.mm(a, b, c)     # AIC, writes c        -> signals flag 0 at its end
//                 out = self.act(c, out)   # AIV, reads c         -> waits for flag 0 at its start
//
// For each Group, every pair of kernel calls (earlier i, later j, on different core types)
// whose tensor accesses conflict — i writes what j reads or writes, or i reads what j writes,
// through the Group's params (resolved like the kernel's param slots) — gets its own flag
// (0..7, in body order): i signals it after its body, j waits for it before its body.
#pragma once
#include <cstdint>
#include <vector>

#include "pypto/ir/function.h"

namespace pypto::codegen::kernel_cpu {

struct GroupSync {
  std::vector<uint32_t> waits;    // flags to wait for before the kernel body
  std::vector<uint32_t> signals;  // flags to signal after the kernel body
};

// The group flags of kernel `fn` (empty when no Group calls it, or it has no intra-group
// dependency). UserError when a Group needs more than 8 flags, or Groups calling the same
// kernel need different flags for it.
GroupSync GroupSyncOf(const ir::Program& program, const ir::Function& fn);

// The Group param a value of a Group body stands for (a param, a rebinding of one, or the
// result of a kernel call, i.e. the Out / InOut param it returns); null if none.
const ir::Var* ResolveGroupValue(const ir::Program& program, const ir::Function& group, const ir::ExprPtr& e, int depth = 0);

}  // namespace pypto::codegen::kernel_cpu
