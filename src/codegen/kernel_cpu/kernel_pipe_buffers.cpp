// CPU kernel code generation of the pipe-buffer ops (spec anchor_features §8, Accept / no-op):
// no on-chip memory is reserved; the value is the address the buffer binds on the CPU, the
// Call::cpu_base ResolvePeerBufferBases stamps (its base, or its peer's; 0 for pl.AUTO).
//
//   buf = pl.reserve_buffer(name="ring", size=4096, base=256)    ->  static_cast<int32_t>(256)
//   buf = pl.reserve_buffer(name="ring", size=4096)              ->  static_cast<int32_t>(0)   (AUTO)
//   p = pl.import_peer_buffer(name="ring", peer_func="consumer") ->  the consumer's base for "ring"
//   pl.aiv_initialize_pipe(1, 512, buf, 0)                       ->  ((void)(buf), (void)(0), 0)
#include "kernel_ops_util.h"

#include "pypto/ir/attrs.h"

namespace pypto::codegen::kernel_cpu {

using namespace ir;

namespace {

// The address a pipe buffer binds on the CPU: its stamped cpu_base.
std::string BaseText(const Call& call) {
  PYPTO_CHECK(call.cpu_base >= 0, call.callee << " without cpu_base= (stamped by ResolvePeerBufferBases: "
                                                 "run the kernel pipeline first)");
  return "static_cast<int32_t>(" + std::to_string(call.cpu_base) + ")";
}

std::string InitializePipeText(KernelEmitter& em, const Call& call) {
  std::string text = "(";
  for (const auto& a : call.args) text += "(void)(" + em.scalar(a) + "), ";
  return text + "0 /* " + call.callee + ": no-op on the CPU */)";
}

}  // namespace

void AddPipeBufferScalarOps(std::map<std::string, ScalarOpPrinter>& ops) {
  for (const char* op : {"system.reserve_buffer", "system.import_peer_buffer"}) {
    ops[op] = [](KernelEmitter&, const Call& call) { return BaseText(call); };
  }
  for (const char* op : {"system.aic_initialize_pipe", "system.aiv_initialize_pipe"}) ops[op] = InitializePipeText;
}

}  // namespace pypto::codegen::kernel_cpu
